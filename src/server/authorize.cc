// Who may do what (DESIGN.md section 7): every call is checked against the caller's IAM policy,
// on the resources AWS's authorization reference names for the action, with the condition keys
// Allot fills in: aws:username, aws:PrincipalArn, aws:SourceIp, batch:SchedulingPriority (the
// priority a Submit or Update asks for; 0 for a Submit that gives none, the priority the job
// gets) and allot:QuotaShare (the share a job is or would be in). Then the call runs, and a
// mutating call leaves an audit record in the batch of its change, whatever its outcome.

#include <type_traits>

#include "api/decode.h"
#include "api/decoders.h"
#include "api/routes.h"
#include "auth/policy.h"
#include "common/strings.h"
#include "server/api_error.h"
#include "server/config_codec.h"
#include "server/controller.h"

namespace allot::server {

namespace {

template <typename R, typename... Any>
constexpr bool kIsOneOf = (std::is_same_v<R, Any> || ...);

}  // namespace

// Policies are checked against the server's own ARN of the resource, whatever region or account
// an ARN the caller sent names: the decoder has taken the name from its resource part.
std::string Controller::ResourceArn(const std::string& prefix,
                                    const api::NameOrArn& resource) const {
  return Arn(prefix + resource.name);
}

auth::Decision Controller::Decide(const Caller& caller, const std::string& action,
                                  const std::string& resource, const JobRecord* job,
                                  std::optional<std::int64_t> priority) const {
  if (caller.system) return auth::Decision::kAllow;
  if (!caller.policies || caller.policies->empty()) return auth::Decision::kImplicitDeny;
  auth::AccessRequest request;
  request.action = action;
  request.resource = resource;
  // Filling the context costs a dozen allocations per call; policies without conditions or
  // variables (an administrator's "Allow *") never read it.
  if (!auth::ReadsContext(*caller.policies)) return auth::Evaluate(*caller.policies, request);
  request.context = {{"aws:username", caller.user},
                     {"aws:userid", caller.user},
                     {"aws:principalarn", caller.arn},
                     {"aws:sourceip", caller.source},
                     // Plain HTTP (a TLS proxy in front is not seen here), in this region.
                     {"aws:securetransport", "false"},
                     {"aws:requestedregion", options_.region}};
  if (job != nullptr && !job->share.empty()) {
    request.context["allot:quotashare"] = std::string(job->share);
  }
  if (priority) request.context["batch:schedulingpriority"] = std::to_string(*priority);
  return auth::Evaluate(*caller.policies, request);
}

Status Controller::Allowed(const Caller& caller, const std::string& action,
                           const std::string& resource, const JobRecord* job,
                           std::optional<std::int64_t> priority) const {
  const auth::Decision decision = Decide(caller, action, resource, job, priority);
  if (decision == auth::Decision::kAllow) return {};
  return PermissionDenied(auth::DeniedMessage(caller.arn, action, resource, decision));
}

// The old and new values of the fields a configuration update may change, each as the record
// holds it before (`old_doc`) and would hold it after (`new_doc`): a field not sent, sent as the
// record holds it, with a default left out or as null, is no change.
void Controller::NoteChanges(const Json& old_doc, std::initializer_list<const char*> fields,
                             const Json& new_doc) {
  if (!audit_) return;
  for (const char* field : fields) {
    const std::string was = old_doc.contains(field) ? old_doc[field].dump() : "";
    const std::string now = new_doc.contains(field) ? new_doc[field].dump() : "";
    if (was != now) audit_->changes.push_back({field, was, now});
  }
}

void Controller::NoteUpdate(const api::UpdateServiceEnvironmentRequest& r) {
  if (const auto* env = FindEnvironment(r.environment.name)) {
    NoteChanges(DescribeEnvironment(*env), {"capacityLimits", "state"},
                DescribeEnvironment(UpdatedEnvironment(*env, r)));
  }
}

void Controller::NoteUpdate(const api::UpdateJobQueueRequest& r) {
  if (const auto* queue = FindQueue(r.queue.name)) {
    NoteChanges(DescribeQueue(*queue),
                {"priority", "state", "schedulingPolicyArn", "serviceEnvironmentOrder",
                 "jobStateTimeLimitActions"},
                DescribeQueue(UpdatedQueue(*queue, r)));
  }
}

void Controller::NoteUpdate(const api::UpdateQuotaShareRequest& r) {
  auto it = shares_.find(r.share.queue + "/" + r.share.share);
  if (it == shares_.end()) return;
  if (Result<QuotaShareRecord> updated = UpdatedShare(r); updated.ok()) {
    NoteChanges(
        DescribeShare(it->second),
        {"capacityLimits", "resourceSharingConfiguration", "preemptionConfiguration", "state"},
        DescribeShare(updated.value()));
  }
}

bool Controller::MayDescribeJob(const Caller& caller, const JobRecord& job) const {
  return Decide(caller, "batch:DescribeServiceJob", arns_.Job(job.id), &job, std::nullopt) ==
         auth::Decision::kAllow;
}

bool Controller::MayDescribeJob(const Caller& caller, const std::string& id,
                                std::string_view share) const {
  JobRecord job;  // what the policy may test: the job's ARN and its share
  job.id = id;
  job.share = share;
  return MayDescribeJob(caller, job);
}

bool Controller::CanDescribe(const JobRecord& job) const { return MayDescribeJob(*caller_, job); }

Status Controller::AuthorizeCall(const api::Request& request) {
  return std::visit([this](const auto& r) { return Authorize(r); }, request);
}

template <typename R>
Status Controller::Authorize(const R& r) {
  const std::string name = "batch:" + std::string(R::kAction);
  auto require = [&](const std::string& resource, const JobRecord* job = nullptr,
                     std::optional<std::int64_t> priority = std::nullopt) {
    if (audit_ && audit_->resource.empty()) audit_->resource = resource;
    return Allowed(*caller_, name, resource, job, priority);
  };
  // An update's record shows what it asked to change, allowed or not.
  if constexpr (kIsOneOf<R, api::UpdateServiceEnvironmentRequest, api::UpdateJobQueueRequest,
                         api::UpdateQuotaShareRequest>) {
    NoteUpdate(r);
  }
  if constexpr (std::is_same_v<R, api::SubmitServiceJobRequest>) {
    // A job not yet made: its share and priority are what the request asks for.
    JobRecord would_be;
    const std::string share = r.quota_share.value_or("");
    would_be.share = share;
    const std::string queue = arns_.Queue(r.queue.name);
    if (audit_) {
      // A refused submission's record says where it was aimed, and at what priority.
      audit_->resource = share.empty() ? queue : queue + "/quota-share/" + share;
      audit_->changes.push_back({"schedulingPriority", "", std::to_string(r.priority)});
    }
    ALLOT_RETURN_IF_ERROR(require(queue, &would_be, r.priority));
    if (!share.empty()) return require(queue + "/quota-share/" + share, &would_be, r.priority);
    return {};
  } else if constexpr (kIsOneOf<R, api::UpdateServiceJobRequest, api::TerminateServiceJobRequest,
                                api::DescribeServiceJobRequest>) {
    const JobRecord* job = FindJob(r.job_id);
    const std::string arn = job                            ? arns_.Job(job->id)
                            : r.job_id.starts_with("arn:") ? r.job_id
                                                           : arns_.Job(r.job_id);
    std::optional<std::int64_t> priority;
    if constexpr (std::is_same_v<R, api::UpdateServiceJobRequest>) {
      priority = r.priority;
      if (audit_ && job != nullptr) {
        audit_->changes.push_back(
            {"schedulingPriority", std::to_string(job->priority), std::to_string(r.priority)});
      }
    }
    return require(arn, job, priority);
  } else if constexpr (std::is_same_v<R, api::CreateServiceEnvironmentRequest>) {
    return require(Arn("service-environment/" + r.name));
  } else if constexpr (kIsOneOf<R, api::UpdateServiceEnvironmentRequest,
                                api::DeleteServiceEnvironmentRequest>) {
    return require(ResourceArn("service-environment/", r.environment));
  } else if constexpr (std::is_same_v<R, api::CreateSchedulingPolicyRequest>) {
    return require(Arn("scheduling-policy/" + r.name));
  } else if constexpr (kIsOneOf<R, api::UpdateSchedulingPolicyRequest,
                                api::DeleteSchedulingPolicyRequest>) {
    return require(ResourceArn("scheduling-policy/", r.policy));
  } else if constexpr (std::is_same_v<R, api::CreateJobQueueRequest>) {
    return require(Arn("job-queue/" + r.name));
  } else if constexpr (kIsOneOf<R, api::UpdateJobQueueRequest, api::DeleteJobQueueRequest,
                                api::ListQuotaSharesRequest, api::ListServiceJobsRequest,
                                api::GetJobQueueSnapshotRequest>) {
    return require(arns_.Queue(r.queue.name));
  } else if constexpr (std::is_same_v<R, api::CreateQuotaShareRequest>) {
    return require(arns_.Queue(r.queue.name) + "/quota-share/" + r.name);
  } else if constexpr (kIsOneOf<R, api::UpdateQuotaShareRequest, api::DeleteQuotaShareRequest,
                                api::DescribeQuotaShareRequest>) {
    return require(arns_.Queue(r.share.queue) + "/quota-share/" + r.share.share);
  } else {
    // DescribeServiceEnvironments, DescribeJobQueues, DescribeSchedulingPolicies and
    // ListSchedulingPolicies act on no particular resource: AWS authorizes them on "*".
    static_assert(
        kIsOneOf<R, api::DescribeServiceEnvironmentsRequest, api::DescribeJobQueuesRequest,
                 api::DescribeSchedulingPoliciesRequest, api::ListSchedulingPoliciesRequest>);
    return require("*");
  }
}

namespace {

// What a caller wrote into a record (a resource name, an error quoting it) is clipped: a denied
// call costs the store a few hundred bytes, however long the names it sent.
std::string Clipped(std::string text) {
  constexpr std::size_t kMaxField = 512;
  if (text.size() > kMaxField) {
    const std::size_t full = text.size();
    text.resize(kMaxField);
    text += "...(" + std::to_string(full) + " bytes)";
  }
  return text;
}

}  // namespace

void Controller::AddAudit(const std::string& outcome) {
  audit_->seq = next_audit_seq_++;
  audit_->outcome = Clipped(outcome);
  audit_->resource = Clipped(std::move(audit_->resource));
  for (AuditChange& c : audit_->changes) {
    c.old_value = Clipped(std::move(c.old_value));
    c.new_value = Clipped(std::move(c.new_value));
  }
  pending_.Put(store::Kind::kAudit, AuditKey(audit_->seq), EncodeAudit(*audit_));
  const bool prune = audit_->seq % 1024 == 0;
  audit_.reset();
  if (prune) PruneAudit();
}

void Controller::PruneAudit() {
  const Timestamp cutoff = Now() - options_.audit_retention;
  // Most prunes drop nothing: the oldest record alone tells, before reading a page of them.
  for (const std::size_t limit : {std::size_t{1}, std::size_t{4096}}) {
    Result<std::vector<store::Record>> oldest =
        store_->Range(store::Kind::kAudit, {.from = "", .to = "", .limit = limit});
    if (!oldest.ok()) {
      log::Warn("audit.prune_failed", {{"error", oldest.status().message()}});
      return;
    }
    for (const store::Record& r : oldest.value()) {
      Result<AuditRecord> record = DecodeAudit(r.key, r.value);
      if (record.ok() && record->time >= cutoff) return;  // in call order, so newer from here
      if (limit > 1) pending_.Delete(store::Kind::kAudit, r.key);
    }
    if (oldest->size() < limit) return;  // no more records
  }
}

namespace {

// How the audit names a refusal.
std::string OutcomeOf(const Status& refusal) {
  switch (ApiErrorFor(refusal).http_status) {
    case 400:
      return "ClientException: " + refusal.message();
    case 403:
      return "AccessDenied";
    default:
      return "ServerException";
  }
}

}  // namespace

Result<Controller::Reply> Controller::RunAs(const Caller& caller, const std::string& audited_action,
                                            const std::function<Status()>& authorize,
                                            const std::function<Result<Reply>()>& body) {
  // A refused call answers once its audit record is durable too (outside the lock), so the
  // trail a caller reads next holds it.
  Durable refusal_written;
  Result<Reply> result = [&]() -> Result<Reply> {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_) return Reply{.durable = Refused()};
    if (store_reserve_out_ && !FreesTheStore(audited_action)) return Reply{.durable = DiskFull()};
    caller_ = &caller;
    audit_.reset();
    if (!audited_action.empty()) {
      audit_.emplace();
      audit_->time = Now();
      audit_->user = caller.user;
      audit_->principal = caller.arn;
      audit_->source = caller.source;
      audit_->action = audited_action;
      audit_->request_id = caller.request_id;
    }
    // A refused request leaves nothing pending but its audit record. One refused after the
    // engine accepted some of its events (no call an ordinary caller can send: each handler
    // refuses before its first event, or with it) would leave the engine changed without the
    // records, so it is a fault: answered 500, and the controller rolls back to the store.
    // While the store's reserve is out, a call that changes nothing writes nothing: its audit
    // record would take the room the jobs' ends need (a refusal, or a job already ended).
    const bool audit_unchanged = !store_reserve_out_;
    auto refused = [&](const Status& refusal) {
      if (audit_ && audit_unchanged) AddAudit(OutcomeOf(refusal));
      caller_ = nullptr;
      refusal_written = Finish().durable;
      return refusal;
    };
    applied_events_ = 0;
    Result<Reply> reply = GuardedResult([&]() -> Result<Reply> {
      if (Status allowed = authorize(); !allowed.ok()) return allowed;
      return body();
    });
    if (!reply.ok() && applied_events_ > 0) {
      RollBackRefusedCall(reply.status(), audited_action);
      reply = Internal(std::string(kInternalError));
    }
    if (!reply.ok() && ApiErrorFor(reply.status()).http_status == 500 &&
        reply.status().message() != kInternalError) {
      // A fault's detail is for the log, never for the caller.
      log::Error("api.fault", {{"error", reply.status().message()}});
      reply = Internal(std::string(kInternalError));
    }
    if (!reply.ok()) return refused(reply.status());
    if (audit_ && (audit_unchanged || applied_events_ > 0)) AddAudit("Allowed");
    caller_ = nullptr;
    reply.value().durable = Finish().durable;
    return reply;
  }();
  if (!result.ok()) AwaitRefusalWrite(std::move(refusal_written));
  return result;
}

