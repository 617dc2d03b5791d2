#include "cli/bench.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <mutex>
#include <numeric>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "cli/apply.h"
#include "cli/bench_connections.h"
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
  int threads = 1;  // 0: one per client
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

// One client thread's calls: a signed SubmitServiceJob per job name, over a RawConnection (or
// cpp-httplib for https://). A polling thread uses one only to sign its connections' requests
// (Wire).
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
    if (client_) {
      body_.assign(prefix_).append(name).append(suffix_);
      return client_->Post("submitservicejob", body_);
    }
    std::pair<int, std::string> answer;
    answer.first = raw_->Exchange(Wire(name), &answer.second);
    return answer;
  }

  // The signed HTTP/1.1 request that submits the job named `name` (http:// only).
  const std::string& Wire(std::string_view name) {
    body_.assign(prefix_).append(name).append(suffix_);
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
    return wire_;
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

// How many threads drive the clients' connections with poll(): none (a thread per client) for
// --threads 0 or an https:// endpoint, else --threads, at most one per client.
int PolledThreads(const BenchOptions& o, const ClientConfig& config) {
  if (o.threads <= 0 || config.endpoint.scheme_host.rfind("http://", 0) != 0) return 0;
  return std::min(o.threads, o.clients);
}

// What the clients of one run share: the job numbers they take in turn, the request body around
// the job's name, and what they measured.
struct SubmitShared {
  SubmitShared(const BenchOptions& options, const ClientConfig& client_config, const Json& base)
      : o(options), config(client_config) {
    run.latencies.assign(static_cast<std::size_t>(o.jobs), -1);
    // The body is the same for every job but its name: dumped once around a marker.
    constexpr std::string_view kMarker = "@allot-bench-job-name@";
    Json marked = base;
    marked["jobName"] = std::string(kMarker);
    const std::string dumped = marked.dump();
    const std::size_t at = dumped.find(kMarker);
    prefix = dumped.substr(0, at);
    suffix = dumped.substr(at + kMarker.size());
    name_prefix = "bench-" + std::to_string(WallClockMillis() % 100000000) + "-";
  }

  // The next job's number and name, or false when all are taken.
  bool Next(std::int64_t* job, std::string* name) {
    *job = next++;
    if (*job >= o.jobs) return false;
    name->assign(name_prefix).append(std::to_string(*job));
    return true;
  }

  void NoteError(const std::string& error) {
    std::lock_guard<std::mutex> lock(mu);
    if (run.first_error.empty()) run.first_error = error;
  }

  void Record(std::int64_t job, std::chrono::steady_clock::time_point t0, int status,
              const std::string& body) {
    if (status != 200) return NoteError(status == 0 ? body : ErrorFromAnswer(status, body).what());
    run.latencies[static_cast<std::size_t>(job)] =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
            .count();
  }

  const BenchOptions& o;
  const ClientConfig& config;
  std::string prefix;
  std::string suffix;
  std::string name_prefix;
  std::atomic<std::int64_t> next{0};
  std::mutex mu;
  SubmitRun run;  // latencies: each job's own slot; first_error: guarded by mu
};

// A client with a thread of its own, blocked on its connection while its call is in flight.
void ClientThread(SubmitShared& shared) {
  try {
    Submitter submitter(shared.config, shared.prefix, shared.suffix);
    std::int64_t job = 0;
    std::string name;
    while (shared.Next(&job, &name)) {
      const auto t0 = std::chrono::steady_clock::now();
      std::pair<int, std::string> answer;
      try {
        answer = submitter.Submit(name);
      } catch (const CliError& e) {
        answer = {0, e.what()};
      }
      shared.Record(job, t0, answer.first, answer.second);
    }
  } catch (const std::exception& e) {
    shared.NoteError(e.what());
  }
}

// Thread t of `drivers`: drives the connections of clients t, t + drivers, ... with poll().
void DriverThread(SubmitShared& shared, int t, int drivers) {
  try {
    const int count = (shared.o.clients - t + drivers - 1) / drivers;
    struct Client {
      std::int64_t job = -1;
      std::chrono::steady_clock::time_point t0;
    };
    std::vector<Client> clients(static_cast<std::size_t>(count));
    Submitter signer(shared.config, shared.prefix, shared.suffix);  // each request is copied out
    std::string name;
    PolledConnections conns(shared.config.endpoint, count);
    conns.Run({.next =
                   [&](int i, std::string* request) {
                     Client& c = clients[static_cast<std::size_t>(i)];
                     if (!shared.Next(&c.job, &name)) return false;
                     c.t0 = std::chrono::steady_clock::now();
                     *request = signer.Wire(name);
                     return true;
                   },
               .answered =
                   [&](int i, int status, std::string_view body) {
                     const Client& c = clients[static_cast<std::size_t>(i)];
                     shared.Record(c.job, c.t0, status, std::string(body));
                   },
               .failed = [&](int, const std::string& error) { shared.NoteError(error); }});
  } catch (const std::exception& e) {
    shared.NoteError(e.what());
  }
}

// o.clients signed clients, each with its own connection and one call in flight at a time,
// submit o.jobs copies of `base` between them, each with its own jobName.
SubmitRun SubmitInParallel(const BenchOptions& o, const ClientConfig& config, const Json& base) {
  SubmitShared shared(o, config, base);
  const int drivers = PolledThreads(o, config);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  if (drivers == 0) {
    for (int c = 0; c < o.clients; ++c) threads.emplace_back(ClientThread, std::ref(shared));
  } else {
    for (int t = 0; t < drivers; ++t) {
      threads.emplace_back(DriverThread, std::ref(shared), t, drivers);
    }
  }
  for (std::thread& t : threads) t.join();
  shared.run.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::move(shared.run);
}

int RunBench(const BenchOptions& o) {
  if (o.clients < 1) throw CliError("--clients must be at least 1");
  if (o.jobs < 1) throw CliError("--jobs must be at least 1");
  if (o.threads < 0) throw CliError("--threads must be 0 or more");
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
  const double sum_us = std::accumulate(latencies_us.begin(), latencies_us.end(), 0.0);
  s.mean_ms = sum_us / static_cast<double>(latencies_us.size()) / 1000.0;
  s.p50_ms = rank(0.50);
  s.p90_ms = rank(0.90);
  s.p99_ms = rank(0.99);
  return s;
}

std::string BenchLine(std::int64_t jobs, double seconds, const LatencySummary& s) {
  char buf[200];
  const double rate = seconds > 0 ? static_cast<double>(jobs) / seconds : 0;
  std::snprintf(buf, sizeof(buf),
                "submitted %lld jobs in %.2f s: %.1f jobs/s, mean %.2f ms, p50 %.2f ms, "
                "p90 %.2f ms, p99 %.2f ms",
                static_cast<long long>(jobs), seconds, rate, s.mean_ms, s.p50_ms, s.p90_ms,
                s.p99_ms);
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
  sub->add_option("--clients", o->clients,
                  "parallel clients, each with its own connection and one call in flight")
      ->capture_default_str();
  sub->add_option("--threads", o->threads,
                  "threads that drive the clients' connections with poll() (http:// only); "
                  "0: a thread per client, blocked on its connection")
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
