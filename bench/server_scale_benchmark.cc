// Server scale benchmark (issue 9, section 3): the figures of a controller that holds many
// stored jobs, measured through the real controller in-process (no HTTP).
//
// 1. Fill: a fresh data directory (SQLite store, sandbox off) gets one service environment of
//    capacity 0 (nothing is ever launched), a quota-share queue with 4 shares and N jobs
//    submitted with Call("submitservicejob"), spread round robin over the shares; then the older
//    half is terminated (FAILED), the newer half stays RUNNABLE. Durability waits are batched
//    (a window of 1,000 calls), so the store's group commit writes many calls per transaction.
// 2. Restart, several times, each in a fresh process (this program again, `--phase restart`),
//    so that the memory figures are not blurred by what the filling process freed: the wall time
//    of Controller::Start, and until the batch that start submitted is durable; the records the
//    start wrote (a counting wrapper around the SQLite store) and the bytes it made the process
//    write (/proc/self/io write_bytes, including the WAL checkpoint when the store closes); the
//    resident memory and heap the controller holds, per stored job.
// 3. ListServiceJobs at N stored jobs, in the last restarted process: p50/p99 of the first page
//    (maxResults 100, the default) for each kind of filter, timed from Call until the answer is
//    serialized (reply.body.dump(), which the HTTP layer does too).
//
// Usage: server_scale_benchmark [--jobs N] [--dir PATH] [--restarts R] [--keep] [--reuse]
//   --jobs N      stored jobs (default 100000); the figures are at --jobs 1000000
//   --dir PATH    data directory (default: a new /tmp/allot-scale-XXXXXX); removed at the end
//                 unless --keep. An existing directory is refused unless --reuse, which skips
//                 the fill and measures the jobs it holds (its scale-meta.json gives N).
//   --restarts R  restarts measured (default 3)
// Run by `make bench` (scripts/run-benchmarks.sh) at 100k jobs; docs/benchmarks.md records it.

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "env/malloc.h"
#include "env/process.h"
#include "server/api_error.h"
#include "server/controller.h"
#include "server/log.h"
#include "server/wire_call.h"
#include "store/store.h"

namespace allot::bench {
namespace {

namespace fs = std::filesystem;
using server::Json;
using Clock = std::chrono::steady_clock;

constexpr char kUnit[] = "ml.m5.large";
constexpr char kQueue[] = "scale";
constexpr int kShares = 4;
constexpr std::size_t kWindow = 1000;  // calls in flight before the filler waits for durability

[[noreturn]] void Die(const std::string& message) {
  std::cerr << "server_scale_benchmark: " << message << std::endl;
  std::exit(1);
}

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct Flags {
  std::int64_t jobs = 100000;
  std::string dir;
  int restarts = 3;
  bool keep = false;
  bool reuse = false;
  std::string phase;  // "" (the driver) or "restart" (one measured start, in a child process)
  bool list = false;  // with --phase restart: also time ListServiceJobs
};

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--jobs") {
      f.jobs = std::stoll(value());
    } else if (a == "--dir") {
      f.dir = value();
    } else if (a == "--restarts") {
      f.restarts = std::stoi(value());
    } else if (a == "--keep") {
      f.keep = true;
    } else if (a == "--reuse") {
      f.reuse = true;
    } else if (a == "--phase") {
      f.phase = value();
    } else if (a == "--list") {
      f.list = true;
    } else if (a == "--help" || a == "-h") {
      std::cout << "usage: server_scale_benchmark [--jobs N] [--dir PATH] [--restarts R] [--keep] "
                   "[--reuse]\n";
      std::exit(0);
    } else {
      Die("unknown flag " + a);
    }
  }
  if (f.jobs < 2) Die("--jobs must be at least 2");
  if (f.restarts < 1) Die("--restarts must be at least 1");
  return f;
}

