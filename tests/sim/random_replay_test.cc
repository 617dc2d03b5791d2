// The simulator's seeded random replays (support/random_replay.h), a quick set of seeds.

#include <gtest/gtest.h>

#include "sim/support/random_replay.h"

namespace allot::sim {
namespace {

TEST(RandomReplay, InvariantsHoldAfterEveryEvent) { testing::RunRandomReplays(1, 400); }

}  // namespace
}  // namespace allot::sim
