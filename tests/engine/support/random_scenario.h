#pragma once

// A seeded random scenario for the engine: 1-2 queues with their service environments and quota
// shares, then random submissions, executor reports for what the engine dispatched or stopped,
// priority changes, terminations, ticks and configuration changes. The scenario reacts to the
// engine's decisions the way a real executor would, so the same seed always drives the same run.

#include <array>
#include <cstdint>
#include <string>

namespace allot::testing {

struct ScenarioOptions {
  int min_events = 40;
  int max_events = 80;
  bool check = true;  // feed the shadow model and stop at the first violated check
};

struct ScenarioResult {
  std::string error;       // the first violated check, "" when none
  std::string log;         // every event with its status and decisions
  std::string transcript;  // model::DecisionToString of every decision, one per line
  std::int64_t events = 0;
  std::int64_t decisions = 0;
  std::int64_t preemptions = 0;
  std::array<std::int64_t, 3> victims = {};  // by model::PreemptionRule
};

ScenarioResult RunScenario(std::uint64_t seed, const ScenarioOptions& options);

}  // namespace allot::testing