void Controller::AuditRefusal(const Caller& caller, const std::string& audited_action,
                              const std::string& message, const api::RefusalTarget& target) {
  if (audited_action.empty()) return;
  [[maybe_unused]] const Result<Reply> refused = RunAs(
      caller, audited_action,
      [&] {
        NoteTarget(target);
        return Status();
      },
      [&]() -> Result<Reply> { return InvalidArgument(message); });
}

// What a refused request was aimed at, as Authorize would have recorded it.
void Controller::NoteTarget(const api::RefusalTarget& target) {
  if (!audit_ || target.sent.empty()) return;
  const bool arn = target.sent.starts_with("arn:");
  const JobRecord* job = target.type == "service-job" ? FindJob(target.sent) : nullptr;
  if (job != nullptr) {
    audit_->resource = arns_.Job(job->id);
  } else if (target.type == "job-queue") {
    std::string queue = target.sent;
    if (arn) {
      const std::optional<std::string_view> resource = api::decoders::BatchResource(queue);
      if (resource && resource->starts_with("job-queue/")) queue = resource->substr(10);
    }
    audit_->resource = arns_.Queue(queue);
    if (!target.share.empty()) audit_->resource += "/quota-share/" + target.share;
  } else if (arn || target.type.empty()) {
    audit_->resource = target.sent;
  } else if (target.type == "service-job") {
    audit_->resource = arns_.Job(target.sent);
  } else {
    audit_->resource = Arn(target.type + "/" + target.sent);
  }
  if (target.priority) {
    audit_->changes.push_back({"schedulingPriority",
                               job != nullptr ? std::to_string(job->priority) : std::string(),
                               std::to_string(*target.priority)});
  }
}

