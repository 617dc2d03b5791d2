#pragma once

// A service job as the controller keeps it: typed and compact, since a server holds up to a
// million of them. What listing, filters, the engine's restore and Describe need is here; the
// serviceRequestPayload stays in the store and is read when an attempt launches or a caller
// describes the job. What only a job that has run carries (attempts, preemptions, host
// identities) lives out of line, so a waiting job costs one null pointer for it.
//
// The wire form (DescribeServiceJob, ListServiceJobs) is made from it at the edge
// (job_wire.h); the stored form is job_codec.h.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/time.h"
#include "exec/executor.h"
#include "model/decision.h"
#include "model/job.h"
#include "model/reason.h"

namespace allot::server {

// The one internal share of a job queue without a quota-share policy (a plain FIFO queue). Only
// a plain queue's jobs name no share, and their engine spec names this one. "_fifo" is also a
// valid quota share name (AWS allows [A-Za-z0-9_-]): code that reads the name as the internal
// share must first know that the queue is plain.
inline constexpr char kImplicitShare[] = "_fifo";

struct AttemptRecord {
  std::string resource_arn;  // the SageMaker training job's ARN (serviceResourceId)
  Timestamp started_at = 0;
  Timestamp stopped_at = 0;  // 0 while the attempt runs
  std::string status_reason;
  bool preempted = false;  // ended by a preemption (preemptionSummary lists it)
  // What the sandbox enforced on its hosts (exec::AttemptExit::enforced_limits), once it ended.
  std::string enforced_limits;
  // Where the executor runs it, as its `submitted` callback named it ("slurm:4242"); empty for
  // the local executor. A restart re-adopts the attempt by it.
  std::string executor_ref;

  bool operator==(const AttemptRecord&) const = default;
};

// A job another job's preemption record names: by id, name and share.
struct JobRef {
  std::string id;
  std::string name;
  std::string share;

  bool operator==(const JobRef&) const = default;
};

// The candidate the victim order would have taken next (model::RunnerUp).
struct RunnerUpRecord {
  JobRef job;
  model::PreemptionRule rule = model::PreemptionRule::kReclaim;
  std::int32_t priority = 0;
  Duration work_lost = 0;  // instance-milliseconds when the victims were chosen
  Timestamp attempt_started_at = 0;
  bool put_back = false;  // came before the victims but was not needed (minimal set)

  bool operator==(const RunnerUpRecord&) const = default;
};

// One victim, as the preemptor's own record lists it.
struct VictimRef {
  JobRef job;
  int attempt = 0;
  model::PreemptionRule rule = model::PreemptionRule::kReclaim;
  Duration work_lost_when_chosen = 0;

  bool operator==(const VictimRef&) const = default;
};

// A preemption this job made: when and whom.
struct CausedPreemption {
  Timestamp at = 0;
  std::vector<VictimRef> victims;

  bool operator==(const CausedPreemption&) const = default;
};

// Why an attempt was chosen as a victim: the engine's victim record, with the job that preempted.
struct PreemptionRecord {
  int attempt = 0;
  std::string preemptor;  // its job id
  std::string preemptor_name;
  std::string preemptor_share;
  std::optional<RunnerUpRecord> runner_up;
  model::PreemptionRule rule = model::PreemptionRule::kReclaim;
  std::int32_t victim_priority = 0;
  Duration work_lost_when_chosen = 0;  // instance-milliseconds
  Timestamp attempt_started_at = 0;
  Timestamp at = 0;
  std::optional<Duration> work_lost;  // instance-milliseconds, once the attempt stopped

  bool operator==(const PreemptionRecord&) const = default;
};

// The host-map slot an instance of a dispatched attempt holds (-1: the type has no host map).
struct SlotRecord {
  std::string unit;
  int slot = -1;

  bool operator==(const SlotRecord&) const = default;
};

struct StopRecord {
  model::StopKind kind = model::StopKind::kTermination;
  std::string reason;

