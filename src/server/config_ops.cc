// Service environments, scheduling policies, job queues and quota shares: validation, the
// typed records (config_records.h; their documents are config_wire.h), and the engine events
// they become.

#include <optional>
#include <utility>

#include "model/rules.h"
#include "server/api_error.h"
#include "server/config_codec.h"
#include "server/controller.h"

namespace allot::server {

namespace {

// The SDK's helpers compare this message exactly to tell "already there" from a failure.
Status Existing() { return AlreadyExists("Object already exists"); }

std::string StateName(model::State s) { return std::string(model::ToString(s)); }

// maxResults / nextToken paging over a name-ordered map: the page's entries, each by `item`, into
// `list`, and the token of the next page, if there is one.
template <typename Map, typename Item, typename Fn>
std::optional<std::string> Page(const Map& items, const api::PageRequest& page,
                                std::vector<Item>& list, Fn item) {
  for (auto it = page.next_token.empty() ? items.begin() : items.upper_bound(page.next_token);
       it != items.end(); ++it) {
    if (static_cast<std::int64_t>(list.size()) == page.max_results) return std::prev(it)->first;
    list.push_back(item(it->second));
  }
  return std::nullopt;
}

// The records of a name-ordered map a Describe names, in the order named; a name that names
// none is left out.
template <typename Item, typename Map>
std::vector<Item> Named(const std::vector<api::NameOrArn>& names, const Map& items) {
  std::vector<Item> out;
  for (const api::NameOrArn& n : names) {
    if (auto it = items.find(n.name); it != items.end()) out.push_back(ToWire(it->second));
  }
  return out;
}

// A Describe that takes a list of names: the records named (Named) when there are any, else a
// page of them all (Page). Into `list`; the next page's token, if there is one.
template <typename Item, typename Map>
std::optional<std::string> NamedOrPage(const std::vector<api::NameOrArn>& names,
                                       const api::PageRequest& page, const Map& items,
                                       std::vector<Item>& list) {
  if (!names.empty()) {
    list = Named<Item>(names, items);
    return std::nullopt;
  }
  return Page(items, page, list, [](const auto& record) { return ToWire(record); });
}

}  // namespace

ServiceEnvironmentRecord* Controller::FindEnvironment(const std::string& name) {
  auto it = environments_.find(name);
  return it == environments_.end() ? nullptr : &it->second;
}

SchedulingPolicyRecord* Controller::FindPolicy(const std::string& name) {
  auto it = policies_.find(name);
  return it == policies_.end() ? nullptr : &it->second;
}

JobQueueRecord* Controller::FindQueue(const std::string& name) {
  auto it = queues_.find(name);
  return it == queues_.end() ? nullptr : &it->second;
}

Result<JobQueueRecord*> Controller::QueueNamed(const api::NameOrArn& queue) {
  JobQueueRecord* q = FindQueue(queue.name);
  if (q == nullptr) return InvalidArgument("jobQueue " + queue.sent + " does not exist");
  return q;
}

Result<QuotaShareRecord*> Controller::ShareNamed(const api::ShareArn& share) {
  auto it = shares_.find(share.queue + "/" + share.share);
  if (it == shares_.end()) {
    return InvalidArgument("quota share " + share.share + " does not exist in job queue " +
                           share.queue);
  }
  return &it->second;
}

// A policy is named by its ARN in a queue's record: the name is what follows the last '/'. Every
// question of which policy a queue uses is answered by this one rule.
const SchedulingPolicyRecord* Controller::PolicyOf(const JobQueueRecord& queue) const {
  if (queue.scheduling_policy_arn.empty()) return nullptr;
  const std::string& arn = queue.scheduling_policy_arn;
  auto it = policies_.find(arn.substr(arn.rfind('/') + 1));
  return it == policies_.end() ? nullptr : &it->second;
}

// The first queue, in name order, that uses `policy`; null when none does.
const JobQueueRecord* Controller::QueueUsing(const SchedulingPolicyRecord& policy) const {
  for (const auto& [name, queue] : queues_) {
    if (PolicyOf(queue) == &policy) return &queue;
  }
  return nullptr;
}

bool Controller::IsQuotaManaged(const JobQueueRecord& queue) const {
  const SchedulingPolicyRecord* policy = PolicyOf(queue);
  return policy != nullptr && policy->takes_quota_shares();
}

Status Controller::PutEnvironmentToEngine(const ServiceEnvironmentRecord& env) {
  ALLOT_RETURN_IF_ERROR(Apply(model::PutServiceEnvironment{EngineConfig(env)}));
  for (auto& [name, queue] : queues_) {
    if (!IsQuotaManaged(queue) && queue.environment() == env.name) {
      ALLOT_RETURN_IF_ERROR(PutImplicitShare(queue));
    }
  }
  return {};
}

Status Controller::PutQueueToEngine(const JobQueueRecord& queue) {
  ALLOT_RETURN_IF_ERROR(Apply(model::PutJobQueue{EngineConfig(queue)}));
  return IsQuotaManaged(queue) ? Status() : PutImplicitShare(queue);
}

// A queue without a quota-share policy is one FIFO share that owns the whole environment.
Status Controller::PutImplicitShare(const JobQueueRecord& queue) {
  std::vector<model::CapacityLimit> limits = environments_.at(queue.environment()).capacity_limits;
  for (model::CapacityLimit& l : limits) l.max_capacity = std::max<std::int64_t>(1, l.max_capacity);
  return Apply(model::PutQuotaShare{{.queue = queue.name,
                                     .name = kImplicitShare,
                                     .capacity_limits = limits,
                                     .strategy = model::SharingStrategy::kReserve}});
}

Status Controller::PutShareToEngine(const QuotaShareRecord& share) {
  return Apply(model::PutQuotaShare{EngineConfig(share)});
}

// --- service environments ---

Result<Controller::Reply> Controller::Handle(const api::CreateServiceEnvironmentRequest& r) {
  if (environments_.count(r.name)) return Existing();
  ServiceEnvironmentRecord env{.name = r.name,
                               .arn = Arn("service-environment/" + r.name),
                               .state = r.state,
                               .capacity_limits = r.capacity_limits,
                               .tags = r.tags};
  // No queue is attached yet: only the engine reads it.
  ALLOT_RETURN_IF_ERROR(PutEnvironmentToEngine(env));
  const ServiceEnvironmentRecord& stored = environments_[r.name] = std::move(env);
  pending_.Put(store::Kind::kServiceEnvironment, r.name, Encode(stored));
  pending_effects_.push_back([this] { executor_->ConfigurationChanged(); });
  return Reply{api::ServiceEnvironmentChanged{r.name, stored.arn}};
}

Result<Controller::Reply> Controller::Handle(const api::UpdateServiceEnvironmentRequest& r) {
  ServiceEnvironmentRecord* env = FindEnvironment(r.environment.name);
  if (env == nullptr)
    return InvalidArgument("serviceEnvironment " + r.environment.sent + " does not exist");
  ServiceEnvironmentRecord updated = UpdatedEnvironment(*env, r);
  if (UsesNumInstances(updated) != UsesNumInstances(*env)) {
    return InvalidArgument("capacityLimits cannot switch service environment " + updated.name +
                           " between NUM_INSTANCES and instance types");
  }
  // PutEnvironmentToEngine reads it from environments_ for the queues attached.
  ServiceEnvironmentRecord before = std::exchange(*env, std::move(updated));
  if (Status s = PutEnvironmentToEngine(*env); !s.ok()) {
    // The engine refused the first event and changed nothing; were a later one refused, RunAs
    // rolls the engine back to the store.
    *env = std::move(before);
    return s;
  }
  pending_.Put(store::Kind::kServiceEnvironment, env->name, Encode(*env));
  pending_effects_.push_back([this] { executor_->ConfigurationChanged(); });
  return Reply{api::ServiceEnvironmentChanged{env->name, env->arn}};
}

// The environment as UpdateServiceEnvironment `r` would leave it, unchecked (also what the
// audit record compares, authorize.cc).
ServiceEnvironmentRecord Controller::UpdatedEnvironment(
    const ServiceEnvironmentRecord& env, const api::UpdateServiceEnvironmentRequest& r) {
  ServiceEnvironmentRecord updated = env;
  if (r.state) updated.state = *r.state;
  if (r.capacity_limits) updated.capacity_limits = *r.capacity_limits;
  return updated;
}

Result<Controller::Reply> Controller::Handle(const api::DescribeServiceEnvironmentsRequest& r) {
  api::DescribeServiceEnvironmentsResponse out;
  out.next_token = NamedOrPage(r.environments, r.page, environments_, out.environments);
  return Reply{std::move(out)};
}

Result<Controller::Reply> Controller::Handle(const api::DeleteServiceEnvironmentRequest& r) {
  ServiceEnvironmentRecord* env = FindEnvironment(r.environment.name);
  if (env == nullptr)
    return InvalidArgument("serviceEnvironment " + r.environment.sent + " does not exist");
  const std::string name = env->name;
  if (env->state != model::State::kDisabled) {
    return InvalidArgument("serviceEnvironment " + name +
                           " must be DISABLED before it is deleted (state is " +
                           StateName(env->state) + ")");
  }
  for (const auto& [qn, q] : queues_) {
    if (q.environment() == name) {
      return InvalidArgument("serviceEnvironment " + name + " is attached to job queue " + qn +
                             "; detach it first");
    }
  }
  ALLOT_RETURN_IF_ERROR(Apply(model::DeleteServiceEnvironment{name}));
  environments_.erase(name);
  pending_.Delete(store::Kind::kServiceEnvironment, name);
  return Reply{};
}

// --- scheduling policies ---

Result<Controller::Reply> Controller::Handle(const api::CreateSchedulingPolicyRequest& r) {
  if (policies_.count(r.name)) return Existing();
  SchedulingPolicyRecord policy{.name = r.name, .arn = Arn("scheduling-policy/" + r.name)};
  policy.tags = r.tags;
  policy.idle_resource_assignment = r.idle_resource_assignment;
  const SchedulingPolicyRecord& stored = policies_[r.name] = std::move(policy);
  pending_.Put(store::Kind::kSchedulingPolicy, r.name, Encode(stored));
  return Reply{api::SchedulingPolicyCreated{r.name, stored.arn}};
}

Result<Controller::Reply> Controller::Handle(const api::UpdateSchedulingPolicyRequest& r) {
  SchedulingPolicyRecord* policy = FindPolicy(r.policy.name);
  if (policy == nullptr)
    return InvalidArgument("scheduling policy " + r.policy.sent + " does not exist");
  if (!r.idle_resource_assignment && policy->takes_quota_shares()) {
    return InvalidArgument("quotaSharePolicy cannot be removed from scheduling policy " +
                           policy->name);
  }
  // A queue's engine configuration (its implicit FIFO share or its quota shares) follows whether
  // its policy takes quota shares: as UpdateJobQueue, no change of that while a queue uses it.
  if (r.idle_resource_assignment && !policy->takes_quota_shares()) {
    if (const JobQueueRecord* queue = QueueUsing(*policy)) {
      return InvalidArgument("quotaSharePolicy cannot be added to scheduling policy " +
                             policy->name + ": job queue " + queue->name +
                             " uses it without quota shares");
    }
  }
  if (r.idle_resource_assignment) policy->idle_resource_assignment = r.idle_resource_assignment;
  pending_.Put(store::Kind::kSchedulingPolicy, policy->name, Encode(*policy));
  return Reply{};
}

Result<Controller::Reply> Controller::Handle(const api::DescribeSchedulingPoliciesRequest& r) {
  return Reply{api::DescribeSchedulingPoliciesResponse{
      Named<api::SchedulingPolicyDetail>(r.policies, policies_)}};
}

Result<Controller::Reply> Controller::Handle(const api::ListSchedulingPoliciesRequest& r) {
  api::ListSchedulingPoliciesResponse out;
  out.next_token =
      Page(policies_, r.page, out.arns, [](const SchedulingPolicyRecord& p) { return p.arn; });
  return Reply{std::move(out)};
}

Result<Controller::Reply> Controller::Handle(const api::DeleteSchedulingPolicyRequest& r) {
  SchedulingPolicyRecord* policy = FindPolicy(r.policy.name);
  if (policy == nullptr)
    return InvalidArgument("scheduling policy " + r.policy.sent + " does not exist");
  const std::string name = policy->name;
  if (const JobQueueRecord* queue = QueueUsing(*policy)) {
    return InvalidArgument("scheduling policy " + name + " is used by job queue " + queue->name);
  }
  policies_.erase(name);
  pending_.Delete(store::Kind::kSchedulingPolicy, name);
  return Reply{};
}

// --- job queues ---

Result<Controller::Reply> Controller::Handle(const api::CreateJobQueueRequest& r) {
  const ServiceEnvironmentRecord* env = FindEnvironment(r.environment.name);
  if (env == nullptr)
    return InvalidArgument("serviceEnvironment " + r.environment.sent + " does not exist");
  std::string policy_arn;
  bool quota_managed = false;
  if (r.scheduling_policy) {
    const SchedulingPolicyRecord* policy = FindPolicy(r.scheduling_policy->name);
    if (policy == nullptr) {
      return InvalidArgument("schedulingPolicyArn " + r.scheduling_policy->sent +
                             " does not exist");
    }
    policy_arn = policy->arn;
    quota_managed = policy->takes_quota_shares();
  }
  if (queues_.count(r.name)) return Existing();
  if (quota_managed && UsesNumInstances(*env)) {
    return InvalidArgument(
        "serviceEnvironment " + env->name +
        " counts NUM_INSTANCES, which only plain FIFO job "
        "queues take; a queue with a quota-share policy needs limits per instance type");
  }
  JobQueueRecord queue{.name = r.name,
                       .arn = Arn("job-queue/" + r.name),
                       .state = r.state,
                       .priority = r.priority,
                       .environment_order = {{r.environment_order, env->name}},
                       .type = r.type,
                       .scheduling_policy_arn = policy_arn};
  queue.tags = r.tags;
  queue.time_limit_actions = r.time_limit_actions;
  const JobQueueRecord& stored = queues_[r.name] = std::move(queue);
  if (Status s = PutQueueToEngine(stored); !s.ok()) {
    queues_.erase(r.name);
    return s;
  }
  pending_.Put(store::Kind::kJobQueue, r.name, Encode(stored));
  return Reply{api::JobQueueChanged{r.name, stored.arn}};
}

Result<Controller::Reply> Controller::Handle(const api::UpdateJobQueueRequest& r) {
  ALLOT_ASSIGN_OR_RETURN(JobQueueRecord * found, QueueNamed(r.queue));
  JobQueueRecord& queue = *found;
  if (r.scheduling_policy) {
    const SchedulingPolicyRecord* policy = FindPolicy(r.scheduling_policy->name);
    if (policy == nullptr) {
      return InvalidArgument("schedulingPolicyArn " + r.scheduling_policy->sent +
                             " does not exist");
    }
    // AWS: a queue created without a scheduling policy is a FIFO queue for good, and "can't
    // have a scheduling policy added"; one created with a policy may have it replaced.
    if (queue.scheduling_policy_arn.empty()) {
      return InvalidArgument("schedulingPolicyArn cannot be added to job queue " + queue.name +
                             ": it was created without a scheduling policy (create another job "
                             "queue with one)");
    }
    if (IsQuotaManaged(queue) != policy->takes_quota_shares()) {
      return InvalidArgument("schedulingPolicyArn cannot change whether job queue " + queue.name +
                             " uses quota shares");
    }
  }
  if (r.environment_order && r.environment_order->environment.name != queue.environment()) {
    return InvalidArgument("serviceEnvironmentOrder cannot move job queue " + queue.name +
                           " to service environment " + r.environment_order->environment.sent +
                           ": it uses " + queue.environment() +
                           " (create another job queue instead)");
  }
  JobQueueRecord before = std::exchange(queue, UpdatedQueue(queue, r));
  if (Status s = PutQueueToEngine(queue); !s.ok()) {
    queue = std::move(before);  // as in UpdateServiceEnvironment
    return s;
  }
  pending_.Put(store::Kind::kJobQueue, queue.name, Encode(queue));
  return Reply{api::JobQueueChanged{queue.name, queue.arn}};
}

// The queue as UpdateJobQueue `r` would leave it, unchecked (also what the audit record
// compares, authorize.cc, for a refused call too): the policy by its ARN (the server's ARN of the
// name sent when no policy has it), the environment by its name, whichever of the two was sent.
JobQueueRecord Controller::UpdatedQueue(const JobQueueRecord& queue,
                                        const api::UpdateJobQueueRequest& r) {
  JobQueueRecord updated = queue;
  if (r.state) updated.state = *r.state;
  if (r.priority) updated.priority = *r.priority;
  if (r.scheduling_policy) {
    const SchedulingPolicyRecord* policy = FindPolicy(r.scheduling_policy->name);
    updated.scheduling_policy_arn =
        policy != nullptr ? policy->arn : ResourceArn("scheduling-policy/", *r.scheduling_policy);
  }
  if (r.time_limit_actions) updated.time_limit_actions = *r.time_limit_actions;
  if (r.environment_order) {
    updated.environment_order = {
        {r.environment_order->order, r.environment_order->environment.name}};
  }
  return updated;
}

Result<Controller::Reply> Controller::Handle(const api::DescribeJobQueuesRequest& r) {
  api::DescribeJobQueuesResponse out;
  out.next_token = NamedOrPage(r.queues, r.page, queues_, out.queues);
  return Reply{std::move(out)};
}

Result<Controller::Reply> Controller::Handle(const api::DeleteJobQueueRequest& r) {
  ALLOT_ASSIGN_OR_RETURN(const JobQueueRecord* found, QueueNamed(r.queue));
  const JobQueueRecord& queue = *found;
  const std::string name = queue.name;
  if (queue.state != model::State::kDisabled) {
    return InvalidArgument("jobQueue " + name +
                           " must be DISABLED before it is deleted (state is " +
                           StateName(queue.state) + ")");
  }
  ALLOT_RETURN_IF_ERROR(Apply(model::DeleteJobQueue{name}));
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
  return Reply{};
}

// --- quota shares ---

Result<Controller::Reply> Controller::Handle(const api::CreateQuotaShareRequest& r) {
  ALLOT_ASSIGN_OR_RETURN(const JobQueueRecord* found, QueueNamed(r.queue));
  const JobQueueRecord& queue = *found;
  const std::string& qname = queue.name;
  if (!IsQuotaManaged(queue)) {
    return InvalidArgument("job queue " + qname +
                           " has no scheduling policy with a quotaSharePolicy, so it "
                           "takes no quota shares");
  }
  const std::string key = qname + "/" + r.name;
  if (shares_.count(key)) return Existing();
  std::size_t count = 0;
  for (const auto& [k, s] : shares_) count += k.rfind(qname + "/", 0) == 0 ? 1U : 0U;
  if (count >= model::rules::kMaxSharesPerQueue) {
    return InvalidArgument("job queue " + qname + " already has the maximum of 20 quota shares");
  }
  QuotaShareRecord share{.name = r.name,
                         .arn = Arn("job-queue/" + qname + "/quota-share/" + r.name),
                         .queue = qname,
                         .job_queue_arn = queue.arn,
                         .capacity_limits = r.capacity_limits,
                         .strategy = r.sharing.strategy,
                         .borrow_limit = r.sharing.borrow_limit,
                         .in_share_preemption = r.in_share_preemption,
                         .state = r.state};
  share.tags = r.tags;
  ALLOT_RETURN_IF_ERROR(PutShareToEngine(share));
  const QuotaShareRecord& stored = shares_[key] = std::move(share);
  pending_.Put(store::Kind::kQuotaShare, key, Encode(stored));
  return Reply{api::QuotaShareChanged{r.name, stored.arn}};
}

// The share as UpdateQuotaShare `r` would leave it (also what-if's, whatif_ops.cc).
Result<QuotaShareRecord> Controller::UpdatedShare(const api::UpdateQuotaShareRequest& r) {
  ALLOT_ASSIGN_OR_RETURN(const QuotaShareRecord* share, ShareNamed(r.share));
  QuotaShareRecord updated = *share;
  if (r.capacity_limits) updated.capacity_limits = *r.capacity_limits;
  if (r.sharing) {
    updated.strategy = r.sharing->strategy;
    updated.borrow_limit = r.sharing->borrow_limit;
  }
  if (r.in_share_preemption) updated.in_share_preemption = *r.in_share_preemption;
  if (r.state) updated.state = *r.state;
  return updated;
}

Result<Controller::Reply> Controller::Handle(const api::UpdateQuotaShareRequest& r) {
  ALLOT_ASSIGN_OR_RETURN(QuotaShareRecord * found, ShareNamed(r.share));
  QuotaShareRecord& share = *found;
  ALLOT_ASSIGN_OR_RETURN(QuotaShareRecord updated, UpdatedShare(r));
  ALLOT_RETURN_IF_ERROR(PutShareToEngine(updated));
  share = std::move(updated);
  pending_.Put(store::Kind::kQuotaShare, share.Key(), Encode(share));
  return Reply{api::QuotaShareChanged{share.name, share.arn}};
}

Result<Controller::Reply> Controller::Handle(const api::DescribeQuotaShareRequest& r) {
  ALLOT_ASSIGN_OR_RETURN(const QuotaShareRecord* share, ShareNamed(r.share));
  return Reply{ToWire(*share)};
}

Result<Controller::Reply> Controller::Handle(const api::ListQuotaSharesRequest& r) {
  ALLOT_ASSIGN_OR_RETURN(const JobQueueRecord* queue, QueueNamed(r.queue));
  const std::string qname = queue->name;
  std::map<std::string, const QuotaShareRecord*> mine;  // by share name, for the page token
  for (const auto& [k, s] : shares_) {
    if (k.rfind(qname + "/", 0) == 0) mine[s.name] = &s;
  }
  api::ListQuotaSharesResponse out;
  out.next_token = Page(mine, r.page, out.shares,
                        [](const QuotaShareRecord* s) { return ToWire(*s, /*with_tags=*/false); });
  return Reply{std::move(out)};
}

Result<Controller::Reply> Controller::Handle(const api::DeleteQuotaShareRequest& r) {
  ALLOT_ASSIGN_OR_RETURN(QuotaShareRecord * found, ShareNamed(r.share));
  QuotaShareRecord& share = *found;
  if (share.state != model::State::kDisabled) {
    return InvalidArgument("quota share " + share.name +
                           " must be DISABLED before it is deleted (state is " +
                           StateName(share.state) + ")");
  }
  ALLOT_RETURN_IF_ERROR(Apply(model::DeleteQuotaShare{share.queue, share.name}));
  const std::string key = share.Key();
  pending_.Delete(store::Kind::kQuotaShare, key);
  shares_.erase(key);
  return Reply{};
}

}  // namespace allot::server
