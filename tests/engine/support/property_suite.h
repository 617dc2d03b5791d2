#pragma once

// The body of the randomized property suites (property_test.cc, property_slow_test.cc): run a
// seed range through the shadow model, and check that replays are byte-identical.
//
// To replay one seed with its full log: ALLOT_PROPERTY_SEED=1234 ./engine_property_test

#include <cstdint>

#include "engine/support/random_scenario.h"

namespace allot::testing {

struct PropertySuite {
  const char* name = "";
  std::uint64_t first_seed = 1;
  std::uint64_t last_seed = 1;
  std::uint64_t replay_seeds = 1;
  ScenarioOptions options;
  std::int64_t min_preemptions = 0;  // the scenarios must exercise preemption this much
  std::uint64_t progress_every = 0;  // print a line every N seeds (0 = never)
};

// Checks every decision of every seed; reports at most three failing seeds with their logs.
void CheckEverySeed(const PropertySuite& suite);
// Runs each of the first `replay_seeds` seeds twice on fresh engines: the decisions must match.
void CheckReplay(const PropertySuite& suite);

}  // namespace allot::testing