Result<Controller::Reply> Controller::Call(const api::Request& request, const Caller& caller) {
  return std::visit(
      [&](const auto& r) {
        using R = std::decay_t<decltype(r)>;
        const std::string audited = api::AuditedAction(AsciiLower(R::kAction));
        return RunAs(
            caller, audited, [&] { return Authorize(r); },
            [&]() -> Result<Reply> {
              Result<Reply> reply = Handle(r);
              if constexpr (std::is_same_v<R, api::SubmitServiceJobRequest>) {
                if (audit_ && reply.ok()) {
                  if (const auto* submitted = std::get_if<api::ServiceJobChanged>(&reply->body)) {
                    audit_->resource = submitted->arn;
                  }
                }
              }
              return reply;
            });
      },
      request);
}

std::string Controller::TaggedArn(const api::TaggedResource& resource) const {
  switch (resource.type) {
    case api::TaggedResource::Type::kServiceEnvironment:
      return Arn("service-environment/" + resource.name);
    case api::TaggedResource::Type::kSchedulingPolicy:
      return Arn("scheduling-policy/" + resource.name);
    case api::TaggedResource::Type::kJobQueue:
      return arns_.Queue(resource.name);
    case api::TaggedResource::Type::kQuotaShare:
      return arns_.Queue(resource.name) + "/quota-share/" + resource.share;
    case api::TaggedResource::Type::kServiceJob:
      break;
  }
  return arns_.Job(resource.name);
}

Result<Controller::Reply> Controller::Tags(const api::TagsRequest& request, const Caller& caller) {
  return std::visit(
      [&](const auto& r) {
        using R = std::decay_t<decltype(r)>;
        const bool mutating = !std::is_same_v<R, api::ListTagsForResourceRequest>;
        return RunAs(
            caller, mutating ? "batch:" + std::string(R::kAction) : "",
            [&] {
              const JobRecord* job = r.resource.type == api::TaggedResource::Type::kServiceJob
                                         ? FindJob(r.resource.name)
                                         : nullptr;
              const std::string arn = TaggedArn(r.resource);
              if (audit_) audit_->resource = arn;
              return Allowed(*caller_, "batch:" + std::string(R::kAction), arn, job, std::nullopt);
            },
            [&] { return TagsLocked(request); });
      },
      request);
}

}  // namespace allot::server
