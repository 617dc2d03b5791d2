#include "cli/bench.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

#include "cli/apply.h"
#include "cli/commands.h"
#include "cli/jobs.h"
#include "common/strings.h"

namespace allot::cli {

namespace {

constexpr char kBenchName[] = "allot-bench";
constexpr char kBenchShare[] = "bench";
constexpr char kBenchUnit[] = "ml.m5.large";

// An environment with no capacity, a quota-share queue on it and one share: every job stays
// RUNNABLE ("can never fit") and nothing is launched.
ClusterSpec BenchCluster() {
  ClusterSpec spec;
  spec.service_environments.push_back(
      {{"name", kBenchName},
       {"capacityLimits", Json::array({{{"capacityUnit", kBenchUnit}, {"maxCapacity", 0}}})}});
  spec.scheduling_policies.push_back({{"name", kBenchName}});
  spec.job_queues.push_back({{"name", kBenchName},
                             {"serviceEnvironment", kBenchName},
                             {"schedulingPolicy", kBenchName},
                             {"priority", 1}});
  spec.quota_shares.push_back(
      {{"name", kBenchShare},
       {"jobQueue", kBenchName},
       {"capacityLimits", Json::array({{{"capacityUnit", kBenchUnit}, {"maxCapacity", 1}}})},
       {"strategy", "RESERVE"}});
  return spec;
}

struct BenchOptions {
  std::string endpoint;
  int clients = 8;
  std::int64_t jobs = 1000;
  std::string queue;
  std::string share;
  std::string instance_type;
};

// Where the bench submits: the given queue (and share), else the allot-bench cluster it applies
// first; the instance type defaults to the first unit of the queue's environment.
struct BenchTarget {
  std::string queue;
  std::string share;
  std::string unit;
};

BenchTarget PrepareTarget(const BenchOptions& o, const ClientConfig& config) {
  BenchTarget target{o.queue, o.share, o.instance_type};
  Client setup(config);
  if (target.queue.empty()) {
    ApplySpec(setup, BenchCluster(), std::cout);
    target.queue = kBenchName;
    target.share = kBenchShare;
    if (target.unit.empty()) target.unit = kBenchUnit;
  }
  if (target.unit.empty()) {
    const Json q = setup.Call("DescribeJobQueues", {{"jobQueues", Json::array({target.queue})}});
    if (q.value("jobQueues", Json::array()).empty())
      throw CliError("job queue " + target.queue + " does not exist");
    const std::string env =
        q["jobQueues"][0]["serviceEnvironmentOrder"][0].value("serviceEnvironment", "");
    const Json e =
        setup.Call("DescribeServiceEnvironments", {{"serviceEnvironments", Json::array({env})}});
    target.unit =
        e.at("serviceEnvironments").at(0).at("capacityLimits").at(0).value("capacityUnit", "");
  }
  return target;
}

// The latency of each submit in microseconds (-1 where it failed), the first failure and the
// wall time of the whole run.
struct SubmitRun {
  std::vector<std::int64_t> latencies;
  std::string first_error;
  double seconds = 0;
};

// One keep-alive HTTP/1.1 connection on a blocking socket: a request goes out in one send(), the
// answer is read into a buffer the connection keeps. The load generator shares the machine with
// the server it measures, so its own cost per call matters; cpp-httplib's (header maps, a
// response object per call) was most of it. http:// only.
class RawConnection {
 public:
  explicit RawConnection(const Endpoint& endpoint) {
    const std::string authority = endpoint.scheme_host.substr(endpoint.scheme_host.find("://") + 3);
    const std::size_t colon = authority.rfind(':');
    const bool has_port =
        colon != std::string::npos && authority.find(']', colon) == std::string::npos;
    host_ = has_port ? authority.substr(0, colon) : authority;
    port_ = has_port ? authority.substr(colon + 1) : "80";
    if (host_.size() > 2 && host_.front() == '[' && host_.back() == ']') {
      host_ = host_.substr(1, host_.size() - 2);
    }
    in_.reserve(4096);
  }
  ~RawConnection() { Close(); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  // Sends `request` (a whole HTTP/1.1 request) and reads the answer: its status, its body into
  // `body`. Throws CliError when the exchange fails (the connection is closed then).
  int Exchange(std::string_view request, std::string* body) {
    if (fd_ < 0) Connect();
    for (std::size_t sent = 0; sent < request.size();) {
      const ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) Fail("send");
      sent += static_cast<std::size_t>(n);
    }
    std::size_t header_end = std::string::npos;
    while ((header_end = in_.find("\r\n\r\n")) == std::string::npos) Read();
    const std::string_view head(in_.data(), header_end);
    int status = 0;
    if (head.size() < 12 || head.substr(0, 5) != "HTTP/" ||
        std::from_chars(head.data() + 9, head.data() + 12, status).ec != std::errc()) {
      Fail("a malformed answer");
    }
    const std::optional<std::size_t> length = ContentLength(head);
    if (!length) Fail("an answer without Content-Length");
    const bool close = HeaderIs(head, "connection", "close");
    const std::size_t total = header_end + 4 + *length;
    while (in_.size() < total) Read();
    body->assign(in_, header_end + 4, *length);
    in_.erase(0, total);
    if (close) Close();
    return status;
  }

