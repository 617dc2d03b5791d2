#include "server/config_records.h"

#include "model/rules.h"

namespace allot::server {

bool UsesNumInstances(const ServiceEnvironmentRecord& env) {
  for (const model::CapacityLimit& l : env.capacity_limits) {
    if (l.unit == model::rules::kNumInstances) return true;
  }
  return false;
}

model::ServiceEnvironmentConfig EngineConfig(const ServiceEnvironmentRecord& env) {
  return {.name = env.name, .capacity_limits = env.capacity_limits, .state = env.state};
}

model::JobQueueConfig EngineConfig(const JobQueueRecord& queue) {
  return {.name = queue.name,
          .service_environment = queue.environment(),
          .state = queue.state,
          .time_limit_actions = queue.time_limit_actions};
}

model::QuotaShareConfig EngineConfig(const QuotaShareRecord& share) {
  return {.queue = share.queue,
          .name = share.name,
          .capacity_limits = share.capacity_limits,
          .strategy = share.strategy,
          .borrow_limit = share.borrow_limit.value_or(model::kUnlimitedBorrow),
          .in_share_preemption = share.in_share_preemption,
          .state = share.state};
}

}  // namespace allot::server