// The store the controller would open itself, with every written record counted.
class CountingStore : public store::Store {
 public:
  explicit CountingStore(std::unique_ptr<store::Store> inner) : inner_(std::move(inner)) {}
  void Submit(store::Batch batch, std::function<void(const Status&)> done) override {
    std::int64_t bytes = 0;
    for (const store::Op& op : batch.ops) {
      bytes += static_cast<std::int64_t>(op.key.size() + (op.value ? op.value->size() : 0));
      ++per_kind_[static_cast<int>(op.kind)];
    }
    records_ += static_cast<std::int64_t>(batch.ops.size());
    bytes_ += bytes;
    inner_->Submit(std::move(batch), std::move(done));
  }
  void Resume() override { inner_->Resume(); }
  Result<std::vector<store::Record>> Load(store::Kind kind) override { return inner_->Load(kind); }
  Result<std::vector<store::Record>> Scan(store::Kind kind) override { return inner_->Scan(kind); }
  Result<std::optional<std::string>> Get(store::Kind kind, std::string_view key) override {
    ++gets_;
    return inner_->Get(kind, key);
  }
  Result<std::vector<store::Record>> Range(store::Kind kind,
                                           const store::KeyRange& range) override {
    return inner_->Range(kind, range);
  }
  void Close() override { inner_->Close(); }

  std::int64_t records() const { return records_; }
  std::int64_t bytes() const { return bytes_; }
  std::int64_t gets() const { return gets_; }
  std::int64_t of_kind(store::Kind k) const { return per_kind_[static_cast<int>(k)]; }

 private:
  std::unique_ptr<store::Store> inner_;
  std::atomic<std::int64_t> records_{0};
  std::atomic<std::int64_t> bytes_{0};
  std::atomic<std::int64_t> gets_{0};
  // One counter per possible Kind value (a uint8_t): with 16, the history's kinds (20, 21) were
  // counted past the array's end, in whatever the heap held next.
  std::atomic<std::int64_t>
      per_kind_[std::numeric_limits<std::underlying_type_t<store::Kind>>::max() + 1] = {};
};

// A "Key:   value" field of a /proc file, in its own unit (kB for status, bytes for io).
std::int64_t ProcField(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1));
  }
  return -1;
}

std::int64_t FileSize(const fs::path& p) {
  std::error_code ec;
  const auto s = fs::file_size(p, ec);
  return ec ? 0 : static_cast<std::int64_t>(s);
}

server::Options MakeOptions(const std::string& dir) {
  server::Options o;
  o.data_dir = dir;
  o.sandbox = false;
  return o;
}

std::unique_ptr<server::Controller> StartController(const std::string& dir,
                                                    CountingStore** counter = nullptr) {
  auto inner = store::OpenSqliteStore({.path = dir + "/allot.db"});
  if (!inner.ok()) Die("open store: " + inner.status().ToString());
  auto counting = std::make_unique<CountingStore>(std::move(inner).value());
  if (counter != nullptr) *counter = counting.get();
  auto c = server::Controller::Start(MakeOptions(dir), std::move(counting));
  if (!c.ok()) Die("Controller::Start: " + c.status().ToString());
  return std::move(c).value();
}

void WaitDurable(const server::WireReply& reply) {
  if (!reply.durable.valid()) return;
  const Status s = reply.durable.get();
  if (!s.ok()) Die("store: " + s.ToString());
}

// The controller's answer to a call the benchmark expects to succeed; anything else ends it.
server::WireReply MustCall(server::Controller& c, const std::string& action, const Json& request) {
  Result<server::WireReply> reply = server::CallAction(c, action, request);
  if (!reply.ok()) Die(action + ": " + reply.status().ToString());
  return std::move(reply).value();
}

Json CallNow(server::Controller& c, const std::string& action, const Json& request) {
  try {
    server::WireReply reply = MustCall(c, action, request);
    WaitDurable(reply);
    return reply.body;
  } catch (const std::exception& e) {
    Die(action + ": " + e.what());
  }
}

std::string JobName(std::int64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "job-%08lld", static_cast<long long>(i));
  return buf;
}

std::string ShareName(std::int64_t i) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "s%lld", static_cast<long long>(i % kShares));
  return buf;
}

// The engine's live jobs: the waiting jobs of every share, from GetJobQueueSnapshot.
std::int64_t WaitingJobs(server::Controller& c) {
  const Json snap = CallNow(c, "getjobqueuesnapshot", {{"jobQueue", kQueue}});
  std::int64_t waiting = 0;
  for (const Json& s :
       snap["queueUtilization"]["quotaShareUtilization"]["topCapacityUtilization"]) {
    waiting += s.value("waitingJobs", std::int64_t{0});
  }
  return waiting;
}