 private:
  void Connect() {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (::getaddrinfo(host_.c_str(), port_.c_str(), &hints, &found) != 0 || found == nullptr) {
      throw CliError("cannot resolve " + host_ + ":" + port_);
    }
    for (addrinfo* a = found; a != nullptr && fd_ < 0; a = a->ai_next) {
      fd_ = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd_ >= 0 && ::connect(fd_, a->ai_addr, a->ai_addrlen) != 0) Close();
    }
    ::freeaddrinfo(found);
    if (fd_ < 0) throw CliError("cannot connect to " + host_ + ":" + port_);
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    in_.clear();
  }

  void Read() {
    char chunk[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) Fail(n == 0 ? "the server closed the connection" : "recv");
      in_.append(chunk, static_cast<std::size_t>(n));
      return;
    }
  }

  // The value of header `name` (lowercase) in `head`, compared without case.
  static std::optional<std::string_view> Header(std::string_view head, std::string_view name) {
    for (std::size_t at = head.find("\r\n"); at != std::string_view::npos;) {
      const std::size_t start = at + 2;
      const std::size_t end = head.find("\r\n", start);
      const std::string_view line =
          head.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
      const std::size_t colon = line.find(':');
      if (colon != std::string_view::npos && EqualsIgnoreCase(line.substr(0, colon), name)) {
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
        return value;
      }
      at = end;
    }
    return std::nullopt;
  }
  static bool HeaderIs(std::string_view head, std::string_view name, std::string_view value) {
    const std::optional<std::string_view> v = Header(head, name);
    return v && EqualsIgnoreCase(*v, value);
  }
  static std::optional<std::size_t> ContentLength(std::string_view head) {
    const std::optional<std::string_view> v = Header(head, "content-length");
    std::size_t n = 0;
    if (!v || v->empty() ||
        std::from_chars(v->data(), v->data() + v->size(), n).ec != std::errc()) {
      return std::nullopt;
    }
    return n;
  }

  [[noreturn]] void Fail(const std::string& what) {
    Close();
    throw CliError("HTTP exchange with " + host_ + ":" + port_ + " failed: " + what);
  }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    in_.clear();
  }

  std::string host_;
  std::string port_;
  int fd_ = -1;
  std::string in_;
};

