#pragma once

// Victim choice for reclaim and in-share preemption (docs/design/engine.md, Victims).

#include <optional>
#include <vector>

#include "engine/owed.h"
#include "engine/state.h"

namespace allot::engine::internal {

struct VictimChoice {
  Job* job = nullptr;
  model::PreemptionRule rule = model::PreemptionRule::kReclaim;
  model::VictimKey key;
};

// Tries to make `preemptor` fit its share's quota and the pool in the projected view by taking
// victims: from other shares' capacity above their limits (reclaim), and with `in_share` also
// from its own share's strictly lower-priority jobs. In a share that may borrow, in-share
// preemption borrows nothing `owed` holds (OwedToWaitingJobs for the preemptor's share; empty
// otherwise). On success returns true with a minimal set in `out`, already removed from the
// projected view (the caller commits them). On failure the projected view is as before.
// `runner_up`, when given, receives on success the candidate that came closest to being chosen
// instead (model::RunnerUp), if any.
bool ChooseVictims(EngineState& st, QueueState& q, const Job& preemptor, bool in_share,
                   const std::vector<OwedNeed>& owed, std::vector<VictimChoice>* out,
                   std::optional<model::RunnerUp>* runner_up = nullptr);

}  // namespace allot::engine::internal
