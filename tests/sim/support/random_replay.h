#pragma once

// Seeded random replays: random clusters (strategies, limits, borrow caps, in-share preemption,
// one or two units, sometimes a pool smaller than the limits) and random traces (sizes,
// priorities, checkpoint intervals, bursts at one instant), run with the invariant checks on
// after every event (sim/invariants.h) under both victim orders, with and without a stop grace
// period. Each failure names its seed; ALLOT_SIM_SEED=N replays only seed N.

#include <cstdint>

namespace allot::sim::testing {

// Seeds first .. first + count - 1; fails the current test on the first broken run.
void RunRandomReplays(std::uint64_t first, std::uint64_t count);

}  // namespace allot::sim::testing
