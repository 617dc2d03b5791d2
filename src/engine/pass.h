#pragma once

#include "engine/state.h"

namespace allot::engine::internal {

// Runs the scheduling pass on queue `q` until nothing changes (docs/design/engine.md, The pass).
void RunPass(EngineState& st, QueueState& q);

// Re-checks every nominee of `q` after a configuration change; returns those that no longer fit
// to waiting.
void RevalidateNominees(EngineState& st, QueueState& q);

}  // namespace allot::engine::internal
