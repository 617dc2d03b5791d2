#pragma once

// The bookkeeping of nominated preemptors' reservations in the actual view (NomineeWait).

#include <vector>

#include "engine/state.h"

namespace allot::engine::internal {

// `nominee` waits for the attempts of `victims`, which have begun to stop.
void TrackNominee(EngineState& st, QueueState& q, const Job& nominee,
                  const std::vector<StoppedAttempt>& victims);
// The nominee starts, returns to waiting or ends: its reservation is no longer held for it.
void ForgetNominee(EngineState& st, QueueState& q, model::JobId nominee);
// `victim`'s stopped attempt has ended: the capacity it held is now free for its nominee.
void VictimEnded(EngineState& st, QueueState& q, model::JobId victim);

}  // namespace allot::engine::internal