// One client thread's calls: a signed SubmitServiceJob per job name, over a RawConnection (or
// cpp-httplib for https://).
class Submitter {
 public:
  Submitter(const ClientConfig& config, const std::string& body_prefix,
            const std::string& body_suffix)
      : config_(config), prefix_(body_prefix), suffix_(body_suffix) {
    if (config.endpoint.scheme_host.rfind("http://", 0) == 0) {
      raw_.emplace(config.endpoint);
    } else {
      client_.emplace(config);
    }
    path_ = config.endpoint.base_path + "/v1/submitservicejob";
  }

  // Submits the job named `name`: the HTTP status and the answer's body.
  std::pair<int, std::string> Submit(std::string_view name) {
    body_.assign(prefix_).append(name).append(suffix_);
    if (client_) return client_->Post("submitservicejob", body_);
    api::HttpRequest req;
    req.method = "POST";
    req.path = path_;
    req.headers = {{"Host", config_.endpoint.host_header}, {"Content-Type", "application/json"}};
    req.body = body_;
    const Status s = api::Sign(req, config_.credentials, config_.region, "batch",
                               api::FormatAmzDate(WallClockMillis()));
    if (!s.ok()) throw CliError("cannot sign the request: " + s.message());
    wire_.assign("POST ").append(req.path).append(" HTTP/1.1\r\n");
    for (const auto& [name_, value] : req.headers) {
      wire_.append(name_).append(": ").append(value).append("\r\n");
    }
    wire_.append("Content-Length: ").append(std::to_string(body_.size())).append("\r\n\r\n");
    wire_.append(body_);
    std::pair<int, std::string> answer;
    answer.first = raw_->Exchange(wire_, &answer.second);
    return answer;
  }

 private:
  const ClientConfig& config_;
  const std::string& prefix_;
  const std::string& suffix_;
  std::string path_;
  std::optional<RawConnection> raw_;
  std::optional<Client> client_;
  std::string body_;
  std::string wire_;
};

// o.clients threads, one signed client each, submit o.jobs copies of `base` between them, each
// with its own jobName.
SubmitRun SubmitInParallel(const BenchOptions& o, const ClientConfig& config, const Json& base) {
  SubmitRun run;
  run.latencies.assign(static_cast<std::size_t>(o.jobs), -1);
  std::atomic<std::int64_t> next{0};
  std::mutex first_error_mu;
  auto note_error = [&](const std::string& error) {
    std::lock_guard<std::mutex> lock(first_error_mu);
    if (run.first_error.empty()) run.first_error = error;
  };
  // The body is the same for every job but its name: dumped once around a marker.
  constexpr std::string_view kMarker = "@allot-bench-job-name@";
  Json marked = base;
  marked["jobName"] = std::string(kMarker);
  const std::string dumped = marked.dump();
  const std::size_t at = dumped.find(kMarker);
  const std::string prefix = dumped.substr(0, at);
  const std::string suffix = dumped.substr(at + kMarker.size());
  const std::string name_prefix = "bench-" + std::to_string(WallClockMillis() % 100000000) + "-";
  auto worker = [&] {
    try {
      Submitter submitter(config, prefix, suffix);
      std::string name = name_prefix;
      for (std::int64_t i = next++; i < o.jobs; i = next++) {
        name.resize(name_prefix.size());
        name += std::to_string(i);
        const auto t0 = std::chrono::steady_clock::now();
        std::pair<int, std::string> answer;
        try {
          answer = submitter.Submit(name);
        } catch (const CliError& e) {
          answer = {0, e.what()};
        }
        const auto t1 = std::chrono::steady_clock::now();
        if (answer.first == 200) {
          run.latencies[static_cast<std::size_t>(i)] =
              std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count();
        } else {
          note_error(answer.first == 0 ? answer.second
                                       : ErrorFromAnswer(answer.first, answer.second).what());
        }
      }
    } catch (const std::exception& e) {
      note_error(e.what());
    }
  };
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(o.clients));
  for (int c = 0; c < o.clients; ++c) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

