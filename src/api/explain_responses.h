#pragma once

// The answers of GET /allot/v1/jobs/{id}/explain and POST /allot/v1/whatif, typed: why a job
// waits or was preempted, and what the engine would decide for a change. encode_explain.cc
// writes them as docs/observability.md documents them. Times are epoch milliseconds; work lost
// is kept in instance-milliseconds and written in instance-seconds.
//
// Tenancy: another job these name is a JobReference, whose id and name the controller leaves
// unset where the caller may not describe that job; the encoder writes only what is set.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/time.h"
#include "model/decision.h"
#include "model/job.h"
#include "model/reason.h"

namespace allot::api {

// A job an answer names: its share always, its id and name both or neither.
struct JobReference {
  std::string share;
  std::optional<std::string> job_id;
  std::optional<std::string> job_name;
};

// The victim order's key when the victims were chosen ("victimKey"): in explain and what-if
// here, and in Describe's preemption records (responses.h, which includes this header).
struct VictimKey {
  std::int32_t priority = 0;
  Duration work_lost = 0;  // instance-milliseconds when the victims were chosen
  Timestamp attempt_started_at = 0;
};

// --- the waiting explanation (explain's "waiting", what-if's "explanation") ---

// A running job holding the blocking unit; only jobs the caller may describe are listed.
struct HolderJobDetail {
  std::string job_id;
  std::string job_name;
  std::int64_t held = 0;
  std::optional<Timestamp> ends_by;  // when its attempt has a time limit
};

struct HolderDetail {
  std::string share;
  std::int64_t held = 0;
  std::int64_t borrowed = 0;
  std::vector<HolderJobDetail> jobs;
  std::int64_t more_jobs = 0;    // holders the engine left out of `jobs`
  std::int64_t hidden_jobs = 0;  // holders the caller may not describe; written only when > 0
};

// model::WaitReason as the caller may see it. The strings left empty are not written.
struct WaitExplanation {
  model::WaitRule rule = model::WaitRule::kNotWaiting;
  std::string unit;
  std::int64_t needed = 0;
  std::int64_t available = 0;
  std::int64_t missing = 0;
  std::vector<HolderDetail> holders;
  std::vector<JobReference> waiting_for;
  std::int64_t position_in_share = 0;
  std::int64_t position_in_queue = 0;
  std::optional<Timestamp> start_bound;  // written as null when unknown, never left out
  std::string would_start;
  std::string message;
  std::string share;  // the waiting job's
  std::string free_elsewhere;
  std::string start_unknown;
  std::string in_share_preemption;  // why in-share preemption does not start it
  model::Misconfiguration misconfiguration = model::Misconfiguration::kNone;  // kNone: left out
};

// --- explain's "preempted" ---

struct RunnerUpExplanation {
  JobReference job;
  model::PreemptionRule rule = model::PreemptionRule::kReclaim;
  VictimKey key;
  bool put_back = false;
  std::string chosen_over_because;
};

struct PreemptionExplanation {
  int attempt = 0;
  Timestamp at = 0;
  JobReference preemptor;
  model::PreemptionRule rule = model::PreemptionRule::kReclaim;
  VictimKey key;
  bool stopping = false;
  Duration work_lost = 0;  // instance-milliseconds: final, or as of now while it runs
  bool work_lost_final = false;
  std::optional<std::int32_t> retries_before_termination;  // unset: unlimited, not written
  std::optional<std::int32_t> retries_left;                // unset: unlimited, written as null
  std::optional<RunnerUpExplanation> runner_up;
};

struct ExplainResponse {
  std::string job_id;
  std::string job_name;
  model::JobStatus status = model::JobStatus::kSubmitted;
  std::optional<WaitExplanation> waiting;
  std::optional<PreemptionExplanation> preempted;
  std::string summary;
};

// --- POST /allot/v1/whatif ---

// kRunning: the subject of a priority change is already dispatched, so nothing would start.
enum class WhatIfDecision : std::uint8_t { kWait, kStart, kPreempt, kRunning };

struct WhatIfVictim {
  JobReference job;
  model::PreemptionRule rule = model::PreemptionRule::kReclaim;
  // Another team's priority and work: set only with the job's id and name.
  std::optional<std::int32_t> priority;
  std::optional<Duration> work_lost;      // instance-milliseconds when chosen
  std::optional<JobReference> preemptor;  // for a configuration change
};

struct WhatIfStart {
  JobReference job;
  model::DispatchMode mode = model::DispatchMode::kWithinQuota;
};

struct WhatIfResponse {
  WhatIfDecision decision = WhatIfDecision::kWait;
  std::string summary;
  std::vector<WhatIfVictim> victims;
  std::optional<std::vector<WhatIfStart>> starts;  // set for a configuration change only
  std::optional<WaitExplanation> explanation;      // set when it would wait
};

}  // namespace allot::api