// --- fill ---

void Fill(const std::string& dir, std::int64_t n) {
  std::unique_ptr<server::Controller> c = StartController(dir);
  CallNow(*c, "createserviceenvironment",
          {{"serviceEnvironmentName", "scale"},
           {"serviceEnvironmentType", "SAGEMAKER_TRAINING"},
           {"capacityLimits", {{{"capacityUnit", kUnit}, {"maxCapacity", 0}}}}});
  const Json policy = CallNow(
      *c, "createschedulingpolicy",
      {{"name", "scale"}, {"quotaSharePolicy", {{"idleResourceAssignmentStrategy", "FIFO"}}}});
  CallNow(*c, "createjobqueue",
          {{"jobQueueName", kQueue},
           {"priority", 1},
           {"schedulingPolicyArn", policy["arn"]},
           {"serviceEnvironmentOrder", {{{"order", 1}, {"serviceEnvironment", "scale"}}}}});
  for (int s = 0; s < kShares; ++s) {
    CallNow(*c, "createquotashare",
            {{"quotaShareName", ShareName(s)},
             {"jobQueue", kQueue},
             {"capacityLimits", {{{"capacityUnit", kUnit}, {"maxCapacity", 1}}}},
             {"resourceSharingConfiguration", {{"strategy", "LEND_AND_BORROW"}}},
             {"preemptionConfiguration", {{"inSharePreemption", "DISABLED"}}}});
  }

  std::vector<server::WireReply> window;
  window.reserve(kWindow);
  auto drain = [&window] {
    for (const auto& r : window) WaitDurable(r);
    window.clear();
  };
  auto call = [&](const std::string& action, const Json& request) -> Json {
    try {
      server::WireReply reply = MustCall(*c, action, request);
      Json body = reply.body;
      window.push_back(std::move(reply));
      if (window.size() >= kWindow) drain();
      return body;
    } catch (const std::exception& e) {
      Die(action + ": " + e.what());
    }
  };

  const std::int64_t terminated = n / 2;
  std::vector<std::string> ids;
  ids.reserve(static_cast<std::size_t>(terminated));
  const auto t0 = Clock::now();
  for (std::int64_t i = 0; i < n; ++i) {
    const std::string name = JobName(i);
    const Json payload = {
        {"TrainingJobName", name},
        {"AlgorithmSpecification",
         {{"ContainerEntrypoint", Json::array({"/bin/true"})}, {"TrainingInputMode", "File"}}},
        {"ResourceConfig", {{"InstanceType", kUnit}, {"InstanceCount", 1}}}};
    const Json body = call("submitservicejob", {{"jobName", name},
                                                {"jobQueue", kQueue},
                                                {"serviceJobType", "SAGEMAKER_TRAINING"},
                                                {"quotaShareName", ShareName(i)},
                                                {"serviceRequestPayload", payload.dump()}});
    if (i < terminated) ids.push_back(body["jobId"]);
    if ((i + 1) % 100000 == 0) {
      std::cout << "  fill: " << (i + 1) << " submitted, "
                << static_cast<double>(i + 1) / Seconds(t0, Clock::now()) << "/s" << std::endl;
    }
  }
  drain();
  const auto t1 = Clock::now();
  for (const std::string& id : ids) {
    call("terminateservicejob", {{"jobId", id}, {"reason", "server scale benchmark"}});
  }
  drain();
  const auto t2 = Clock::now();
  const std::int64_t waiting = WaitingJobs(*c);
  c.reset();  // Shutdown: the store commits and checkpoints its WAL
  const auto t3 = Clock::now();
  std::printf(
      "fill: %lld durable submissions in %.1f s (%.0f/s, window of %zu calls per wait), "
      "%lld terminations in %.1f s (%.0f/s), close %.1f s; %lld RUNNABLE + %lld FAILED "
      "over %d shares; allot.db %.1f MB\n",
      static_cast<long long>(n), Seconds(t0, t1), static_cast<double>(n) / Seconds(t0, t1), kWindow,
      static_cast<long long>(terminated), Seconds(t1, t2),
      static_cast<double>(terminated) / Seconds(t1, t2), Seconds(t2, t3),
      static_cast<long long>(waiting), static_cast<long long>(n - waiting), kShares,
      static_cast<double>(FileSize(dir + "/allot.db")) / 1e6);
  if (waiting != n - terminated) Die("expected " + std::to_string(n - terminated) + " RUNNABLE");
  std::ofstream(dir + "/scale-meta.json") << Json{{"jobs", n}, {"terminated", terminated}}.dump();
  std::fflush(stdout);
}