int RunBench(const BenchOptions& o) {
  if (o.clients < 1) throw CliError("--clients must be at least 1");
  if (o.jobs < 1) throw CliError("--jobs must be at least 1");
  const ClientConfig config = LoadClientConfig(o.endpoint);
  const BenchTarget target = PrepareTarget(o, config);
  SubmitOptions job;
  job.queue = target.queue;
  job.share = target.share;
  job.instance_type = target.unit;
  job.command = {"/bin/true"};
  const Json base = BuildSubmitRequest(job, "bench");

  std::cout << "bench: " << o.jobs << " SubmitServiceJob calls from " << o.clients << " clients to "
            << config.endpoint.url << " (queue " << target.queue
            << (target.share.empty() ? "" : ", share " + target.share) << ")" << std::endl;
  SubmitRun run = SubmitInParallel(o, config, base);

  std::vector<std::int64_t> ok;
  ok.reserve(run.latencies.size());
  for (std::int64_t l : run.latencies) {
    if (l >= 0) ok.push_back(l);
  }
  const auto submitted = static_cast<std::int64_t>(ok.size());
  if (submitted != o.jobs) {
    std::cout << "bench: " << (o.jobs - submitted) << " of " << o.jobs
              << " requests failed; the first: " << run.first_error << '\n';
  }
  if (o.queue.empty() && submitted > 0) {
    std::cout << "bench: the jobs stay RUNNABLE in queue " << kBenchName
              << " (its service environment has no capacity)\n";
  }
  std::cout << BenchLine(submitted, run.seconds, Summarize(ok)) << std::endl;
  return submitted == o.jobs ? 0 : 1;
}

}  // namespace

LatencySummary Summarize(std::vector<std::int64_t>& latencies_us) {
  LatencySummary s;
  if (latencies_us.empty()) return s;
  std::sort(latencies_us.begin(), latencies_us.end());
  auto rank = [&latencies_us](double q) {
    const auto n = static_cast<double>(latencies_us.size());
    auto idx = static_cast<std::size_t>(std::ceil(q * n));
    idx = std::clamp<std::size_t>(idx, 1, latencies_us.size()) - 1;
    return static_cast<double>(latencies_us[idx]) / 1000.0;
  };
  s.p50_ms = rank(0.50);
  s.p99_ms = rank(0.99);
  return s;
}

std::string BenchLine(std::int64_t jobs, double seconds, const LatencySummary& s) {
  char buf[160];
  const double rate = seconds > 0 ? static_cast<double>(jobs) / seconds : 0;
  std::snprintf(buf, sizeof(buf),
                "submitted %lld jobs in %.2f s: %.1f jobs/s, p50 %.2f ms, p99 %.2f ms",
                static_cast<long long>(jobs), seconds, rate, s.p50_ms, s.p99_ms);
  return buf;
}

void AddBenchCommand(CLI::App& app, Runner* run) {
  CLI::App* bench = app.add_subcommand("bench", "load generators");
  bench->require_subcommand(1);
  auto o = std::make_shared<BenchOptions>();
  CLI::App* sub = bench->add_subcommand(
      "submit", "submit many jobs from parallel signed clients and report jobs/s and latency");
  sub->add_option(
      "--endpoint", o->endpoint,
      "server URL (default: $AWS_ENDPOINT_URL_BATCH, else " + std::string(kDefaultEndpoint) + ")");
  sub->add_option("--clients", o->clients, "parallel clients (threads, one connection each)")
      ->capture_default_str();
  sub->add_option("--jobs", o->jobs, "jobs to submit in total")->capture_default_str();
  sub->add_option("--queue", o->queue,
                  "job queue (default: create allot-bench, whose environment has no capacity)");
  sub->add_option("--share", o->share, "quota share in --queue");
  sub->add_option("--instance-type", o->instance_type,
                  "instance type of each job (default: the first unit of the queue's environment)");
  sub->callback([o, run] { *run = [o] { return RunBench(*o); }; });
}

}  // namespace allot::cli
