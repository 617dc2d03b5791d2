#pragma once

// What one simulated run measured (docs/sim.md, Metrics). Times are in seconds and amounts in
// instance-hours unless a name says otherwise; every figure is a plain value so that reports
// (text, JSON, HTML) only format.

#include <cstdint>
#include <string>
#include <vector>

namespace allot::sim {

// Nearest-rank percentiles of a sample (all 0 when count is 0).
struct Distribution {
  std::int64_t count = 0;
  double mean = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double max = 0;
};

// Fixed decade bins of waiting time, for the wait-time charts.
// Bin i counts waits in [kWaitBinEdges[i], kWaitBinEdges[i + 1]) seconds; the last is open.
inline constexpr double kWaitBinEdges[] = {0, 1, 10, 60, 600, 3600, 36000, 360000};
inline constexpr int kWaitBins = sizeof(kWaitBinEdges) / sizeof(kWaitBinEdges[0]);

// The same figures for one share and for the whole run (share "*" then).
struct Figures {
  std::int64_t jobs = 0;      // submitted and accepted
  std::int64_t rejected = 0;  // refused by the engine at submission (unknown share, ...)
  std::int64_t succeeded = 0;
  std::int64_t failed = 0;
  std::int64_t unfinished = 0;  // still waiting or running when the trace ran out of events
  std::int64_t limit = 0;       // sum over units of the limit (the pool for "*")
  double used_instance_hours = 0;
  double utilization = 0;  // used / (limit x span); above 1 for a share that borrowed
  double idle_while_waiting_instance_hours = 0;  // min(pool idle, waiting demand), integrated
  Distribution wait;                             // submission to first dispatch, seconds
  Distribution completion;                       // submission to success, seconds
  Distribution slowdown;                         // completion / duration
  std::int64_t wait_histogram[kWaitBins] = {};
  std::int64_t preemptions_reclaim = 0;   // attempts of this share's jobs ended by reclaim
  std::int64_t preemptions_in_share = 0;  // ... by in-share preemption
  double lost_instance_hours = 0;         // work since the last checkpoint, at each preemption
  double restart_instance_hours = 0;      // restart overhead of resumed attempts
  double guarantee_shortfall_instance_hours = 0;
  Distribution reclaim_latency;  // seconds a share stayed short of its own limit while others
                                 // borrowed (one sample per episode)
  double borrowed_instance_hours = 0;
  double lent_instance_hours = 0;
};

struct ShareResult {
  std::string queue;
  std::string share;
  std::string strategy;  // RESERVE | LEND | LEND_AND_BORROW
  Figures figures;
  std::vector<double> usage;  // mean instances held per chart bucket
};

// Waiting figures of one job group (size or workload class).
struct GroupResult {
  std::string group;
  Distribution wait;
};

// One trace job's course (`allot sim --jobs`); times in seconds since the trace's start.
struct JobResult {
  std::string name;
  std::string queue;
  std::string share;
  double submit = 0;
  double first_start = -1;  // -1: never started
  double end = -1;          // -1: not ended when the run did
  std::string status;       // SUCCEEDED | FAILED | REJECTED | UNFINISHED
  int attempts = 0;
  int preemptions = 0;
  double lost_instance_hours = 0;  // work since the last checkpoint, at each preemption
};

struct RunResult {
  std::string policy;
  std::string victim_order;   // "least-work-lost" | "newest-first"
  double span_seconds = 0;    // first submission to the last event
  double bucket_seconds = 0;  // width of one chart bucket
  Figures overall;
  double jain_index = 0;  // over the served fraction of demand (docs/sim.md), shares with demand
  std::vector<ShareResult> shares;  // by queue, then share name
  std::vector<GroupResult> groups;  // by group name
  std::vector<double> pool_usage;   // mean instances held per bucket, all queues
  std::int64_t engine_events = 0;
  std::int64_t decisions = 0;
  std::int64_t invariant_checks = 0;  // 0 unless SimOptions::check_invariants
  std::vector<JobResult> jobs;        // in trace order
};

}  // namespace allot::sim
