#pragma once

// The two per-share indexes: waiting jobs by shape in waiting order, and victim candidates
// (dispatched, not stopping) by instance count in victim order.

#include "engine/state.h"

namespace allot::engine::internal {

// REQUIRES: the job is RUNNABLE and in no index. Misconfigured jobs go to their own set.
void AddWaiting(EngineState& st, const Job& job);
void RemoveWaiting(EngineState& st, const Job& job);

// REQUIRES: the job is dispatched, not stopping, and not yet a candidate.
void AddCandidate(EngineState& st, const Job& job);
void RemoveCandidate(EngineState& st, const Job& job);

// Whether a job stopping for a preemption returns to RUNNABLE when its attempt ends (its
// preemptionRetriesBeforeTermination allows one more preemption).
bool WillRequeue(const Job& job);
// The share's set of preempted jobs still stopping that will be requeued. Add REQUIRES: the
// job is stopping for a preemption and WillRequeue. Remove returns whether it was there.
void AddRequeuing(EngineState& st, const Job& job);
bool RemoveRequeuing(EngineState& st, const Job& job);

}  // namespace allot::engine::internal
