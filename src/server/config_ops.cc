// Service environments, scheduling policies, job queues and quota shares: validation, the
// AWS-shaped documents, and the engine events they become.

#include <set>

#include "model/rules.h"
#include "server/api_error.h"
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
    Refuse(field + " must be a " + type + " name (1 to 128 letters, digits, hyphens and "
           "underscores) or its ARN, got " + Quoted(Json(name_or_arn)));
  }
  return name;
}

Json ReadCapacityLimits(const Json& r, bool required, std::int64_t min_capacity,
                        const char* field = "capacityLimits") {
  const Json* limits = OptionalArray(r, field);
  if (limits == nullptr) {
    if (required) Refuse(std::string(field) + " is required");
    return nullptr;
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
  Json out = Json::array();
  for (const model::CapacityLimit& l : parsed) {
    out.push_back({{"capacityUnit", l.unit}, {"maxCapacity", l.max_capacity}});
  }
  return out;
}

// The SDK's helpers compare this message exactly to tell "already there" from a failure.
[[noreturn]] void RefuseExisting() { Refuse("Object already exists"); }

std::vector<model::CapacityLimit> ToLimits(const Json& limits) {
  std::vector<model::CapacityLimit> out;
  for (const Json& l : limits) {
    out.push_back({l.at("capacityUnit").get<std::string>(), l.at("maxCapacity").get<std::int64_t>()});
  }
  return out;
}

model::State StateOf(const Json& doc) {
  return doc.value("state", "ENABLED") == "DISABLED" ? model::State::kDisabled
                                                      : model::State::kEnabled;
}

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

bool UsesNumInstances(const Json& env) {
  for (const Json& l : env.at("capacityLimits")) {
    if (l.at("capacityUnit") == model::rules::kNumInstances) return true;
  }
  return false;
}

Json* Controller::FindEnvironment(const std::string& name_or_arn) {
  auto it = environments_.find(NameOf(name_or_arn, "service-environment", "serviceEnvironment"));
  return it == environments_.end() ? nullptr : &it->second;
}

Json* Controller::FindPolicy(const std::string& name_or_arn) {
  auto it = policies_.find(NameOf(name_or_arn, "scheduling-policy", "schedulingPolicyArn"));
  return it == policies_.end() ? nullptr : &it->second;
}

Json* Controller::FindQueue(const std::string& name_or_arn) {
  auto it = queues_.find(NameOf(name_or_arn, "job-queue", "jobQueue"));
  return it == queues_.end() ? nullptr : &it->second;
}

Json& Controller::MustFindQueue(const std::string& name_or_arn) {
  Json* q = FindQueue(name_or_arn);
  if (q == nullptr) Refuse("jobQueue " + name_or_arn + " does not exist");
  return *q;
}

bool Controller::IsQuotaManaged(const Json& queue) const {
  const std::string arn = queue.value("schedulingPolicyArn", "");
  if (arn.empty()) return false;
  auto it = policies_.find(NameOf(arn, "scheduling-policy", "schedulingPolicyArn"));
  return it != policies_.end() && it->second.contains("quotaSharePolicy");
}

// "arn:...:job-queue/<queue>/quota-share/<share>" -> {queue, share}
std::pair<std::string, std::string> Controller::ShareKeyFromArn(const std::string& arn) const {
  const std::string q = ":job-queue/";
  const std::string s = "/quota-share/";
  auto qp = arn.find(q);
  auto sp = arn.find(s);
  if (arn.rfind("arn:", 0) != 0 || qp == std::string::npos || sp == std::string::npos || sp < qp) {
    Refuse("quotaShareArn must look like arn:aws:batch:<region>:<account>:job-queue/<queue>/"
           "quota-share/<share>, got " + Quoted(Json(arn)));
  }
  std::string queue = arn.substr(qp + q.size(), sp - qp - q.size());
  std::string share = arn.substr(sp + s.size());
  if (!model::rules::CheckName(queue, "").ok() || !model::rules::CheckName(share, "").ok()) {
    Refuse("quotaShareArn must name a job queue and a quota share (1 to 128 letters, digits, "
           "hyphens and underscores each), got " + Quoted(Json(arn)));
  }
  return {std::move(queue), std::move(share)};
}

void Controller::PutEnvironmentToEngine(const Json& env) {
  Apply(model::PutServiceEnvironment{{.name = env.at("serviceEnvironmentName").get<std::string>(),
                                      .capacity_limits = ToLimits(env.at("capacityLimits")),
                                      .state = StateOf(env)}});
  for (auto& [name, queue] : queues_) {
    if (!IsQuotaManaged(queue) &&
        queue.at("serviceEnvironmentOrder")[0].at("serviceEnvironment") ==
            env.at("serviceEnvironmentName")) {
      PutImplicitShare(queue);
    }
  }
}

void Controller::PutQueueToEngine(const Json& queue) {
  model::JobQueueConfig c;
  c.name = queue.at("jobQueueName").get<std::string>();
  c.service_environment = queue.at("serviceEnvironmentOrder")[0].at("serviceEnvironment");
  c.state = StateOf(queue);
  for (const Json& a : queue.value("jobStateTimeLimitActions", Json::array())) {
    c.time_limit_actions.push_back({a.at("reason"), a.at("maxTimeSeconds")});
  }
  Apply(model::PutJobQueue{c});
  if (!IsQuotaManaged(queue)) PutImplicitShare(queue);
}

// A queue without a quota-share policy is one FIFO share that owns the whole environment.
void Controller::PutImplicitShare(const Json& queue) {
  const Json& env = environments_.at(queue.at("serviceEnvironmentOrder")[0].at("serviceEnvironment"));
  std::vector<model::CapacityLimit> limits = ToLimits(env.at("capacityLimits"));
  for (model::CapacityLimit& l : limits) l.max_capacity = std::max<std::int64_t>(1, l.max_capacity);
  Apply(model::PutQuotaShare{{.queue = queue.at("jobQueueName"),
                              .name = kImplicitShare,
                              .capacity_limits = limits,
                              .strategy = model::SharingStrategy::kReserve}});
}

void Controller::PutShareToEngine(const Json& share) {
  const Json& sharing = share.at("resourceSharingConfiguration");
  const std::string strategy = sharing.at("strategy");
  Apply(model::PutQuotaShare{
      {.queue = NameOf(share.at("jobQueueArn"), "job-queue", "jobQueueArn"),
       .name = share.at("quotaShareName"),
       .capacity_limits = ToLimits(share.at("capacityLimits")),
       .strategy = *model::ParseSharingStrategy(strategy),
       .borrow_limit = sharing.value("borrowLimit", std::int64_t{-1}),
       .in_share_preemption =
           share.at("preemptionConfiguration").at("inSharePreemption") == "ENABLED",
       .state = StateOf(share)}});
}

// --- service environments ---

Controller::Reply Controller::CreateServiceEnvironment(const Json& r) {
  const std::string name = RequireString(r, "serviceEnvironmentName");
  RefuseUnless(model::rules::CheckName(name, "serviceEnvironmentName"));
  RequireEnum(r, "serviceEnvironmentType", {"SAGEMAKER_TRAINING"});
  const std::string state = OptionalEnum(r, "state", {"ENABLED", "DISABLED"}).value_or("ENABLED");
  Json limits = ReadCapacityLimits(r, true, 0);
  RefuseUnless(model::rules::CheckEnvironmentUnits(ToLimits(limits), "capacityLimits"));
  if (environments_.count(name)) RefuseExisting();
  Json env = {{"serviceEnvironmentName", name},
              {"serviceEnvironmentArn", Arn("service-environment/" + name)},
              {"serviceEnvironmentType", "SAGEMAKER_TRAINING"},
              {"state", state},
              {"status", "VALID"},
              {"capacityLimits", limits},
              {"tags", ReadTags(r)}};
  PutEnvironmentToEngine(env);  // no queue is attached yet: only the engine reads it
  environments_[name] = env;
  pending_.Put(store::Kind::kServiceEnvironment, name, env.dump());
  return {{{"serviceEnvironmentName", name}, {"serviceEnvironmentArn", env["serviceEnvironmentArn"]}}};
}

Controller::Reply Controller::UpdateServiceEnvironment(const Json& r) {
  const std::string key = RequireString(r, "serviceEnvironment");
  Json* env = FindEnvironment(key);
  if (env == nullptr) Refuse("serviceEnvironment " + key + " does not exist");
  Json updated = *env;
  if (auto state = OptionalEnum(r, "state", {"ENABLED", "DISABLED"})) updated["state"] = *state;
  if (Json limits = ReadCapacityLimits(r, false, 0); !limits.is_null()) {
    RefuseUnless(model::rules::CheckEnvironmentUnits(ToLimits(limits), "capacityLimits"));
    const bool was_num = UsesNumInstances(*env);
    updated["capacityLimits"] = limits;
    if (UsesNumInstances(updated) != was_num) {
      Refuse("capacityLimits cannot switch service environment " +
             updated["serviceEnvironmentName"].get<std::string>() +
             " between NUM_INSTANCES and instance types");
    }
  }
  const Json before = *env;
  *env = updated;  // PutEnvironmentToEngine reads it for the queues attached
  try {
    PutEnvironmentToEngine(updated);
  } catch (const ClientError&) {
    *env = before;  // the engine refused it and changed nothing
    throw;
  }
  pending_.Put(store::Kind::kServiceEnvironment, updated["serviceEnvironmentName"], updated.dump());
  return {{{"serviceEnvironmentName", updated["serviceEnvironmentName"]},
           {"serviceEnvironmentArn", updated["serviceEnvironmentArn"]}}};
}

Controller::Reply Controller::DescribeServiceEnvironments(const Json& r) {
  if (std::vector<std::string> names = OptionalStringList(r, "serviceEnvironments", 100);
      !names.empty()) {
    Json out = {{"serviceEnvironments", Json::array()}};
    for (const std::string& n : names) {
      if (Json* env = FindEnvironment(n)) out["serviceEnvironments"].push_back(*env);
    }
    return {out};
  }
  return {Page(environments_, r, "serviceEnvironments", [](const Json& e) { return e; })};
}

Controller::Reply Controller::DeleteServiceEnvironment(const Json& r) {
  const std::string key = RequireString(r, "serviceEnvironment");
  Json* env = FindEnvironment(key);
  if (env == nullptr) Refuse("serviceEnvironment " + key + " does not exist");
  const std::string name = (*env)["serviceEnvironmentName"];
  if (env->value("state", "") != "DISABLED") {
    Refuse("serviceEnvironment " + name + " must be DISABLED before it is deleted (state is " +
           env->value("state", "") + ")");
  }
  for (const auto& [qn, q] : queues_) {
    if (q.at("serviceEnvironmentOrder")[0].at("serviceEnvironment") == name) {
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

Json ReadQuotaSharePolicy(const Json& r) {
  if (r.contains("fairsharePolicy") && !r["fairsharePolicy"].is_null()) {
    Refuse("fairsharePolicy is not supported: Allot schedules with quotaSharePolicy");
  }
  const Json* qsp = OptionalObject(r, "quotaSharePolicy");
  if (qsp == nullptr) return nullptr;
  return Json{{"idleResourceAssignmentStrategy",
               RequireEnum(*qsp, "idleResourceAssignmentStrategy", {"FIFO"})}};
}

}  // namespace

Controller::Reply Controller::CreateSchedulingPolicy(const Json& r) {
  const std::string name = RequireString(r, "name");
  RefuseUnless(model::rules::CheckName(name, "name"));
  if (policies_.count(name)) RefuseExisting();
  Json policy = {{"name", name}, {"arn", Arn("scheduling-policy/" + name)}, {"tags", ReadTags(r)}};
  if (Json qsp = ReadQuotaSharePolicy(r); !qsp.is_null()) policy["quotaSharePolicy"] = qsp;
  policies_[name] = policy;
  pending_.Put(store::Kind::kSchedulingPolicy, name, policy.dump());
  return {{{"name", name}, {"arn", policy["arn"]}}};
}

Controller::Reply Controller::UpdateSchedulingPolicy(const Json& r) {
  const std::string arn = RequireString(r, "arn");
  Json* policy = FindPolicy(arn);
  if (policy == nullptr) Refuse("scheduling policy " + arn + " does not exist");
  Json qsp = ReadQuotaSharePolicy(r);
  if (qsp.is_null() && policy->contains("quotaSharePolicy")) {
    Refuse("quotaSharePolicy cannot be removed from scheduling policy " +
           (*policy)["name"].get<std::string>());
  }
  if (!qsp.is_null()) (*policy)["quotaSharePolicy"] = qsp;
  pending_.Put(store::Kind::kSchedulingPolicy, (*policy)["name"], policy->dump());
  return {};
}

Controller::Reply Controller::DescribeSchedulingPolicies(const Json& r) {
  if (OptionalArray(r, "arns") == nullptr) Refuse("arns is required");
  Json out = {{"schedulingPolicies", Json::array()}};
  for (const std::string& a : OptionalStringList(r, "arns", 100)) {
    if (Json* p = FindPolicy(a)) out["schedulingPolicies"].push_back(*p);
  }
  return {out};
}

Controller::Reply Controller::ListSchedulingPolicies(const Json& r) {
  return {Page(policies_, r, "schedulingPolicies", [](const Json& p) {
    return Json{{"arn", p["arn"]}};
  })};
}

Controller::Reply Controller::DeleteSchedulingPolicy(const Json& r) {
  const std::string arn = RequireString(r, "arn");
  Json* policy = FindPolicy(arn);
  if (policy == nullptr) Refuse("scheduling policy " + arn + " does not exist");
  const std::string name = (*policy)["name"];
  for (const auto& [qn, q] : queues_) {
    if (q.value("schedulingPolicyArn", "") == (*policy)["arn"]) {
      Refuse("scheduling policy " + name + " is used by job queue " + qn);
    }
  }
  policies_.erase(name);
  pending_.Delete(store::Kind::kSchedulingPolicy, name);
  return {};
}

// --- job queues ---

namespace {

Json ReadTimeLimitActions(const Json& r) {
  const Json* actions = OptionalArray(r, "jobStateTimeLimitActions");
  if (actions == nullptr) return nullptr;
  if (actions->size() > model::rules::kMaxTimeLimitActions) {
    Refuse("jobStateTimeLimitActions allows at most 5 entries, got " +
           std::to_string(actions->size()));
  }
  RequireObjects(*actions, "jobStateTimeLimitActions");
  Json out = Json::array();
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
      Refuse("jobStateTimeLimitActions.action must be TERMINATE for SAGEMAKER_TRAINING job "
             "queues, got \"" + action + "\"");
    }
    out.push_back({{"reason", reason}, {"state", "RUNNABLE"}, {"maxTimeSeconds", max},
                   {"action", action}});
  }
  return out;
}

}  // namespace

Controller::Reply Controller::CreateJobQueue(const Json& r) {
  const std::string name = RequireString(r, "jobQueueName");
  RefuseUnless(model::rules::CheckName(name, "jobQueueName"));
  const std::int64_t priority =
      RequireInt(r, "priority", 0, model::rules::kMaxJobQueuePriority);
  // The SDK sends an empty computeEnvironmentOrder beside serviceEnvironmentOrder.
  if (const Json* ce = OptionalArray(r, "computeEnvironmentOrder"); ce && !ce->empty()) {
    Refuse("computeEnvironmentOrder must be empty: SAGEMAKER_TRAINING job queues use "
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
  const std::string env_key =
      RequireString((*order)[0], "serviceEnvironment", "serviceEnvironmentOrder.serviceEnvironment");
  Json* env = FindEnvironment(env_key);
  if (env == nullptr) Refuse("serviceEnvironment " + env_key + " does not exist");
  const std::string env_name = (*env)["serviceEnvironmentName"];
  std::string policy_arn;
  bool quota_managed = false;
  if (auto p = OptionalString(r, "schedulingPolicyArn")) {
    Json* policy = FindPolicy(*p);
    if (policy == nullptr) Refuse("schedulingPolicyArn " + *p + " does not exist");
    policy_arn = (*policy)["arn"];
    quota_managed = policy->contains("quotaSharePolicy");
  }
  if (queues_.count(name)) RefuseExisting();
  if (quota_managed && UsesNumInstances(*env)) {
    Refuse("serviceEnvironment " + env_name + " counts NUM_INSTANCES, which only plain FIFO job "
           "queues take; a queue with a quota-share policy needs limits per instance type");
  }
  Json queue = {{"jobQueueName", name},
                {"jobQueueArn", Arn("job-queue/" + name)},
                {"state", OptionalEnum(r, "state", {"ENABLED", "DISABLED"}).value_or("ENABLED")},
                {"status", "VALID"},
                {"statusReason", "JobQueue Healthy"},
                {"priority", priority},
                {"serviceEnvironmentOrder",
                 Json::array({{{"order", order_value},
                               {"serviceEnvironment", env_name}}})},
                {"jobQueueType", type},
                {"tags", ReadTags(r)},
                {"jobStateTimeLimitActions", ReadTimeLimitActions(r)}};
  if (queue["jobStateTimeLimitActions"].is_null()) queue["jobStateTimeLimitActions"] = Json::array();
  if (!policy_arn.empty()) queue["schedulingPolicyArn"] = policy_arn;
  queues_[name] = queue;
  try {
    PutQueueToEngine(queue);
  } catch (...) {
    queues_.erase(name);
    throw;
  }
  pending_.Put(store::Kind::kJobQueue, name, queue.dump());
  return {{{"jobQueueName", name}, {"jobQueueArn", queue["jobQueueArn"]}}};
}

Controller::Reply Controller::UpdateJobQueue(const Json& r) {
  Json& queue = MustFindQueue(RequireString(r, "jobQueue"));
  Json updated = queue;
  if (auto state = OptionalEnum(r, "state", {"ENABLED", "DISABLED"})) updated["state"] = *state;
  if (auto priority = OptionalInt(r, "priority", 0, model::rules::kMaxJobQueuePriority)) {
    updated["priority"] = *priority;
  }
  if (auto p = OptionalString(r, "schedulingPolicyArn")) {
    Json* policy = FindPolicy(*p);
    if (policy == nullptr) Refuse("schedulingPolicyArn " + *p + " does not exist");
    if (IsQuotaManaged(queue) != policy->contains("quotaSharePolicy")) {
      Refuse("schedulingPolicyArn cannot change whether job queue " +
             queue["jobQueueName"].get<std::string>() + " uses quota shares");
    }
    updated["schedulingPolicyArn"] = (*policy)["arn"];
  }
  if (Json actions = ReadTimeLimitActions(r); !actions.is_null()) {
    updated["jobStateTimeLimitActions"] = actions;
  }
  queue = updated;
  PutQueueToEngine(updated);
  pending_.Put(store::Kind::kJobQueue, updated["jobQueueName"], updated.dump());
  return {{{"jobQueueName", updated["jobQueueName"]}, {"jobQueueArn", updated["jobQueueArn"]}}};
}

Controller::Reply Controller::DescribeJobQueues(const Json& r) {
  if (std::vector<std::string> names = OptionalStringList(r, "jobQueues", 100); !names.empty()) {
    Json out = {{"jobQueues", Json::array()}};
    for (const std::string& n : names) {
      if (Json* q = FindQueue(n)) out["jobQueues"].push_back(*q);
    }
    return {out};
  }
  return {Page(queues_, r, "jobQueues", [](const Json& q) { return q; })};
}

Controller::Reply Controller::DeleteJobQueue(const Json& r) {
  Json& queue = MustFindQueue(RequireString(r, "jobQueue"));
  const std::string name = queue["jobQueueName"];
  if (queue.value("state", "") != "DISABLED") {
    Refuse("jobQueue " + name + " must be DISABLED before it is deleted (state is " +
           queue.value("state", "") + ")");
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

Json ReadSharing(const Json& obj, bool required) {
  const Json* sharing = OptionalObject(obj, "resourceSharingConfiguration");
  if (sharing == nullptr) {
    if (required) Refuse("resourceSharingConfiguration is required");
    return nullptr;
  }
  const std::string strategy =
      RequireEnum(*sharing, "strategy", {"RESERVE", "LEND", "LEND_AND_BORROW"},
                  "resourceSharingConfiguration.strategy");
  Json out = {{"strategy", strategy}};
  if (auto borrow = OptionalInt(*sharing, "borrowLimit", model::kUnlimitedBorrow,
                                model::rules::kMaxBorrowLimit,
                                "resourceSharingConfiguration.borrowLimit")) {
    RefuseUnless(model::rules::CheckBorrowLimit(*borrow, *model::ParseSharingStrategy(strategy),
                                                "resourceSharingConfiguration.borrowLimit"));
    out["borrowLimit"] = *borrow;
  } else if (strategy == "LEND_AND_BORROW") {
    out["borrowLimit"] = -1;
  }
  return out;
}

// A share's limits count instance types; NUM_INSTANCES belongs to plain FIFO queues only.
Json ReadShareLimits(const Json& r, bool required) {
  Json limits = ReadCapacityLimits(r, required, 1);
  for (const Json& l : limits.is_null() ? Json::array() : limits) {
    if (l["capacityUnit"] == model::rules::kNumInstances) {
      Refuse("capacityLimits.capacityUnit of a quota share must be an instance type such as "
             "ml.g5.xlarge, got NUM_INSTANCES");
    }
  }
  return limits;
}

Json ReadPreemption(const Json& obj, bool required) {
  const Json* p = OptionalObject(obj, "preemptionConfiguration");
  if (p == nullptr) {
    if (required) Refuse("preemptionConfiguration is required");
    return nullptr;
  }
  return Json{{"inSharePreemption", RequireEnum(*p, "inSharePreemption", {"ENABLED", "DISABLED"},
                                               "preemptionConfiguration.inSharePreemption")}};
}

Json ShareSummary(const Json& share) {
  Json s = share;
  s.erase("tags");
  return s;
}

}  // namespace

Controller::Reply Controller::CreateQuotaShare(const Json& r) {
  const std::string name = RequireString(r, "quotaShareName");
  RefuseUnless(model::rules::CheckName(name, "quotaShareName"));
  Json& queue = MustFindQueue(RequireString(r, "jobQueue"));
  const std::string qname = queue["jobQueueName"];
  if (!IsQuotaManaged(queue)) {
    Refuse("job queue " + qname + " has no scheduling policy with a quotaSharePolicy, so it "
           "takes no quota shares");
  }
  Json limits = ReadShareLimits(r, true);
  Json sharing = ReadSharing(r, true);
  Json preemption = ReadPreemption(r, true);
  const std::string key = qname + "/" + name;
  if (shares_.count(key)) RefuseExisting();
  std::size_t count = 0;
  for (const auto& [k, s] : shares_) count += k.rfind(qname + "/", 0) == 0 ? 1U : 0U;
  if (count >= model::rules::kMaxSharesPerQueue) {
    Refuse("job queue " + qname + " already has the maximum of 20 quota shares");
  }
  Json share = {{"quotaShareName", name},
                {"quotaShareArn", Arn("job-queue/" + qname + "/quota-share/" + name)},
                {"jobQueueArn", queue["jobQueueArn"]},
                {"capacityLimits", limits},
                {"resourceSharingConfiguration", sharing},
                {"preemptionConfiguration", preemption},
                {"state", OptionalEnum(r, "state", {"ENABLED", "DISABLED"}).value_or("ENABLED")},
                {"status", "VALID"},
                {"tags", ReadTags(r)}};
  PutShareToEngine(share);
  shares_[key] = share;
  pending_.Put(store::Kind::kQuotaShare, key, share.dump());
  return {{{"quotaShareName", name}, {"quotaShareArn", share["quotaShareArn"]}}};
}

Controller::Reply Controller::UpdateQuotaShare(const Json& r) {
  const auto [qname, name] = ShareKeyFromArn(RequireString(r, "quotaShareArn"));
  auto it = shares_.find(qname + "/" + name);
  if (it == shares_.end()) Refuse("quota share " + name + " does not exist in job queue " + qname);
  Json updated = it->second;
  if (Json limits = ReadShareLimits(r, false); !limits.is_null()) {
    updated["capacityLimits"] = limits;
  }
  if (Json sharing = ReadSharing(r, false); !sharing.is_null()) {
    updated["resourceSharingConfiguration"] = sharing;
  }
  if (Json p = ReadPreemption(r, false); !p.is_null()) updated["preemptionConfiguration"] = p;
  if (auto state = OptionalEnum(r, "state", {"ENABLED", "DISABLED"})) updated["state"] = *state;
  PutShareToEngine(updated);
  it->second = updated;
  pending_.Put(store::Kind::kQuotaShare, it->first, updated.dump());
  return {{{"quotaShareName", name}, {"quotaShareArn", updated["quotaShareArn"]}}};
}

Controller::Reply Controller::DescribeQuotaShare(const Json& r) {
  const auto [qname, name] = ShareKeyFromArn(RequireString(r, "quotaShareArn"));
  auto it = shares_.find(qname + "/" + name);
  if (it == shares_.end()) Refuse("quota share " + name + " does not exist in job queue " + qname);
  return {it->second};
}

Controller::Reply Controller::ListQuotaShares(const Json& r) {
  const std::string qname = MustFindQueue(RequireString(r, "jobQueue"))["jobQueueName"];
  std::map<std::string, Json> mine;
  for (const auto& [k, s] : shares_) {
    if (k.rfind(qname + "/", 0) == 0) mine[s["quotaShareName"]] = s;
  }
  return {Page(mine, r, "quotaShares", ShareSummary)};
}

Controller::Reply Controller::DeleteQuotaShare(const Json& r) {
  const auto [qname, name] = ShareKeyFromArn(RequireString(r, "quotaShareArn"));
  auto it = shares_.find(qname + "/" + name);
  if (it == shares_.end()) Refuse("quota share " + name + " does not exist in job queue " + qname);
  if (it->second.value("state", "") != "DISABLED") {
    Refuse("quota share " + name + " must be DISABLED before it is deleted (state is " +
           it->second.value("state", "") + ")");
  }
  Apply(model::DeleteQuotaShare{qname, name});
  pending_.Delete(store::Kind::kQuotaShare, it->first);
  shares_.erase(it);
  return {};
}

}  // namespace allot::server