// --- one measured restart (child process) ---

struct Percentiles {
  double p50 = 0, p99 = 0;
  std::size_t samples = 0;
};

Percentiles Summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  auto rank = [&ms](double q) {
    auto idx = static_cast<std::size_t>(std::ceil(q * static_cast<double>(ms.size())));
    return ms[std::clamp<std::size_t>(idx, 1, ms.size()) - 1];
  };
  return {rank(0.5), rank(0.99), ms.size()};
}

void Emit(const std::string& key, double value) {
  std::printf("RESULT %s %.9g\n", key.c_str(), value);
}

void TimeLists(server::Controller& c, std::int64_t n) {
  // The middle job's createdAt, for the time filters (JOB_NAME takes no status).
  const Json middle = CallNow(
      c, "listservicejobs",
      {{"jobQueue", kQueue}, {"filters", {{{"name", "JOB_NAME"}, {"values", {JobName(n / 2)}}}}}});
  if (middle["jobSummaryList"].size() != 1) Die("the middle job is not listed by name");
  const std::string created =
      std::to_string(middle["jobSummaryList"][0]["createdAt"].get<std::int64_t>());
  auto filter = [](const std::string& name, const std::string& value) {
    return Json::array({{{"name", name}, {"values", {value}}}});
  };
  const std::string prefix = JobName(0).substr(0, JobName(0).size() - 2) + "*";
  struct Case {
    std::string label;
    Json request;
  };
  const std::vector<Case> cases = {
      {"status RUNNABLE", {{"jobStatus", "RUNNABLE"}}},
      {"status FAILED (older half)", {{"jobStatus", "FAILED"}}},
      {"QUOTA_SHARE_NAME s1 + RUNNABLE",
       {{"jobStatus", "RUNNABLE"}, {"filters", filter("QUOTA_SHARE_NAME", "s1")}}},
      {"QUOTA_SHARE_NAME s1 + FAILED",
       {{"jobStatus", "FAILED"}, {"filters", filter("QUOTA_SHARE_NAME", "s1")}}},
      {"JOB_NAME exact (middle job)", {{"filters", filter("JOB_NAME", JobName(n / 2))}}},
      {"JOB_NAME prefix " + prefix + " (100 oldest)", {{"filters", filter("JOB_NAME", prefix)}}},
      {"AFTER_CREATED_AT middle job", {{"filters", filter("AFTER_CREATED_AT", created)}}},
      {"BEFORE_CREATED_AT middle job", {{"filters", filter("BEFORE_CREATED_AT", created)}}},
      {"status SUCCEEDED (matches none)", {{"jobStatus", "SUCCEEDED"}}},
  };
  int index = 0;
  for (const Case& k : cases) {
    Json request = k.request;
    request["jobQueue"] = kQueue;
    std::vector<double> ms;
    std::size_t returned = 0;
    const auto begin = Clock::now();
    // At least 10 samples, then until 2 s or 200 samples.
    while (ms.size() < 10 || (ms.size() < 200 && Seconds(begin, Clock::now()) < 2.0)) {
      const auto t0 = Clock::now();
      server::WireReply reply = MustCall(c, "listservicejobs", request);
      WaitDurable(reply);
      const std::string text = reply.body.dump();
      const auto t1 = Clock::now();
      ms.push_back(Seconds(t0, t1) * 1e3);
      returned = reply.body["jobSummaryList"].size();
      if (text.empty()) Die("empty answer");
    }
    const Percentiles p = Summarize(ms);
    std::printf("LIST %d %s|%.3f|%.3f|%zu|%zu\n", index++, k.label.c_str(), p.p50, p.p99, p.samples,
                returned);
  }
}

