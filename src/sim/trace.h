#pragma once

// A job history to replay and the readers of the trace formats `allot sim` accepts
// (docs/sim.md, Trace formats). Readers only parse; they never touch the engine.

#include <cstdint>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "sim/cluster.h"

namespace allot::sim {

struct TraceJob {
  Duration submit = 0;    // since the start of the trace (the first submission is 0)
  Duration duration = 0;  // work the job needs, excluding restarts
  std::string queue;      // empty: the cluster's only queue
  std::string share;
  std::string unit;        // capacity unit (instance type)
  std::int64_t count = 1;  // instances of `unit`
  std::int32_t priority = 0;
  // Overrides SimOptions::checkpoint_interval for this job; 0 = never checkpoints.
  std::optional<Duration> checkpoint_interval;
  std::string name;   // optional, for reports
  std::string group;  // size class or workload class, for per-class wait figures
  // SIGTERM to exit when the job is stopped (a job that exits at once, or one that uses the
  // whole grace); unset: SimOptions::stop_grace.
  std::optional<Duration> stop;
  // schedulingPriority changes: (time since the job's submission, new priority), by time.
  std::vector<std::pair<Duration, std::int32_t>> priority_changes;
};

// Jobs sorted by submit time, ties kept in input order (the order is part of the replay).
struct Trace {
  std::vector<TraceJob> jobs;
};

// Sorts stably by submit and shifts times so that the first submission is at 0.
void Normalize(Trace* trace);

// Allot's CSV: a header naming the columns, in any order:
//   submit_s, duration_s, instance_type, instance_count, share, priority   (required)
//   checkpoint_interval_s, queue, name, group, stop_s, priority_changes    (optional)
// priority_changes is "T:P;T:P": at T seconds after its submission the job's priority becomes P.
// Seconds may have a fraction. Errors name the origin, the line and the column.
Result<Trace> ReadAllotCsv(std::istream& in, const std::string& origin);
// Writes `trace` in Allot's CSV, every column; ReadAllotCsv reads it back as it was (times to
// the millisecond).
void WriteAllotCsv(const Trace& trace, std::ostream& out);

// The Philly job list (timestamp,duration,num_gpus,gpu_time,cluster): the virtual cluster is
// the share, GPUs are instances of `unit`; jobs with more than `large_gpus` GPUs get
// `large_priority` (the others 0); group is the size class "1", "2-8" or ">8".
struct PhillyOptions {
  std::string queue = "philly";
  std::string unit = "gpu";
  std::int64_t large_gpus = 8;
  std::int32_t large_priority = 100;
};
Result<Trace> ReadPhillyCsv(std::istream& in, const std::string& origin,
                            const PhillyOptions& options);

// The cluster the Philly replay uses when no --config is given: one service environment and
// queue; one LEND_AND_BORROW share per virtual cluster in the trace, unlimited borrowing and
// in-share preemption on, its limit = nodes (from philly_vc.csv: vc,node num) x gpus_per_node,
// and 1 (the smallest limit AWS allows) for a VC the file does not list or gives no nodes;
// the environment's capacity is the sum of the limits. VCs only in the file are ignored.
Result<Cluster> PhillyCluster(std::istream& vc_csv, const std::string& origin, const Trace& trace,
                              const PhillyOptions& options, std::int64_t gpus_per_node = 8);

// A Pollux workload (name,time,application,num_replicas,batch_size): the application is the
// share and the group, replicas are instances of `unit`; the duration is the application's
// GPU-time (PolluxGpuMillis) divided by its replicas.
Result<Trace> ReadPolluxWorkload(std::istream& in, const std::string& origin,
                                 const std::string& queue, const std::string& unit);
// GPU-milliseconds assumed per Pollux application (the middle of its GPU-time class), or nullopt.
std::optional<Duration> PolluxGpuMillis(const std::string& application);

// A Kueue scheduler-performance generator file (cohorts / queuesSets / workloadsSets, as in
// kueue test/performance/scheduler/configs/*/generator.yaml). Each cohort becomes a service
// environment and a queue (a lending group), each cluster queue a LEND_AND_BORROW share with
// limit nominalQuota, borrowLimit borrowingLimit/nominalQuota in percent, and in-share
// preemption when withinClusterQueue is LowerPriority. Every workloads set of every cluster
// queue starts at 0 and creates one workload every creationIntervalMs; the group is the
// workload's className. An empty text means Kueue's baseline (KueueBaselineYaml()).
struct Generated {
  Trace trace;
  Cluster cluster;
};
Result<Generated> GenerateKueue(const std::string& yaml_text, const std::string& origin,
                                const std::string& unit = "cpu");
const std::string& KueueBaselineYaml();

}  // namespace allot::sim
