#include "server/config_wire.h"

namespace allot::server {

api::ServiceEnvironmentDetail ToWire(const ServiceEnvironmentRecord& env) {
  return {.name = env.name,
          .arn = env.arn,
          .type = env.type,
          .state = env.state,
          .status = env.status,
          .capacity_limits = env.capacity_limits,
          .tags = env.tags};
}

api::SchedulingPolicyDetail ToWire(const SchedulingPolicyRecord& policy) {
  return {.name = policy.name,
          .arn = policy.arn,
          .idle_resource_assignment = policy.idle_resource_assignment,
          .tags = policy.tags};
}

api::JobQueueDetail ToWire(const JobQueueRecord& queue) {
  api::JobQueueDetail out{.name = queue.name,
                          .arn = queue.arn,
                          .state = queue.state,
                          .status = queue.status,
                          .status_reason = queue.status_reason,
                          .priority = queue.priority,
                          .type = queue.type,
                          .scheduling_policy_arn = queue.scheduling_policy_arn,
                          .time_limit_actions = queue.time_limit_actions,
                          .tags = queue.tags};
  for (const EnvironmentOrder& o : queue.environment_order) {
    out.environment_order.emplace_back(o.order, o.service_environment);
  }
  return out;
}

api::QuotaShareDetail ToWire(const QuotaShareRecord& share, bool with_tags) {
  api::QuotaShareDetail out{.name = share.name,
                            .arn = share.arn,
                            .job_queue_arn = share.job_queue_arn,
                            .capacity_limits = share.capacity_limits,
                            .strategy = share.strategy,
                            .borrow_limit = share.borrow_limit,
                            .in_share_preemption = share.in_share_preemption,
                            .state = share.state,
                            .status = share.status};
  if (with_tags) out.tags = share.tags;
  return out;
}

}  // namespace allot::server