void RestartPhase(const Flags& f) {
  const std::string db = f.dir + "/allot.db";
  const std::int64_t db0 = FileSize(db), wal0 = FileSize(db + "-wal");
  const std::int64_t rss0 = ProcField("/proc/self/status", "VmRSS") * 1024;
  const std::int64_t anon0 = ProcField("/proc/self/status", "RssAnon") * 1024;
  const std::int64_t heap0 = env::HeapInUse();
  const std::int64_t io0 = ProcField("/proc/self/io", "write_bytes");
  CountingStore* counter = nullptr;
  const auto t0 = Clock::now();
  std::unique_ptr<server::Controller> c = StartController(f.dir, &counter);
  const auto t1 = Clock::now();
  // A read answers once what the start submitted is durable (Controller::Finish).
  WaitDurable(MustCall(*c, "describejobqueues", {{"jobQueues", {kQueue}}}));
  const auto t2 = Clock::now();
  const std::int64_t rss1 = ProcField("/proc/self/status", "VmRSS") * 1024;
  const std::int64_t anon1 = ProcField("/proc/self/status", "RssAnon") * 1024;
  const std::int64_t heap1 = env::HeapInUse();
  const std::int64_t io1 = ProcField("/proc/self/io", "write_bytes");
  const std::int64_t wal1 = FileSize(db + "-wal");
  Emit("start_s", Seconds(t0, t1));
  Emit("durable_s", Seconds(t0, t2));
  Emit("records_written", static_cast<double>(counter->records()));
  Emit("job_records_written", static_cast<double>(counter->of_kind(store::Kind::kJob)));
  Emit("record_bytes_written", static_cast<double>(counter->bytes()));
  Emit("payload_gets", static_cast<double>(counter->gets()));
  Emit("rss_bytes", static_cast<double>(rss1 - rss0));
  Emit("anon_bytes", static_cast<double>(anon1 - anon0));
  Emit("heap_bytes", static_cast<double>(heap1 - heap0));
  Emit("live_jobs", static_cast<double>(WaitingJobs(*c)));
  Emit("io_write_bytes_durable", static_cast<double>(io1 - io0));
  Emit("wal_growth", static_cast<double>(wal1 - wal0));
  if (f.list) TimeLists(*c, f.jobs);
  c.reset();
  const std::int64_t io2 = ProcField("/proc/self/io", "write_bytes");
  Emit("io_write_bytes_closed", static_cast<double>(io2 - io0));
  Emit("db_growth", static_cast<double>(FileSize(db) - db0));
  std::fflush(stdout);
}

// --- driver ---

// Every job record of the store, key -> hash of its value (read with the controller stopped).
std::map<std::string, std::size_t> JobRecordHashes(const std::string& dir) {
  auto st = store::OpenSqliteStore({.path = dir + "/allot.db"});
  if (!st.ok()) Die("open store: " + st.status().ToString());
  auto records = st.value()->Load(store::Kind::kJob);
  if (!records.ok()) Die("load: " + records.status().ToString());
  std::map<std::string, std::size_t> out;
  for (const store::Record& r : records.value()) out[r.key] = std::hash<std::string>{}(r.value);
  st.value()->Close();
  return out;
}

// The job records whose value differs from `before`, and of the first 1,000 of them, how many
// differ only in runnableSince.
std::pair<std::int64_t, std::pair<std::int64_t, std::int64_t>> ChangedRecords(
    const std::string& dir, const std::map<std::string, std::size_t>& before,
    const std::map<std::string, std::string>& sample_before) {
  auto st = store::OpenSqliteStore({.path = dir + "/allot.db"});
  if (!st.ok()) Die("open store: " + st.status().ToString());
  auto records = st.value()->Load(store::Kind::kJob);
  if (!records.ok()) Die("load: " + records.status().ToString());
  std::int64_t changed = 0, sampled = 0, only_runnable_since = 0;
  for (const store::Record& r : records.value()) {
    auto it = before.find(r.key);
    if (it != before.end() && it->second == std::hash<std::string>{}(r.value)) continue;
    ++changed;
    auto old = sample_before.find(r.key);
    if (old == sample_before.end()) continue;
    ++sampled;
    Json a = Json::parse(old->second), b = Json::parse(r.value);
    a.erase("runnable");  // the stored record's runnableSince (src/server/job_codec.cc)
    b.erase("runnable");
    if (a == b) ++only_runnable_since;
  }
  st.value()->Close();
  return {changed, {sampled, only_runnable_since}};
}

