// The configuration answers: service environments, scheduling policies, job queues, quota shares.

#include "api/encode.h"
#include "api/encode_bodies.h"

namespace allot::api {

using Json = nlohmann::json;

namespace {

Json Limits(const std::vector<model::CapacityLimit>& limits) {
  Json out = Json::array();
  for (const model::CapacityLimit& l : limits) {
    out.push_back({{"capacityUnit", l.unit}, {"maxCapacity", l.max_capacity}});
  }
  return out;
}

std::string StateName(model::State s) { return std::string(model::ToString(s)); }

// A list with its nextToken, when there is one.
template <typename Item, typename Fn>
Json Listed(const char* field, const std::vector<Item>& items,
            const std::optional<std::string>& next_token, Fn encode) {
  Json out = {{field, Json::array()}};
  for (const Item& item : items) out[field].push_back(encode(item));
  if (next_token) out["nextToken"] = *next_token;
  return out;
}

}  // namespace

Json EncodeTags(const TagList& tags) {
  Json out = Json::object();
  for (const auto& [k, v] : tags) out[k] = v;
  return out;
}

Json Encode(const ServiceEnvironmentDetail& env) {
  return {{"serviceEnvironmentName", env.name},
          {"serviceEnvironmentArn", env.arn},
          {"serviceEnvironmentType", env.type},
          {"state", StateName(env.state)},
          {"status", env.status},
          {"capacityLimits", Limits(env.capacity_limits)},
          {"tags", EncodeTags(env.tags)}};
}

Json Encode(const SchedulingPolicyDetail& policy) {
  Json out = {{"name", policy.name}, {"arn", policy.arn}, {"tags", EncodeTags(policy.tags)}};
  if (policy.idle_resource_assignment) {
    out["quotaSharePolicy"] = {
        {"idleResourceAssignmentStrategy", *policy.idle_resource_assignment}};
  }
  return out;
}

Json Encode(const JobQueueDetail& queue) {
  Json order = Json::array();
  for (const auto& [position, environment] : queue.environment_order) {
    order.push_back({{"order", position}, {"serviceEnvironment", environment}});
  }
  Json actions = Json::array();
  for (const model::JobStateTimeLimitAction& a : queue.time_limit_actions) {
    actions.push_back({{"reason", a.reason},
                       {"state", "RUNNABLE"},
                       {"maxTimeSeconds", a.max_time_seconds},
                       {"action", "TERMINATE"}});
  }
  Json out = {{"jobQueueName", queue.name},
              {"jobQueueArn", queue.arn},
              {"state", StateName(queue.state)},
              {"status", queue.status},
              {"statusReason", queue.status_reason},
              {"priority", queue.priority},
              {"serviceEnvironmentOrder", order},
              {"jobQueueType", queue.type},
              // Required in the model; SAGEMAKER_TRAINING queues have none.
              {"computeEnvironmentOrder", Json::array()},
              {"tags", EncodeTags(queue.tags)},
              {"jobStateTimeLimitActions", actions}};
  if (!queue.scheduling_policy_arn.empty()) {
    out["schedulingPolicyArn"] = queue.scheduling_policy_arn;
  }
  return out;
}

Json Encode(const QuotaShareDetail& share) {
  Json sharing = {{"strategy", model::ToString(share.strategy)}};
  if (share.borrow_limit) sharing["borrowLimit"] = *share.borrow_limit;
  Json out = {{"quotaShareName", share.name},
              {"quotaShareArn", share.arn},
              {"jobQueueArn", share.job_queue_arn},
              {"capacityLimits", Limits(share.capacity_limits)},
              {"resourceSharingConfiguration", sharing},
              {"preemptionConfiguration",
               {{"inSharePreemption", share.in_share_preemption ? "ENABLED" : "DISABLED"}}},
              {"state", StateName(share.state)},
              {"status", share.status}};
  if (share.tags) out["tags"] = EncodeTags(*share.tags);
  return out;
}

namespace bodies {

Json Body(const ServiceEnvironmentChanged& r) {
  return {{"serviceEnvironmentName", r.name}, {"serviceEnvironmentArn", r.arn}};
}
Json Body(const DescribeServiceEnvironmentsResponse& r) {
  return Listed("serviceEnvironments", r.environments, r.next_token,
                [](const ServiceEnvironmentDetail& e) { return Encode(e); });
}
Json Body(const SchedulingPolicyCreated& r) { return {{"name", r.name}, {"arn", r.arn}}; }
Json Body(const DescribeSchedulingPoliciesResponse& r) {
  return Listed("schedulingPolicies", r.policies, std::nullopt,
                [](const SchedulingPolicyDetail& p) { return Encode(p); });
}
Json Body(const ListSchedulingPoliciesResponse& r) {
  return Listed("schedulingPolicies", r.arns, r.next_token, [](const std::string& arn) {
    return Json{{"arn", arn}};
  });
}
Json Body(const JobQueueChanged& r) { return {{"jobQueueName", r.name}, {"jobQueueArn", r.arn}}; }
Json Body(const DescribeJobQueuesResponse& r) {
  return Listed("jobQueues", r.queues, r.next_token,
                [](const JobQueueDetail& q) { return Encode(q); });
}
Json Body(const QuotaShareChanged& r) {
  return {{"quotaShareName", r.name}, {"quotaShareArn", r.arn}};
}
Json Body(const ListQuotaSharesResponse& r) {
  return Listed("quotaShares", r.shares, r.next_token,
                [](const QuotaShareDetail& s) { return Encode(s); });
}

}  // namespace bodies

}  // namespace allot::api