  bool operator==(const StopRecord&) const = default;
};

struct JobHistory {
  std::vector<AttemptRecord> attempts;
  std::vector<PreemptionRecord> preemptions;
  std::vector<CausedPreemption> caused;  // preemptions this job made, as the preemptor
  int preempted_attempt_count = 0;       // the engine's count (preemptionSummary)
  // While an attempt is dispatched:
  std::vector<exec::HostProcess> hosts;  // identities recorded at start, for a restart's adoption
  std::vector<SlotRecord> slots;
  std::optional<model::DispatchMode> dispatch_mode;
  std::optional<StopRecord> stopping;  // a stop was decided and not yet reported done
  std::optional<model::PreemptionRule> stop_rule;
  // Once the job ended: what its tree in the data directory takes (-1: not measured yet), and
  // when the tree was removed to free the disk (0: it is there). See finished_trees.h.
  std::int64_t files_bytes = -1;
  Timestamp files_removed_at = 0;
  // Terminated to free the jobs' file system (job_files.cc): written in the termination's own
  // batch, so a restart and a rollback know the eviction under way as the store does.
  bool evicted = false;

  bool operator==(const JobHistory&) const = default;
  bool empty() const {
    return attempts.empty() && preemptions.empty() && caused.empty() &&
           preempted_attempt_count == 0 && hosts.empty() && slots.empty() && !dispatch_mode &&
           !stopping && !stop_rule && files_bytes == -1 && files_removed_at == 0 && !evicted;
  }
};

// Submission options most jobs leave out: kept out of line, so a job without any costs one null
// pointer for them.
struct JobOptions {
  std::string training_name;  // the payload's TrainingJobName, when it is not the job's name
  std::vector<std::pair<std::string, std::string>> tags;  // sorted by key
  std::optional<std::int64_t> timeout_config_seconds;     // timeoutConfig.attemptDurationSeconds
  std::optional<std::int32_t> preemption_retries;         // preemptionRetriesBeforeTermination
  std::optional<model::RetryStrategy> retry;              // retryStrategy, as given

  bool empty() const {
    return training_name.empty() && tags.empty() && !timeout_config_seconds &&
           !preemption_retries && !retry;
  }
};

struct JobRecord {
  model::JobId seq = 0;
  std::string id;
  std::string name;
  std::string_view queue;         // interned by the controller; empty if the queue is gone
  std::string_view share;         // interned; empty on a queue without quota shares
  std::string_view submitted_by;  // interned user name; empty for jobs stored before users
  model::JobStatus status = model::JobStatus::kSubmitted;
  bool is_terminated = false;
  std::int32_t priority = 0;
  // The shorter of timeoutConfig.attemptDurationSeconds and the payload's MaxRuntimeInSeconds.
  std::optional<std::int64_t> attempt_timeout_seconds;
  model::Demand demand;
  Timestamp created_at = 0;
  Timestamp scheduled_at = 0;  // 0: not yet
  Timestamp started_at = 0;
  Timestamp stopped_at = 0;
  Timestamp runnable_since = 0;
  std::string status_reason;
  // The engine's counters, saved so a restart restores them.
  std::int32_t attempt = 0;
  std::int32_t failed_attempts = 0;
  std::int32_t preemptions = 0;
  Timestamp last_checkpoint = 0;
  std::unique_ptr<JobHistory> history;  // null until the job has something in it
  std::unique_ptr<JobOptions> extra;    // null when the job was submitted without any

  const JobOptions& options() const;
  JobOptions& MutableOptions() {
    if (!extra) extra = std::make_unique<JobOptions>();
    return *extra;
  }

  JobHistory& History() {
    if (!history) history = std::make_unique<JobHistory>();
    return *history;
  }
  // Frees the history and the options once nothing is left in them.
  void Compact() {
    if (history && history->empty()) history.reset();
    if (extra && extra->empty()) extra.reset();
  }
  const std::vector<AttemptRecord>& attempts() const;
  // The job's engine spec.
  model::JobSpec Spec() const;
  // "queue/share": the quota share whose uid runs it, whose checkpoint locations it claims and
  // whose launches are counted together.
  std::string ShareKey() const { return std::string(queue) + "/" + std::string(share); }
  // Instances of every type together: the hosts algo-1 .. algo-N.
  int InstanceCount() const;
};

}  // namespace allot::server
