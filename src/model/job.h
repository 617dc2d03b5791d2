#pragma once

// A service job as the engine sees it: no payload, only what scheduling needs.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/time.h"
#include "model/capacity.h"

namespace allot::model {

// Assigned by the driver, increasing with submission; the last key of every ordering.
using JobId = std::uint64_t;

enum class JobStatus : std::uint8_t {
  kSubmitted,
  kPending,
  kRunnable,
  kScheduled,
  kStarting,
  kRunning,
  kSucceeded,
  kFailed,
};

std::string_view ToString(JobStatus s);
// The status ToString names, or nullopt for any other text.
std::optional<JobStatus> ParseJobStatus(std::string_view s);
bool IsTerminal(JobStatus s);
// SCHEDULED, STARTING and RUNNING: the job holds capacity.
bool IsDispatched(JobStatus s);

enum class RetryAction : std::uint8_t { kRetry, kExit };

struct EvaluateOnExit {
  RetryAction action = RetryAction::kRetry;
  std::string on_status_reason;  // glob, see common/glob.h
};

struct RetryStrategy {
  int attempts = 1;  // total attempts, the first included (1-10)
  std::vector<EvaluateOnExit> evaluate_on_exit;
};

struct JobSpec {
  JobId id = 0;
  std::string queue;
  std::string share;
  std::int32_t priority = 0;  // schedulingPriority 0-9999, higher first
  Demand demand;
  // preemptionRetriesBeforeTermination: unset = requeue after every preemption; 0 = the first
  // preemption fails the job.
  std::optional<std::int32_t> preemption_retries;
  RetryStrategy retry;
  // The shorter of timeoutConfig.attemptDurationSeconds and StoppingCondition.MaxRuntimeInSeconds.
  std::optional<std::int64_t> attempt_timeout_seconds;
  Timestamp created_at = 0;
};

}  // namespace allot::model