// The values of the first 1,000 job records by key (for ChangedRecords' sample).
std::map<std::string, std::string> SampleRecords(const std::string& dir) {
  auto st = store::OpenSqliteStore({.path = dir + "/allot.db"});
  if (!st.ok()) Die("open store: " + st.status().ToString());
  auto records = st.value()->Load(store::Kind::kJob);
  if (!records.ok()) Die("load: " + records.status().ToString());
  std::map<std::string, std::string> out;
  for (const store::Record& r : records.value()) {
    if (out.size() >= 1000) break;
    if (r.value.find("\"RUNNABLE\"") != std::string::npos) out[r.key] = r.value;
  }
  st.value()->Close();
  return out;
}

struct RunResult {
  std::map<std::string, double> values;
  std::vector<std::string> lists;
};

RunResult RunChild(const Flags& f, bool list) {
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::string cmd = "'" + self + "' --phase restart --dir '" + f.dir + "' --jobs " +
                          std::to_string(f.jobs) + (list ? " --list" : "");
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) Die("cannot run " + cmd);
  RunResult r;
  char buf[4096];
  while (std::fgets(buf, sizeof(buf), p) != nullptr) {
    std::string line(buf);
    if (!line.empty() && line.back() == '\n') line.pop_back();
    std::istringstream in(line);
    std::string tag;
    in >> tag;
    if (tag == "RESULT") {
      std::string key;
      double v = 0;
      in >> key >> v;
      r.values[key] = v;
    } else if (tag == "LIST") {
      r.lists.push_back(line.substr(line.find(' ', 5) + 1));
    } else {
      std::cout << line << '\n';
    }
  }
  if (::pclose(p) != 0) Die("the restart process failed: " + cmd);
  return r;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

