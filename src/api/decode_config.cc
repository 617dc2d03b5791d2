// The configuration actions' requests: service environments, scheduling policies, job queues
// and quota shares.

#include "api/decoders.h"
#include "api/query.h"
#include "api/wire_error.h"
#include "model/rules.h"

namespace allot::api::decoders {

namespace {

// The limits if the request has them (`required`: it must).
std::optional<std::vector<model::CapacityLimit>> ReadCapacityLimits(const Json& r, bool required,
                                                                    std::int64_t min_capacity) {
  const char* field = "capacityLimits";
  const Json* limits = OptionalArray(r, field);
  if (limits == nullptr) {
    if (required) Refuse(std::string(field) + " is required");
    return std::nullopt;
  }
  RequireObjects(*limits, field);
  std::vector<model::CapacityLimit> parsed;
  for (const Json& l : *limits) {
    const std::string unit = RequireString(l, "capacityUnit", std::string(field) + ".capacityUnit");
    RefuseUnless(model::rules::CheckCapacityUnit(unit, std::string(field) + ".capacityUnit"));
    parsed.push_back({unit, RequireInt(l, "maxCapacity", min_capacity, model::rules::kMaxCapacity,
                                       std::string(field) + ".maxCapacity")});
  }
  RefuseUnless(model::rules::CheckCapacityLimits(parsed, min_capacity, field));
  return parsed;
}

std::optional<std::vector<model::CapacityLimit>> ReadEnvironmentLimits(const Json& r,
                                                                       bool required) {
  auto limits = ReadCapacityLimits(r, required, 0);
  if (limits) RefuseUnless(model::rules::CheckEnvironmentUnits(*limits, "capacityLimits"));
  return limits;
}

// quotaSharePolicy.idleResourceAssignmentStrategy, if the request has a quotaSharePolicy.
std::optional<std::string> ReadQuotaSharePolicy(const Json& r) {
  if (r.contains("fairsharePolicy") && !r["fairsharePolicy"].is_null()) {
    Refuse("fairsharePolicy is not supported: Allot schedules with quotaSharePolicy");
  }
  const Json* qsp = OptionalObject(r, "quotaSharePolicy");
  if (qsp == nullptr) return std::nullopt;
  return RequireEnum(*qsp, "idleResourceAssignmentStrategy", {"FIFO"},
                     "quotaSharePolicy.idleResourceAssignmentStrategy");
}

// A refusal names the list the caller sent (jobQueues, not jobQueue).
std::vector<NameOrArn> ReadNameList(const Json& r, const char* field, std::string_view type) {
  std::vector<NameOrArn> out;
  for (const std::string& sent : OptionalStringList(r, field, 100)) {
    out.push_back(NameOrArnOf(sent, type, field));
  }
  return out;
}

// The SDK sends an empty computeEnvironmentOrder beside serviceEnvironmentOrder; a queue has one
// or the other, as the model says, and every queue here is SAGEMAKER_TRAINING.
void RefuseComputeEnvironments(const Json& r) {
  if (const Json* ce = OptionalArray(r, "computeEnvironmentOrder"); ce && !ce->empty()) {
    Refuse(
        "computeEnvironmentOrder must be empty: SAGEMAKER_TRAINING job queues use "
        "serviceEnvironmentOrder");
  }
}

// serviceEnvironmentOrder, if the request has one: exactly one service environment.
std::optional<EnvironmentOrder> ReadEnvironmentOrder(const Json& r) {
  const Json* order = OptionalArray(r, "serviceEnvironmentOrder");
  if (order == nullptr) return std::nullopt;
  if (order->size() != 1) {
    Refuse("serviceEnvironmentOrder must name exactly one service environment, got " +
           std::to_string(order->size()));
  }
  RequireObjects(*order, "serviceEnvironmentOrder");
  EnvironmentOrder out;
  out.order = static_cast<std::int32_t>(RequireInt((*order)[0], "order", 0, model::rules::kMaxInt32,
                                                   "serviceEnvironmentOrder.order"));
  out.environment =
      NameOrArnOf(RequireString((*order)[0], "serviceEnvironment",
                                "serviceEnvironmentOrder.serviceEnvironment"),
                  "service-environment", "serviceEnvironmentOrder.serviceEnvironment");
  return out;
}

std::optional<std::vector<model::JobStateTimeLimitAction>> ReadTimeLimitActions(const Json& r) {
  const Json* actions = OptionalArray(r, "jobStateTimeLimitActions");
  if (actions == nullptr) return std::nullopt;
  if (actions->size() > model::rules::kMaxTimeLimitActions) {
    Refuse("jobStateTimeLimitActions allows at most 5 entries, got " +
           std::to_string(actions->size()));
  }
  RequireObjects(*actions, "jobStateTimeLimitActions");
  std::vector<model::JobStateTimeLimitAction> out;
  for (const Json& a : *actions) {
    const std::string reason = RequireString(a, "reason", "jobStateTimeLimitActions.reason");
    RequireLength(reason, "jobStateTimeLimitActions.reason", 1,
                  model::rules::kMaxJobQueueReasonLength);
    RequireEnum(a, "state", {"RUNNABLE"}, "jobStateTimeLimitActions.state");
    const std::int64_t max =
        RequireInt(a, "maxTimeSeconds", model::rules::kMinTimeLimitSeconds,
                   model::rules::kMaxTimeLimitSeconds, "jobStateTimeLimitActions.maxTimeSeconds");
    const std::string action =
        RequireEnum(a, "action", {"CANCEL", "TERMINATE"}, "jobStateTimeLimitActions.action");
    if (action != "TERMINATE") {
      Refuse(
          "jobStateTimeLimitActions.action must be TERMINATE for SAGEMAKER_TRAINING job "
          "queues, got \"" +
          action + "\"");
    }
    out.push_back({reason, max});
  }
  return out;
}

std::optional<Sharing> ReadSharing(const Json& obj, bool required) {
  const Json* sharing = OptionalObject(obj, "resourceSharingConfiguration");
  if (sharing == nullptr) {
    if (required) Refuse("resourceSharingConfiguration is required");
    return std::nullopt;
  }
  Sharing out{.strategy = *model::ParseSharingStrategy(
                  RequireEnum(*sharing, "strategy", {"RESERVE", "LEND", "LEND_AND_BORROW"},
                              "resourceSharingConfiguration.strategy"))};
  if (auto borrow =
          OptionalInt(*sharing, "borrowLimit", model::kUnlimitedBorrow,
                      model::rules::kMaxBorrowLimit, "resourceSharingConfiguration.borrowLimit")) {
    RefuseUnless(model::rules::CheckBorrowLimit(*borrow, out.strategy,
                                                "resourceSharingConfiguration.borrowLimit"));
    out.borrow_limit = *borrow;
  } else if (out.strategy == model::SharingStrategy::kLendAndBorrow) {
    out.borrow_limit = model::kUnlimitedBorrow;
  }
  return out;
}

// A share's limits count instance types; NUM_INSTANCES belongs to plain FIFO queues only.
std::optional<std::vector<model::CapacityLimit>> ReadShareLimits(const Json& r, bool required) {
  auto limits = ReadCapacityLimits(r, required, 1);
  for (const model::CapacityLimit& l : limits.value_or(std::vector<model::CapacityLimit>{})) {
    if (l.unit == model::rules::kNumInstances) {
      Refuse(
          "capacityLimits.capacityUnit of a quota share must be an instance type such as "
          "ml.g5.xlarge, got NUM_INSTANCES");
    }
  }
  return limits;
}

// preemptionConfiguration.inSharePreemption == ENABLED
std::optional<bool> ReadPreemption(const Json& obj, bool required) {
  const Json* p = OptionalObject(obj, "preemptionConfiguration");
  if (p == nullptr) {
    if (required) Refuse("preemptionConfiguration is required");
    return std::nullopt;
  }
  return RequireEnum(*p, "inSharePreemption", {"ENABLED", "DISABLED"},
                     "preemptionConfiguration.inSharePreemption") == "ENABLED";
}

std::string RequireName(const Json& r, const char* field) {
  std::string name = RequireString(r, field);
  RefuseUnless(model::rules::CheckName(name, field));
  return name;
}

}  // namespace

// --- service environments ---

CreateServiceEnvironmentRequest CreateServiceEnvironment(const Json& r) {
  CreateServiceEnvironmentRequest out;
  out.name = RequireName(r, "serviceEnvironmentName");
  RequireEnum(r, "serviceEnvironmentType", {"SAGEMAKER_TRAINING"});
  out.state = ReadState(r).value_or(model::State::kEnabled);
  out.capacity_limits = *ReadEnvironmentLimits(r, true);
  out.tags = ReadTagList(r);
  return out;
}

UpdateServiceEnvironmentRequest UpdateServiceEnvironment(const Json& r) {
  UpdateServiceEnvironmentRequest out;
  out.environment = ReadNameOrArn(r, "serviceEnvironment", "service-environment");
  out.state = ReadState(r);
  out.capacity_limits = ReadEnvironmentLimits(r, false);
  return out;
}

DescribeServiceEnvironmentsRequest DescribeServiceEnvironments(const Json& r) {
  return {.environments = ReadNameList(r, "serviceEnvironments", "service-environment"),
          .page = ReadPage(r)};
}

DeleteServiceEnvironmentRequest DeleteServiceEnvironment(const Json& r) {
  return {ReadNameOrArn(r, "serviceEnvironment", "service-environment")};
}

// --- scheduling policies ---

CreateSchedulingPolicyRequest CreateSchedulingPolicy(const Json& r) {
  CreateSchedulingPolicyRequest out;
  out.name = RequireName(r, "name");
  out.tags = ReadTagList(r);
  out.idle_resource_assignment = ReadQuotaSharePolicy(r);
  return out;
}

UpdateSchedulingPolicyRequest UpdateSchedulingPolicy(const Json& r) {
  return {.policy = NameOrArnOf(RequireString(r, "arn"), "scheduling-policy", "arn"),
          .idle_resource_assignment = ReadQuotaSharePolicy(r)};
}

DescribeSchedulingPoliciesRequest DescribeSchedulingPolicies(const Json& r) {
  if (OptionalArray(r, "arns") == nullptr) Refuse("arns is required");
  return {ReadNameList(r, "arns", "scheduling-policy")};
}

ListSchedulingPoliciesRequest ListSchedulingPolicies(const Json& r) { return {ReadPage(r)}; }

DeleteSchedulingPolicyRequest DeleteSchedulingPolicy(const Json& r) {
  return {NameOrArnOf(RequireString(r, "arn"), "scheduling-policy", "arn")};
}

// --- job queues ---

CreateJobQueueRequest CreateJobQueue(const Json& r) {
  CreateJobQueueRequest out;
  out.name = RequireName(r, "jobQueueName");
  out.priority =
      static_cast<std::int32_t>(RequireInt(r, "priority", 0, model::rules::kMaxJobQueuePriority));
  RefuseComputeEnvironments(r);
  out.type = OptionalEnum(r, "jobQueueType", {"EKS", "ECS", "ECS_FARGATE", "SAGEMAKER_TRAINING"})
                 .value_or("SAGEMAKER_TRAINING");
  if (out.type != "SAGEMAKER_TRAINING") {
    Refuse("jobQueueType must be SAGEMAKER_TRAINING, got \"" + out.type + "\"");
  }
  const std::optional<EnvironmentOrder> order = ReadEnvironmentOrder(r);
  if (!order) Refuse("serviceEnvironmentOrder must name exactly one service environment");
  out.environment_order = order->order;
  out.environment = order->environment;
  if (auto p = OptionalString(r, "schedulingPolicyArn")) {
    out.scheduling_policy = NameOrArnOf(*p, "scheduling-policy", "schedulingPolicyArn");
  }
  out.state = ReadState(r).value_or(model::State::kEnabled);
  out.tags = ReadTagList(r);
  out.time_limit_actions =
      ReadTimeLimitActions(r).value_or(std::vector<model::JobStateTimeLimitAction>{});
  return out;
}

UpdateJobQueueRequest UpdateJobQueue(const Json& r) {
  UpdateJobQueueRequest out;
  out.queue = ReadNameOrArn(r, "jobQueue", "job-queue");
  out.state = ReadState(r);
  if (auto priority = OptionalInt(r, "priority", 0, model::rules::kMaxJobQueuePriority)) {
    out.priority = static_cast<std::int32_t>(*priority);
  }
  if (auto p = OptionalString(r, "schedulingPolicyArn")) {
    out.scheduling_policy = NameOrArnOf(*p, "scheduling-policy", "schedulingPolicyArn");
  }
  out.time_limit_actions = ReadTimeLimitActions(r);
  RefuseComputeEnvironments(r);
  out.environment_order = ReadEnvironmentOrder(r);
  return out;
}

DescribeJobQueuesRequest DescribeJobQueues(const Json& r) {
  return {.queues = ReadNameList(r, "jobQueues", "job-queue"), .page = ReadPage(r)};
}

DeleteJobQueueRequest DeleteJobQueue(const Json& r) {
  return {ReadNameOrArn(r, "jobQueue", "job-queue")};
}

// --- quota shares ---

CreateQuotaShareRequest CreateQuotaShare(const Json& r) {
  CreateQuotaShareRequest out;
  out.name = RequireName(r, "quotaShareName");
  out.queue = ReadNameOrArn(r, "jobQueue", "job-queue");
  out.capacity_limits = *ReadShareLimits(r, true);
  out.sharing = *ReadSharing(r, true);
  out.in_share_preemption = *ReadPreemption(r, true);
  out.state = ReadState(r).value_or(model::State::kEnabled);
  out.tags = ReadTagList(r);
  return out;
}

UpdateQuotaShareRequest UpdateQuotaShare(const Json& r) {
  UpdateQuotaShareRequest out;
  out.share = ReadShareArn(r);
  out.capacity_limits = ReadShareLimits(r, false);
  out.sharing = ReadSharing(r, false);
  out.in_share_preemption = ReadPreemption(r, false);
  out.state = ReadState(r);
  return out;
}

DescribeQuotaShareRequest DescribeQuotaShare(const Json& r) { return {ReadShareArn(r)}; }

ListQuotaSharesRequest ListQuotaShares(const Json& r) {
  return {.queue = ReadNameOrArn(r, "jobQueue", "job-queue"), .page = ReadPage(r)};
}

DeleteQuotaShareRequest DeleteQuotaShare(const Json& r) { return {ReadShareArn(r)}; }

}  // namespace allot::api::decoders
