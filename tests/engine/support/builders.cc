#include "engine/support/builders.h"

#include <gtest/gtest.h>

namespace allot::testing {

model::Event Environment(const std::string& name, std::vector<model::CapacityLimit> limits,
                         model::State state) {
  return model::PutServiceEnvironment{
      {.name = name, .capacity_limits = std::move(limits), .state = state}};
}

model::Event Queue(const std::string& name, const std::string& env,
                   std::vector<model::JobStateTimeLimitAction> actions, model::State state) {
  return model::PutJobQueue{{.name = name,
                             .service_environment = env,
                             .state = state,
                             .time_limit_actions = std::move(actions)}};
}

model::Event Share(const ShareSpec& spec) {
  return model::PutQuotaShare{{.queue = spec.queue,
                               .name = spec.name,
                               .capacity_limits = spec.limits,
                               .strategy = spec.strategy,
                               .borrow_limit = spec.borrow_limit,
                               .in_share_preemption = spec.in_share_preemption,
                               .state = spec.state}};
}

model::Event Job(const JobSpecBuilder& b, Timestamp now) {
  Result<model::Demand> demand = model::NormalizeDemand(b.need);
  EXPECT_TRUE(demand.ok()) << demand.status().ToString();
  model::JobSpec spec;
  spec.id = b.id;
  spec.queue = b.queue;
  spec.share = b.share;
  spec.priority = b.priority;
  spec.demand = demand.ok() ? demand.value() : model::Demand{};
  spec.preemption_retries = b.preemption_retries;
  spec.retry = {.attempts = b.attempts, .evaluate_on_exit = b.evaluate_on_exit};
  spec.attempt_timeout_seconds = b.timeout_seconds;
  spec.created_at = b.created_at == 0 ? now : b.created_at;
  return model::SubmitJob{std::move(spec)};
}

model::Decisions MustApply(engine::Engine& engine, const model::Event& event, Timestamp now) {
  model::Decisions out;
  Status s = engine.Apply(event, now, &out);
  EXPECT_TRUE(s.ok()) << model::EventToString(event) << ": " << s.ToString();
  return out;
}

std::vector<std::string> Lines(const model::Decisions& decisions) {
  std::vector<std::string> out;
  out.reserve(decisions.size());
  for (const model::Decision& d : decisions) out.push_back(model::DecisionToString(d));
  return out;
}

}  // namespace allot::testing
