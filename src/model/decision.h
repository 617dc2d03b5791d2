#pragma once

// Outputs of the engine. The server records them in the store and acts on them through the
// executors; the simulator applies them to its virtual world. They come in the order made.

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "model/job.h"
#include "model/reason.h"

namespace allot::model {

// A job's status or statusReason changed.
struct StatusChanged {
  JobId job = 0;
  JobStatus from = JobStatus::kSubmitted;
  JobStatus to = JobStatus::kSubmitted;
  std::string reason;
};

enum class DispatchMode : std::uint8_t {
  kWithinQuota,  // fits the share's own limit
  kBorrowed,     // takes lendable idle capacity of other shares
  kPreemptor,    // a nominated preemptor whose victims have stopped
};

std::string_view ToString(DispatchMode m);

// Start attempt `attempt` of `job` (the job is now SCHEDULED).
struct Dispatch {
  JobId job = 0;
  int attempt = 0;
  DispatchMode mode = DispatchMode::kWithinQuota;
};

enum class StopKind : std::uint8_t { kPreemption, kTermination, kTimeout };

std::string_view ToString(StopKind k);

// Stop every process of the job's current attempt: SIGTERM, then SIGKILL after the grace.
// The job keeps its capacity until the executor reports AttemptEnded.
struct Stop {
  JobId job = 0;
  int attempt = 0;
  StopKind kind = StopKind::kTermination;
  std::string reason;
};

// `preemptor` is nominated: it reserves the capacity `victims` will release and is dispatched
// when they have stopped. Victims are listed in the order the victim order chose them.
struct Preemption {
  JobId preemptor = 0;
  std::vector<VictimRecord> victims;
  // The candidate that came closest to being chosen instead; DecisionToString leaves it out.
  std::optional<RunnerUp> runner_up;
};

// A preempted attempt has ended: the preemption summary of the job gains one attempt.
struct PreemptedAttempt {
  JobId job = 0;
  int attempt = 0;
  PreemptionRule rule = PreemptionRule::kReclaim;
  // Instance-milliseconds between the last checkpoint (or the attempt's start) and the end of
  // the attempt; the victim key holds the estimate made when the victim was chosen.
  std::int64_t work_lost = 0;
  int preempted_count = 0;  // preemptions of this job so far, this one included
  std::string reason;
};

using Decision = std::variant<StatusChanged, Dispatch, Stop, Preemption, PreemptedAttempt>;

using Decisions = std::vector<Decision>;

// One line per decision, stable across runs and platforms (used for replay comparison).
std::string DecisionToString(const Decision& d);

}  // namespace allot::model
