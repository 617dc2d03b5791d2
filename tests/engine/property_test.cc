// Seeded randomized property tests of the engine: every decision of 10,000 random sequences is
// checked by the shadow model (tests/engine/support/shadow_model.h), and replay is deterministic.
//
// To replay one seed with its full log: ALLOT_PROPERTY_SEED=1234 ./engine_property_test

#include <gtest/gtest.h>

#include "engine/support/property_suite.h"

namespace allot::testing {
namespace {

const PropertySuite kSuite = {.name = "engine property test",
                              .first_seed = 1,
                              .last_seed = 10'000,
                              .replay_seeds = 300,
                              .options = {.min_events = 15, .max_events = 40, .check = true},
                              .min_preemptions = 100};

TEST(EnginePropertyTest, EveryDecisionKeepsTheRules) { CheckEverySeed(kSuite); }

TEST(EnginePropertyTest, ReplayIsByteIdentical) { CheckReplay(kSuite); }

}  // namespace
}  // namespace allot::testing
