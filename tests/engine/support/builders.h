#pragma once

// Builders for engine events, so that tests state only what matters to them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "model/event.h"

namespace allot::testing {

model::Event Environment(const std::string& name, std::vector<model::CapacityLimit> limits,
                         model::State state = model::State::kEnabled);
model::Event Queue(const std::string& name, const std::string& env,
                   std::vector<model::JobStateTimeLimitAction> actions = {},
                   model::State state = model::State::kEnabled);

struct ShareSpec {
  std::string queue = "q";
  std::string name;
  std::vector<model::CapacityLimit> limits;
  model::SharingStrategy strategy = model::SharingStrategy::kReserve;
  std::int64_t borrow_limit = -1;
  bool in_share_preemption = false;
  model::State state = model::State::kEnabled;
};
model::Event Share(const ShareSpec& spec);

struct JobSpecBuilder {
  model::JobId id = 0;
  std::string queue = "q";
  std::string share;
  std::int32_t priority = 0;
  std::vector<model::UnitCount> need;  // normalized by Job()
  std::optional<std::int32_t> preemption_retries;
  int attempts = 1;
  std::vector<model::EvaluateOnExit> evaluate_on_exit;
  std::optional<std::int64_t> timeout_seconds;
  Timestamp created_at = 0;  // 0 = the `now` the test submits at
};
// REQUIRES: `need` normalizes (see model::NormalizeDemand).
model::Event Job(const JobSpecBuilder& b, Timestamp now);

// Applies `event` and returns only the decisions it produced; fails the test on a bad status.
model::Decisions MustApply(engine::Engine& engine, const model::Event& event, Timestamp now);

// One line per decision (model::DecisionToString), for exact comparison in tests.
std::vector<std::string> Lines(const model::Decisions& decisions);

// Only the decisions of one kind, e.g. Only<model::Dispatch>(d).
template <typename T>
std::vector<T> Only(const model::Decisions& decisions) {
  std::vector<T> out;
  for (const model::Decision& d : decisions) {
    if (const T* x = std::get_if<T>(&d)) out.push_back(*x);
  }
  return out;
}

}  // namespace allot::testing
