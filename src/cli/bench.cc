#include "cli/bench.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <thread>

#include "cli/apply.h"
#include "cli/commands.h"
#include "cli/jobs.h"

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

// o.clients threads, one signed client each, submit o.jobs copies of `base` between them.
SubmitRun SubmitInParallel(const BenchOptions& o, const ClientConfig& config, const Json& base) {
  SubmitRun run;
  run.latencies.assign(static_cast<std::size_t>(o.jobs), -1);
  std::atomic<std::int64_t> next{0};
  std::mutex first_error_mu;
  auto note_error = [&](const std::string& error) {
    std::lock_guard<std::mutex> lock(first_error_mu);
    if (run.first_error.empty()) run.first_error = error;
  };
  const std::string run_id = std::to_string(WallClockMillis() % 100000000);
  auto worker = [&] {
    try {
      Client client(config);
      for (std::int64_t i = next++; i < o.jobs; i = next++) {
        Json req = base;
        req["jobName"] = "bench-" + run_id + "-" + std::to_string(i);
        const std::string body = req.dump();
        const auto t0 = std::chrono::steady_clock::now();
        std::pair<int, std::string> answer;
        try {
          answer = client.Post("submitservicejob", body);
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
