// The slow variant of property_test.cc (ctest label `slow`, run by `make test-slow`): every
// decision of 200,000 longer random sequences is checked by the shadow model, and replay is
// deterministic over 2,000 seeds.
//
// To replay one seed with its full log: ALLOT_PROPERTY_SEED=1234 ./engine_property_slow_test

#include <gtest/gtest.h>

#include "engine/support/property_suite.h"

namespace allot::testing {
namespace {

const PropertySuite kSuite = {.name = "engine property slow test",
                              .first_seed = 1,
                              .last_seed = 200'000,
                              .replay_seeds = 2'000,
                              .options = {.min_events = 60, .max_events = 150, .check = true},
                              .min_preemptions = 10'000,
                              .progress_every = 20'000};

TEST(EnginePropertySlowTest, EveryDecisionKeepsTheRules) { CheckEverySeed(kSuite); }

TEST(EnginePropertySlowTest, ReplayIsByteIdentical) { CheckReplay(kSuite); }

}  // namespace
}  // namespace allot::testing
