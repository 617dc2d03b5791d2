#pragma once

#include "engine/accounting.h"
#include "engine/state.h"

namespace allot::engine::internal {

// The first preempted job of share `i` that is still stopping, will be requeued, comes before
// `head` (need `shape`) in waiting order and would take what `head` takes: it fits the projected
// view in `mode` (where stopping jobs are already gone) now, but not beside `head`. Such a job
// keeps its place, whatever order the victims' processes exit in: `head` is not dispatched
// before it has been requeued (docs/design/engine.md, Preempted jobs keep their place). 0: none.
model::JobId RequeuingAhead(const EngineState& st, const QueueState& q, std::uint32_t i,
                            const WaitKey& head, const Shape& shape, FitMode mode);

// Runs the scheduling pass on queue `q` until nothing changes (docs/design/engine.md, The pass).
void RunPass(EngineState& st, QueueState& q);

// Re-checks every nominee of `q` after a configuration change; returns those that no longer fit
// to waiting.
void RevalidateNominees(EngineState& st, QueueState& q);

}  // namespace allot::engine::internal
