#pragma once

// Job state transitions shared by the pass and the event handlers. Each emits its decisions to
// st.out and keeps the indexes and both usage views in step.

#include <string>

#include "engine/state.h"

namespace allot::engine::internal {

// Sets status and statusReason, emitting StatusChanged when either changes.
void SetStatus(EngineState& st, Job& job, model::JobStatus to, std::string reason);

// Static check of whether the job can ever fit its queue's configuration.
model::Misconfiguration CheckMisconfiguration(const QueueState& q, const Job& job);

// Puts a job (new or returning) into RUNNABLE and its share's waiting index, with its
// misconfiguration reason if any, and schedules the jobStateTimeLimitActions that match.
void MakeRunnable(EngineState& st, Job& job, std::string reason);

// Re-checks a waiting job's misconfiguration after a configuration change.
void RecheckWaiting(EngineState& st, JobId id);

// RUNNABLE -> SCHEDULED. REQUIRES: removed from the waiting index. `projected_held` is true for
// a nominee, whose need the projected view already holds.
void DispatchJob(EngineState& st, Job& job, model::DispatchMode mode, bool projected_held);

// Asks the executor to stop a dispatched job. For preemption victims the caller has already
// taken the job out of the projected view and the candidate index (`already_removed`).
void BeginStop(EngineState& st, Job& job, model::StopKind kind, std::string reason,
               bool already_removed);

// Returns a nominated preemptor to waiting and drops its reservation.
void Denominate(EngineState& st, Job& job);

// Ends a job: SUCCEEDED or FAILED; the engine forgets it.
void FinishJob(EngineState& st, Job& job, model::JobStatus status, std::string reason);

// Terminates a job: at once if waiting, through a stop if dispatched.
void TerminateLiveJob(EngineState& st, Job& job, std::string reason);

}  // namespace allot::engine::internal
