// The simulator's seeded random replays (support/random_replay.h), a quick set of seeds.

#include "sim/support/random_replay.h"

#include <gtest/gtest.h>

namespace allot::sim {
namespace {

TEST(RandomReplay, InvariantsHoldAfterEveryEvent) { testing::RunRandomReplays(1, 400); }

}  // namespace
}  // namespace allot::sim
