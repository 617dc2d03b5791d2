// Service environments, scheduling policies, job queues and quota shares: validation, the
// typed records (config_records.h; their documents are config_wire.h), and the engine events
// they become.

#include <optional>
#include <utility>

#include "model/rules.h"
#include "server/api_error.h"
#include "server/config_wire.h"
#include "server/controller.h"

namespace allot::server {

namespace {

// The name at the end of an ARN ("arn:aws:batch:<region>:<account>:job-queue/<name>") or the
// value itself; either way it must be a valid name, so "q1/x" never resolves to "q1".
std::string NameOf(const std::string& name_or_arn, const std::string& type,
                   const std::string& field) {
  std::string name = name_or_arn;
  if (name_or_arn.rfind("arn:", 0) == 0) {
    const std::string marker = ":" + type + "/";
    auto pos = name_or_arn.find(marker);
    if (pos == std::string::npos) {
      Refuse(field + " must be a " + type + " name or ARN, got " + Quoted(Json(name_or_arn)));
    }
    name = name_or_arn.substr(pos + marker.size());
  }
  if (!model::rules::CheckName(name, field).ok()) {
    Refuse(field + " must be a " + type +
           " name (1 to 128 letters, digits, hyphens and "
           "underscores) or its ARN, got " +
           Quoted(Json(name_or_arn)));
  }
  return name;
}

// The limits if the request has them (`required`: it must).
std::optional<std::vector<model::CapacityLimit>> ReadCapacityLimits(
    const Json& r, bool required, std::int64_t min_capacity, const char* field = "capacityLimits") {
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

// The SDK's helpers compare this message exactly to tell "already there" from a failure.
[[noreturn]] void RefuseExisting() { Refuse("Object already exists"); }

std::optional<model::State> ReadState(const Json& r) {
  std::optional<std::string> state = OptionalEnum(r, "state", {"ENABLED", "DISABLED"});
  if (!state) return std::nullopt;
  return model::ParseState(*state);
}

std::string StateName(model::State s) { return std::string(model::ToString(s)); }

// maxResults / nextToken paging over a name-ordered map.
template <typename Map, typename Fn>
Json Page(const Map& items, const Json& r, const char* list_field, Fn item) {
  const std::int64_t max =
      OptionalInt(r, "maxResults", 1, model::rules::kMaxPageSize).value_or(100);
  const std::string token = OptionalString(r, "nextToken").value_or("");
  Json out = {{list_field, Json::array()}};
  for (auto it = token.empty() ? items.begin() : items.upper_bound(token); it != items.end();
       ++it) {
    if (static_cast<std::int64_t>(out[list_field].size()) == max) {
      out["nextToken"] = std::prev(it)->first;
      break;
    }
    out[list_field].push_back(item(it->second));
  }
  return out;
}

}  // namespace

ServiceEnvironmentRecord* Controller::FindEnvironment(const std::string& name_or_arn) {
  auto it = environments_.find(NameOf(name_or_arn, "service-environment", "serviceEnvironment"));
  return it == environments_.end() ? nullptr : &it->second;
}

SchedulingPolicyRecord* Controller::FindPolicy(const std::string& name_or_arn) {
  auto it = policies_.find(NameOf(name_or_arn, "scheduling-policy", "schedulingPolicyArn"));
  return it == policies_.end() ? nullptr : &it->second;
}

JobQueueRecord* Controller::FindQueue(const std::string& name_or_arn) {
  auto it = queues_.find(NameOf(name_or_arn, "job-queue", "jobQueue"));
  return it == queues_.end() ? nullptr : &it->second;
}

JobQueueRecord& Controller::MustFindQueue(const std::string& name_or_arn) {
  JobQueueRecord* q = FindQueue(name_or_arn);
  if (q == nullptr) Refuse("jobQueue " + name_or_arn + " does not exist");
  return *q;
}

bool Controller::IsQuotaManaged(const JobQueueRecord& queue) const {
  if (queue.scheduling_policy_arn.empty()) return false;
  auto it = policies_.find(
      NameOf(queue.scheduling_policy_arn, "scheduling-policy", "schedulingPolicyArn"));
  return it != policies_.end() && it->second.takes_quota_shares();
}

// "arn:...:job-queue/<queue>/quota-share/<share>" -> {queue, share}
std::pair<std::string, std::string> Controller::ShareKeyFromArn(const std::string& arn) const {
  const std::string q = ":job-queue/";
  const std::string s = "/quota-share/";
  auto qp = arn.find(q);
  auto sp = arn.find(s);
  if (arn.rfind("arn:", 0) != 0 || qp == std::string::npos || sp == std::string::npos || sp < qp) {
    Refuse(
        "quotaShareArn must look like arn:aws:batch:<region>:<account>:job-queue/<queue>/"
        "quota-share/<share>, got " +
        Quoted(Json(arn)));
  }
  std::string queue = arn.substr(qp + q.size(), sp - qp - q.size());
  std::string share = arn.substr(sp + s.size());
  if (!model::rules::CheckName(queue, "").ok() || !model::rules::CheckName(share, "").ok()) {
    Refuse(
        "quotaShareArn must name a job queue and a quota share (1 to 128 letters, digits, "
        "hyphens and underscores each), got " +
        Quoted(Json(arn)));
  }
  return {std::move(queue), std::move(share)};
}

void Controller::PutEnvironmentToEngine(const ServiceEnvironmentRecord& env) {
  Apply(model::PutServiceEnvironment{EngineConfig(env)});
  for (auto& [name, queue] : queues_) {
    if (!IsQuotaManaged(queue) && queue.environment() == env.name) PutImplicitShare(queue);
  }
}

void Controller::PutQueueToEngine(const JobQueueRecord& queue) {
  Apply(model::PutJobQueue{EngineConfig(queue)});
  if (!IsQuotaManaged(queue)) PutImplicitShare(queue);
}

// A queue without a quota-share policy is one FIFO share that owns the whole environment.
void Controller::PutImplicitShare(const JobQueueRecord& queue) {
  std::vector<model::CapacityLimit> limits = environments_.at(queue.environment()).capacity_limits;
  for (model::CapacityLimit& l : limits) l.max_capacity = std::max<std::int64_t>(1, l.max_capacity);
  Apply(model::PutQuotaShare{{.queue = queue.name,
                              .name = kImplicitShare,
                              .capacity_limits = limits,
                              .strategy = model::SharingStrategy::kReserve}});
}

void Controller::PutShareToEngine(const QuotaShareRecord& share) {
  Apply(model::PutQuotaShare{EngineConfig(share)});
}

// --- service environments ---

Controller::Reply Controller::CreateServiceEnvironment(const Json& r) {
  const std::string name = RequireString(r, "serviceEnvironmentName");
  RefuseUnless(model::rules::CheckName(name, "serviceEnvironmentName"));
  RequireEnum(r, "serviceEnvironmentType", {"SAGEMAKER_TRAINING"});
  const model::State state = ReadState(r).value_or(model::State::kEnabled);
  std::vector<model::CapacityLimit> limits = *ReadCapacityLimits(r, true, 0);
  RefuseUnless(model::rules::CheckEnvironmentUnits(limits, "capacityLimits"));
  if (environments_.count(name)) RefuseExisting();
  ServiceEnvironmentRecord env{.name = name,
                               .arn = Arn("service-environment/" + name),
                               .state = state,
                               .capacity_limits = std::move(limits),
                               .tags = TagsFrom(ReadTags(r))};
  PutEnvironmentToEngine(env);  // no queue is attached yet: only the engine reads it
  const ServiceEnvironmentRecord& stored = environments_[name] = std::move(env);
  pending_.Put(store::Kind::kServiceEnvironment, name, Encode(stored));
  pending_effects_.push_back([this] { executor_->ConfigurationChanged(); });
  return {{{"serviceEnvironmentName", name}, {"serviceEnvironmentArn", stored.arn}}};
}

Controller::Reply Controller::UpdateServiceEnvironment(const Json& r) {
  const std::string key = RequireString(r, "serviceEnvironment");
  ServiceEnvironmentRecord* env = FindEnvironment(key);
  if (env == nullptr) Refuse("serviceEnvironment " + key + " does not exist");
  ServiceEnvironmentRecord updated = *env;
  if (auto state = ReadState(r)) updated.state = *state;
  if (auto limits = ReadCapacityLimits(r, false, 0)) {
    RefuseUnless(model::rules::CheckEnvironmentUnits(*limits, "capacityLimits"));
    const bool was_num = UsesNumInstances(*env);
    updated.capacity_limits = std::move(*limits);
    if (UsesNumInstances(updated) != was_num) {
      Refuse("capacityLimits cannot switch service environment " + updated.name +
             " between NUM_INSTANCES and instance types");
    }
  }
  // PutEnvironmentToEngine reads it from environments_ for the queues attached.
  ServiceEnvironmentRecord before = std::exchange(*env, std::move(updated));
  try {
    PutEnvironmentToEngine(*env);
  } catch (const ClientError&) {
    *env = std::move(before);  // the engine refused it and changed nothing
    throw;
  }
  pending_.Put(store::Kind::kServiceEnvironment, env->name, Encode(*env));
  pending_effects_.push_back([this] { executor_->ConfigurationChanged(); });
  return {{{"serviceEnvironmentName", env->name}, {"serviceEnvironmentArn", env->arn}}};
}

Controller::Reply Controller::DescribeServiceEnvironments(const Json& r) {
  if (std::vector<std::string> names = OptionalStringList(r, "serviceEnvironments", 100);
      !names.empty()) {
    Json out = {{"serviceEnvironments", Json::array()}};
    for (const std::string& n : names) {
      if (ServiceEnvironmentRecord* env = FindEnvironment(n)) {
        out["serviceEnvironments"].push_back(DescribeEnvironment(*env));
      }
    }
    return {out};
  }
  return {Page(environments_, r, "serviceEnvironments", DescribeEnvironment)};
}

Controller::Reply Controller::DeleteServiceEnvironment(const Json& r) {
  const std::string key = RequireString(r, "serviceEnvironment");
  ServiceEnvironmentRecord* env = FindEnvironment(key);
  if (env == nullptr) Refuse("serviceEnvironment " + key + " does not exist");
  const std::string name = env->name;
  if (env->state != model::State::kDisabled) {
    Refuse("serviceEnvironment " + name + " must be DISABLED before it is deleted (state is " +
           StateName(env->state) + ")");
  }
  for (const auto& [qn, q] : queues_) {
    if (q.environment() == name) {
      Refuse("serviceEnvironment " + name + " is attached to job queue " + qn +
             "; detach it first");
    }
  }
  Apply(model::DeleteServiceEnvironment{name});
  environments_.erase(name);
  pending_.Delete(store::Kind::kServiceEnvironment, name);
  return {};
}

// --- scheduling policies ---

namespace {

// quotaSharePolicy.idleResourceAssignmentStrategy, if the request has a quotaSharePolicy.
std::optional<std::string> ReadQuotaSharePolicy(const Json& r) {
  if (r.contains("fairsharePolicy") && !r["fairsharePolicy"].is_null()) {
    Refuse("fairsharePolicy is not supported: Allot schedules with quotaSharePolicy");
  }
  const Json* qsp = OptionalObject(r, "quotaSharePolicy");
  if (qsp == nullptr) return std::nullopt;
  return RequireEnum(*qsp, "idleResourceAssignmentStrategy", {"FIFO"});
}

}  // namespace

Controller::Reply Controller::CreateSchedulingPolicy(const Json& r) {
  const std::string name = RequireString(r, "name");
  RefuseUnless(model::rules::CheckName(name, "name"));
  if (policies_.count(name)) RefuseExisting();
  SchedulingPolicyRecord policy{.name = name, .arn = Arn("scheduling-policy/" + name)};
  policy.tags = TagsFrom(ReadTags(r));
  policy.idle_resource_assignment = ReadQuotaSharePolicy(r);
  const SchedulingPolicyRecord& stored = policies_[name] = std::move(policy);
  pending_.Put(store::Kind::kSchedulingPolicy, name, Encode(stored));
  return {{{"name", name}, {"arn", stored.arn}}};
}

Controller::Reply Controller::UpdateSchedulingPolicy(const Json& r) {
  const std::string arn = RequireString(r, "arn");
  SchedulingPolicyRecord* policy = FindPolicy(arn);
  if (policy == nullptr) Refuse("scheduling policy " + arn + " does not exist");
  std::optional<std::string> qsp = ReadQuotaSharePolicy(r);
  if (!qsp && policy->takes_quota_shares()) {
    Refuse("quotaSharePolicy cannot be removed from scheduling policy " + policy->name);
  }
  if (qsp) policy->idle_resource_assignment = std::move(qsp);
  pending_.Put(store::Kind::kSchedulingPolicy, policy->name, Encode(*policy));
  return {};
}

Controller::Reply Controller::DescribeSchedulingPolicies(const Json& r) {
  if (OptionalArray(r, "arns") == nullptr) Refuse("arns is required");
  Json out = {{"schedulingPolicies", Json::array()}};
  for (const std::string& a : OptionalStringList(r, "arns", 100)) {
    if (SchedulingPolicyRecord* p = FindPolicy(a)) {
      out["schedulingPolicies"].push_back(DescribePolicy(*p));
    }
  }
  return {out};
}

Controller::Reply Controller::ListSchedulingPolicies(const Json& r) {
  return {Page(policies_, r, "schedulingPolicies", SummarizePolicy)};
}

Controller::Reply Controller::DeleteSchedulingPolicy(const Json& r) {
  const std::string arn = RequireString(r, "arn");
  SchedulingPolicyRecord* policy = FindPolicy(arn);
  if (policy == nullptr) Refuse("scheduling policy " + arn + " does not exist");
  const std::string name = policy->name;
  for (const auto& [qn, q] : queues_) {
    if (q.scheduling_policy_arn == policy->arn) {
      Refuse("scheduling policy " + name + " is used by job queue " + qn);
    }
  }
  policies_.erase(name);
  pending_.Delete(store::Kind::kSchedulingPolicy, name);
  return {};
}

// --- job queues ---

namespace {

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
    if (reason.empty() || reason.size() > model::rules::kMaxJobQueueReasonLength) {
      Refuse("jobStateTimeLimitActions.reason must be 1 to 256 characters, got " +
             std::to_string(reason.size()));
    }
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

}  // namespace

Controller::Reply Controller::CreateJobQueue(const Json& r) {
  const std::string name = RequireString(r, "jobQueueName");
  RefuseUnless(model::rules::CheckName(name, "jobQueueName"));
  const std::int64_t priority = RequireInt(r, "priority", 0, model::rules::kMaxJobQueuePriority);
  // The SDK sends an empty computeEnvironmentOrder beside serviceEnvironmentOrder.
  if (const Json* ce = OptionalArray(r, "computeEnvironmentOrder"); ce && !ce->empty()) {
    Refuse(
        "computeEnvironmentOrder must be empty: SAGEMAKER_TRAINING job queues use "
        "serviceEnvironmentOrder");
  }
  const std::string type =
      OptionalEnum(r, "jobQueueType", {"EKS", "ECS", "ECS_FARGATE", "SAGEMAKER_TRAINING"})
          .value_or("SAGEMAKER_TRAINING");
  if (type != "SAGEMAKER_TRAINING") {
    Refuse("jobQueueType must be SAGEMAKER_TRAINING, got \"" + type + "\"");
  }
  const Json* order = OptionalArray(r, "serviceEnvironmentOrder");
  if (order == nullptr || order->size() != 1) {
    Refuse("serviceEnvironmentOrder must name exactly one service environment");
  }
  RequireObjects(*order, "serviceEnvironmentOrder");
  const std::int64_t order_value =
      OptionalInt((*order)[0], "order", 0, model::rules::kMaxInt32, "serviceEnvironmentOrder.order")
          .value_or(1);
  const std::string env_key = RequireString((*order)[0], "serviceEnvironment",
                                            "serviceEnvironmentOrder.serviceEnvironment");
  const ServiceEnvironmentRecord* env = FindEnvironment(env_key);
  if (env == nullptr) Refuse("serviceEnvironment " + env_key + " does not exist");
  std::string policy_arn;
  bool quota_managed = false;
  if (auto p = OptionalString(r, "schedulingPolicyArn")) {
    const SchedulingPolicyRecord* policy = FindPolicy(*p);
    if (policy == nullptr) Refuse("schedulingPolicyArn " + *p + " does not exist");
    policy_arn = policy->arn;
    quota_managed = policy->takes_quota_shares();
  }
  if (queues_.count(name)) RefuseExisting();
  if (quota_managed && UsesNumInstances(*env)) {
    Refuse("serviceEnvironment " + env->name +
           " counts NUM_INSTANCES, which only plain FIFO job "
           "queues take; a queue with a quota-share policy needs limits per instance type");
  }
  // The checks of state, tags and jobStateTimeLimitActions come in this order, after the above.
  JobQueueRecord queue{.name = name,
                       .arn = Arn("job-queue/" + name),
                       .state = ReadState(r).value_or(model::State::kEnabled),
                       .priority = static_cast<std::int32_t>(priority),
                       .environment_order = {{static_cast<std::int32_t>(order_value), env->name}},
                       .type = type,
                       .scheduling_policy_arn = policy_arn};
  queue.tags = TagsFrom(ReadTags(r));
  queue.time_limit_actions =
      ReadTimeLimitActions(r).value_or(std::vector<model::JobStateTimeLimitAction>{});
  const JobQueueRecord& stored = queues_[name] = std::move(queue);
  try {
    PutQueueToEngine(stored);
  } catch (...) {
    queues_.erase(name);
    throw;
  }
  pending_.Put(store::Kind::kJobQueue, name, Encode(stored));
  return {{{"jobQueueName", name}, {"jobQueueArn", stored.arn}}};
}

Controller::Reply Controller::UpdateJobQueue(const Json& r) {
  JobQueueRecord& queue = MustFindQueue(RequireString(r, "jobQueue"));
  JobQueueRecord updated = queue;
  if (auto state = ReadState(r)) updated.state = *state;
  if (auto priority = OptionalInt(r, "priority", 0, model::rules::kMaxJobQueuePriority)) {
    updated.priority = static_cast<std::int32_t>(*priority);
  }
  if (auto p = OptionalString(r, "schedulingPolicyArn")) {
    const SchedulingPolicyRecord* policy = FindPolicy(*p);
    if (policy == nullptr) Refuse("schedulingPolicyArn " + *p + " does not exist");
    if (IsQuotaManaged(queue) != policy->takes_quota_shares()) {
      Refuse("schedulingPolicyArn cannot change whether job queue " + queue.name +
             " uses quota shares");
    }
    updated.scheduling_policy_arn = policy->arn;
  }
  if (auto actions = ReadTimeLimitActions(r)) updated.time_limit_actions = std::move(*actions);
  JobQueueRecord before = std::exchange(queue, std::move(updated));
  try {
    PutQueueToEngine(queue);
  } catch (const ClientError&) {
    queue = std::move(before);  // the engine refused it and changed nothing
    throw;
  }
  pending_.Put(store::Kind::kJobQueue, queue.name, Encode(queue));
  return {{{"jobQueueName", queue.name}, {"jobQueueArn", queue.arn}}};
}

Controller::Reply Controller::DescribeJobQueues(const Json& r) {
  if (std::vector<std::string> names = OptionalStringList(r, "jobQueues", 100); !names.empty()) {
    Json out = {{"jobQueues", Json::array()}};
    for (const std::string& n : names) {
      if (JobQueueRecord* q = FindQueue(n)) out["jobQueues"].push_back(DescribeQueue(*q));
    }
    return {out};
  }
  return {Page(queues_, r, "jobQueues", DescribeQueue)};
}

Controller::Reply Controller::DeleteJobQueue(const Json& r) {
  const JobQueueRecord& queue = MustFindQueue(RequireString(r, "jobQueue"));
  const std::string name = queue.name;
  if (queue.state != model::State::kDisabled) {
    Refuse("jobQueue " + name + " must be DISABLED before it is deleted (state is " +
           StateName(queue.state) + ")");
  }
  Apply(model::DeleteJobQueue{name});
  for (auto it = shares_.begin(); it != shares_.end();) {
    if (it->first.rfind(name + "/", 0) == 0) {
      pending_.Delete(store::Kind::kQuotaShare, it->first);
      it = shares_.erase(it);
    } else {
      ++it;
    }
  }
  queues_.erase(name);
  pending_.Delete(store::Kind::kJobQueue, name);
  return {};
}

// --- quota shares ---

namespace {

// resourceSharingConfiguration; LEND_AND_BORROW without a borrowLimit gets -1 (unlimited).
struct Sharing {
  model::SharingStrategy strategy = model::SharingStrategy::kReserve;
  std::optional<std::int64_t> borrow_limit;
};

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

}  // namespace

Controller::Reply Controller::CreateQuotaShare(const Json& r) {
  const std::string name = RequireString(r, "quotaShareName");
  RefuseUnless(model::rules::CheckName(name, "quotaShareName"));
  const JobQueueRecord& queue = MustFindQueue(RequireString(r, "jobQueue"));
  const std::string& qname = queue.name;
  if (!IsQuotaManaged(queue)) {
    Refuse("job queue " + qname +
           " has no scheduling policy with a quotaSharePolicy, so it "
           "takes no quota shares");
  }
  std::vector<model::CapacityLimit> limits = *ReadShareLimits(r, true);
  const Sharing sharing = *ReadSharing(r, true);
  const bool preemption = *ReadPreemption(r, true);
  const std::string key = qname + "/" + name;
  if (shares_.count(key)) RefuseExisting();
  std::size_t count = 0;
  for (const auto& [k, s] : shares_) count += k.rfind(qname + "/", 0) == 0 ? 1U : 0U;
  if (count >= model::rules::kMaxSharesPerQueue) {
    Refuse("job queue " + qname + " already has the maximum of 20 quota shares");
  }
  QuotaShareRecord share{.name = name,
                         .arn = Arn("job-queue/" + qname + "/quota-share/" + name),
                         .queue = qname,
                         .job_queue_arn = queue.arn,
                         .capacity_limits = std::move(limits),
                         .strategy = sharing.strategy,
                         .borrow_limit = sharing.borrow_limit,
                         .in_share_preemption = preemption,
                         .state = ReadState(r).value_or(model::State::kEnabled)};
  share.tags = TagsFrom(ReadTags(r));
  PutShareToEngine(share);
  const QuotaShareRecord& stored = shares_[key] = std::move(share);
  pending_.Put(store::Kind::kQuotaShare, key, Encode(stored));
  return {{{"quotaShareName", name}, {"quotaShareArn", stored.arn}}};
}

// The share as UpdateQuotaShare `r` would leave it (also what-if's, whatif_ops.cc).
QuotaShareRecord Controller::UpdatedShare(const Json& r) {
  const auto [qname, name] = ShareKeyFromArn(RequireString(r, "quotaShareArn"));
  auto it = shares_.find(qname + "/" + name);
  if (it == shares_.end()) Refuse("quota share " + name + " does not exist in job queue " + qname);
  QuotaShareRecord updated = it->second;
  if (auto limits = ReadShareLimits(r, false)) updated.capacity_limits = std::move(*limits);
  if (auto sharing = ReadSharing(r, false)) {
    updated.strategy = sharing->strategy;
    updated.borrow_limit = sharing->borrow_limit;
  }
  if (auto p = ReadPreemption(r, false)) updated.in_share_preemption = *p;
  if (auto state = ReadState(r)) updated.state = *state;
  return updated;
}

Controller::Reply Controller::UpdateQuotaShare(const Json& r) {
  QuotaShareRecord updated = UpdatedShare(r);
  const std::string name = updated.name;
  auto it = shares_.find(updated.Key());
  PutShareToEngine(updated);
  it->second = std::move(updated);
  pending_.Put(store::Kind::kQuotaShare, it->first, Encode(it->second));
  return {{{"quotaShareName", name}, {"quotaShareArn", it->second.arn}}};
}

Controller::Reply Controller::DescribeQuotaShare(const Json& r) {
  const auto [qname, name] = ShareKeyFromArn(RequireString(r, "quotaShareArn"));
  auto it = shares_.find(qname + "/" + name);
  if (it == shares_.end()) Refuse("quota share " + name + " does not exist in job queue " + qname);
  return {DescribeShare(it->second)};
}

Controller::Reply Controller::ListQuotaShares(const Json& r) {
  const std::string qname = MustFindQueue(RequireString(r, "jobQueue")).name;
  std::map<std::string, const QuotaShareRecord*> mine;  // by share name, for the page token
  for (const auto& [k, s] : shares_) {
    if (k.rfind(qname + "/", 0) == 0) mine[s.name] = &s;
  }
  return {
      Page(mine, r, "quotaShares", [](const QuotaShareRecord* s) { return SummarizeShare(*s); })};
}

Controller::Reply Controller::DeleteQuotaShare(const Json& r) {
  const auto [qname, name] = ShareKeyFromArn(RequireString(r, "quotaShareArn"));
  auto it = shares_.find(qname + "/" + name);
  if (it == shares_.end()) Refuse("quota share " + name + " does not exist in job queue " + qname);
  if (it->second.state != model::State::kDisabled) {
    Refuse("quota share " + name + " must be DISABLED before it is deleted (state is " +
           StateName(it->second.state) + ")");
  }
  Apply(model::DeleteQuotaShare{qname, name});
  pending_.Delete(store::Kind::kQuotaShare, it->first);
  shares_.erase(it);
  return {};
}

}  // namespace allot::server
