// The simulator's seeded random replays (support/random_replay.h), many more seeds
// (`make test-slow`).

#include <gtest/gtest.h>

#include "sim/support/random_replay.h"

namespace allot::sim {
namespace {

TEST(RandomReplay, InvariantsHoldAfterEveryEventManySeeds) {
  testing::RunRandomReplays(100'001, 20'000);
}

}  // namespace
}  // namespace allot::sim
