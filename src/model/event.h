#pragma once

// Inputs of the engine. Each comes with the current time from the driver; the engine reads no
// clock. Attempt events name the attempt so that a late report of an old attempt is ignored.

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "common/time.h"
#include "model/config.h"
#include "model/decision.h"
#include "model/job.h"
#include "model/reason.h"

namespace allot::model {

struct PutServiceEnvironment {
  ServiceEnvironmentConfig config;
};
struct DeleteServiceEnvironment {
  std::string name;
};
struct PutJobQueue {
  JobQueueConfig config;
};
struct DeleteJobQueue {
  std::string name;
};
struct PutQuotaShare {
  QuotaShareConfig config;
};
struct DeleteQuotaShare {
  std::string queue;
  std::string name;
};

struct SubmitJob {
  JobSpec spec;
};
// A live job recovered from the store after a restart. It re-enters RUNNABLE with its counters,
// even in a DISABLED queue or share (they refuse only new submissions).
struct RestoreJob {
  JobSpec spec;
  int attempt = 0;  // attempts dispatched before
  int failed_attempts = 0;
  int preemptions = 0;
  Timestamp last_checkpoint = 0;
  std::string reason;  // statusReason it returns with
  // Set when attempt `attempt` still runs (its supervisors were re-adopted): the job comes back
  // RUNNING and holds its capacity instead of returning to RUNNABLE.
  struct Running {
    Timestamp attempt_started = 0;
    Timestamp running_since = 0;
    bool stopping = false;  // a stop was asked before the restart
    StopKind stop_kind = StopKind::kTermination;
    PreemptionRule stop_rule = PreemptionRule::kReclaim;
  };
  std::optional<Running> running;
};
struct UpdateJobPriority {
  JobId job = 0;
  std::int32_t priority = 0;
};
struct TerminateJob {
  JobId job = 0;
  std::string reason;
};

// The executor reports progress of attempt `attempt` (1-based) of `job`.
struct AttemptStarting {
  JobId job = 0;
  int attempt = 0;
};
struct AttemptRunning {
  JobId job = 0;
  int attempt = 0;
};
struct CheckpointObserved {
  JobId job = 0;
  int attempt = 0;
  Timestamp at = 0;
};

enum class AttemptOutcome : std::uint8_t {
  kSucceeded,  // every host exited 0
  kFailed,     // a host failed; `reason` is the SageMaker-style status reason
  kRequeue,    // the attempt ended through no fault of the job (capacity error, lost on restart):
               // requeued without consuming retryStrategy attempts
};

// Every process of the attempt is gone; its capacity is free.
struct AttemptEnded {
  JobId job = 0;
  int attempt = 0;
  AttemptOutcome outcome = AttemptOutcome::kSucceeded;
  std::string reason;
  // Why the attempt's checkpoints were not saved after it (its sync failed), or empty. Said after
  // whatever reason its end gives the job (a stop's, a preemption's, a retry's), and not read by
  // the retry rules (onStatusReason), which see the attempt's own reason alone.
  std::string checkpoint_error;
  // False when the attempt's processes never started: its launch was stopped before it began
  // (the server held it back). A preemption of such an attempt lost no work and is not counted
  // against preemptionRetriesBeforeTermination: the job never ran to be preempted.
  bool began = true;
};

// Nothing happened but time passed: fire timeouts and jobStateTimeLimitActions.
struct Tick {};

// The driver cannot start jobs for a while (the server: its disk is full, and its store's
// reserve is out). While held, no job is dispatched and none preempted, in any queue: a victim
// stopped then would only free capacity for a preemptor that cannot start. Waiting jobs say why
// (WaitRule::kDispatchesHeld, with `reason`). Releasing runs every queue's pass.
struct HoldDispatches {
  bool held = false;
  std::string reason;  // why, one phrase; required when held
};

using Event = std::variant<PutServiceEnvironment, DeleteServiceEnvironment, PutJobQueue,
                           DeleteJobQueue, PutQuotaShare, DeleteQuotaShare, SubmitJob, RestoreJob,
                           UpdateJobPriority, TerminateJob, AttemptStarting, AttemptRunning,
                           CheckpointObserved, AttemptEnded, Tick, HoldDispatches>;

std::string EventToString(const Event& e);

}  // namespace allot::model