int Drive(Flags f) {
  bool created = false;
  if (f.dir.empty()) {
    char tmpl[] = "/tmp/allot-scale-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) Die("mkdtemp failed");
    f.dir = tmpl;
    created = true;
  } else if (fs::exists(f.dir + "/allot.db")) {
    if (!f.reuse) Die(f.dir + " already holds a store; pass --reuse to measure it again");
    std::ifstream meta(f.dir + "/scale-meta.json");
    const Json m = Json::parse(meta, nullptr, false);
    if (m.is_discarded() || !m.contains("jobs")) Die(f.dir + "/scale-meta.json is missing");
    f.jobs = m["jobs"];
  } else {
    fs::create_directories(f.dir);
    created = true;
  }
  std::printf(
      "server scale benchmark: %lld stored jobs (%lld RUNNABLE, %lld FAILED), data %s, "
      "%ld cores, %d restarts\n",
      static_cast<long long>(f.jobs), static_cast<long long>(f.jobs - f.jobs / 2),
      static_cast<long long>(f.jobs / 2), f.dir.c_str(), ::sysconf(_SC_NPROCESSORS_ONLN),
      f.restarts);
  std::fflush(stdout);
  if (created || !f.reuse) Fill(f.dir, f.jobs);

  const std::map<std::string, std::size_t> before = JobRecordHashes(f.dir);
  const std::map<std::string, std::string> sample = SampleRecords(f.dir);
  env::ReleaseFreeMemory();
  std::vector<RunResult> runs;
  for (int r = 0; r < f.restarts; ++r) {
    runs.push_back(RunChild(f, r == f.restarts - 1));
    std::printf("  restart %d: Start %.2f s, durable %.2f s, %lld records written\n", r + 1,
                runs.back().values["start_s"], runs.back().values["durable_s"],
                static_cast<long long>(runs.back().values["records_written"]));
    std::fflush(stdout);
  }
  const auto [changed, sampled] = ChangedRecords(f.dir, before, sample);
  auto all = [&runs](const std::string& key) {
    std::vector<double> v;
    for (auto& r : runs) v.push_back(r.values[key]);
    return v;
  };
  const double n = static_cast<double>(f.jobs);
  const auto start = all("start_s");
  const auto durable = all("durable_s");
  const double live = Median(all("live_jobs"));
  std::printf(
      "restart, Start() returned: best %.2f s, median %.2f s over %d runs "
      "[target: <= 10 s at 1M stored jobs]\n",
      *std::min_element(start.begin(), start.end()), Median(start), f.restarts);
  std::printf(
      "restart, until the start's writes are durable: best %.2f s, median %.2f s "
      "[target: <= 10 s at 1M stored jobs]\n",
      *std::min_element(durable.begin(), durable.end()), Median(durable));
  std::printf(
      "records written by a start: median %.0f (%.0f job records, %.1f MB of keys and "
      "values) of %.0f stored, with no call between the stop and the start "
      "[target: 0, a start writes no record that did not change]\n",
      Median(all("records_written")), Median(all("job_records_written")),
      Median(all("record_bytes_written")) / 1e6, n);
  std::printf(
      "job records whose stored value differs after the %d restarts: %lld; of %lld RUNNABLE "
      "ones compared in full, %lld differ only in runnableSince (reset to the "
      "restart time)\n",
      f.restarts, static_cast<long long>(changed), static_cast<long long>(sampled.first),
      static_cast<long long>(sampled.second));
  std::printf(
      "bytes written by a start: median %.1f MB until durable, %.1f MB with the WAL "
      "checkpoint at close (/proc/self/io write_bytes); WAL grew %.1f MB "
      "[target: only changed records]\n",
      Median(all("io_write_bytes_durable")) / 1e6, Median(all("io_write_bytes_closed")) / 1e6,
      Median(all("wal_growth")) / 1e6);
  std::printf("payload reads by a start: median %.0f (one per live job)\n",
              Median(all("payload_gets")));
  const double heap = Median(all("heap_bytes"));
  const double engine_own = 430.0 * live;  // BM_BytesPerWaitingJob, docs/benchmarks.md
  std::printf(
      "memory of the restarted controller per stored job: RSS %.0f B (anonymous %.0f B), "
      "heap %.0f B; the engine holds %.0f live jobs\n",
      Median(all("rss_bytes")) / n, Median(all("anon_bytes")) / n, heap / n, live);
  std::printf(
      "memory beyond the engine's own (heap minus 430 B per live job): %.0f B per stored "
      "job [target: <= 1024 B]\n",
      (heap - engine_own) / n);
  std::printf(
      "ListServiceJobs at %lld stored jobs, first page (maxResults 100), p50 / p99 "
      "[target: p99 <= 5 ms at 1M for any filter]:\n",
      static_cast<long long>(f.jobs));
  for (const std::string& l : runs.back().lists) {
    std::vector<std::string> parts;
    std::stringstream ss(l);
    for (std::string part; std::getline(ss, part, '|');) parts.push_back(part);
    if (parts.size() != 5) continue;
    std::printf("  %-46s p50 %8.2f ms  p99 %8.2f ms  (%s samples, %s jobs returned)\n",
                parts[0].c_str(), std::stod(parts[1]), std::stod(parts[2]), parts[3].c_str(),
                parts[4].c_str());
  }
  std::fflush(stdout);
  if (created && !f.keep) {
    std::error_code ec;
    fs::remove_all(f.dir, ec);
  } else {
    std::printf("data directory kept: %s\n", f.dir.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace allot::bench

int main(int argc, char** argv) {
  using namespace allot;
  // As `allot server` does.
  if (Status prepared = env::PrepareServerMalloc(argv); !prepared.ok()) {
    bench::Die(prepared.ToString());
  }
  bench::Flags f = bench::ParseFlags(argc, argv);
  if (!server::log::Configure("warn", "text").ok()) bench::Die("log configuration refused");
  if (f.phase == "restart") {
    if (f.dir.empty()) bench::Die("--phase restart needs --dir");
    bench::RestartPhase(f);
    return 0;
  }
  if (!f.phase.empty()) bench::Die("unknown --phase " + f.phase);
  return bench::Drive(f);
}
