// Who may do what (DESIGN.md section 7): every call is checked against the caller's IAM policy,
// on the resources AWS's authorization reference names for the action, with the condition keys
// Allot fills in: aws:username, aws:PrincipalArn, aws:SourceIp, batch:SchedulingPriority (the
// priority a Submit or Update asks for; 0 for a Submit that gives none, the priority the job
// gets) and allot:QuotaShare (the share a job is or would be in). Then the call runs, and a
// mutating call leaves an audit record in the batch of its change, whatever its outcome.

#include "auth/policy.h"
#include "server/api_error.h"
#include "server/config_wire.h"
#include "server/controller.h"

namespace allot::server {

namespace {

std::string StringField(const Json& r, const char* field) {
  auto it = r.find(field);
  return it != r.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<std::int64_t> IntField(const Json& r, const char* field) {
  auto it = r.find(field);
  if (it == r.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

// The queue name of a jobQueue field, which may be its ARN.
std::string QueueName(const std::string& name_or_arn) {
  const std::size_t at = name_or_arn.find(":job-queue/");
  return at == std::string::npos ? name_or_arn : name_or_arn.substr(at + 11);
}

}  // namespace

// Every AWS action: its handler, its name in policies and the audit, and whether it changes
// anything (then it is audited).
const std::map<std::string, Controller::ActionEntry>& Controller::ActionTable() {
  static const std::map<std::string, ActionEntry> kActions = {
      {"createserviceenvironment",
       {&Controller::CreateServiceEnvironment, "CreateServiceEnvironment", true}},
      {"updateserviceenvironment",
       {&Controller::UpdateServiceEnvironment, "UpdateServiceEnvironment", true}},
      {"describeserviceenvironments",
       {&Controller::DescribeServiceEnvironments, "DescribeServiceEnvironments", false}},
      {"deleteserviceenvironment",
       {&Controller::DeleteServiceEnvironment, "DeleteServiceEnvironment", true}},
      {"createschedulingpolicy",
       {&Controller::CreateSchedulingPolicy, "CreateSchedulingPolicy", true}},
      {"updateschedulingpolicy",
       {&Controller::UpdateSchedulingPolicy, "UpdateSchedulingPolicy", true}},
      {"describeschedulingpolicies",
       {&Controller::DescribeSchedulingPolicies, "DescribeSchedulingPolicies", false}},
      {"listschedulingpolicies",
       {&Controller::ListSchedulingPolicies, "ListSchedulingPolicies", false}},
      {"deleteschedulingpolicy",
       {&Controller::DeleteSchedulingPolicy, "DeleteSchedulingPolicy", true}},
      {"createjobqueue", {&Controller::CreateJobQueue, "CreateJobQueue", true}},
      {"updatejobqueue", {&Controller::UpdateJobQueue, "UpdateJobQueue", true}},
      {"describejobqueues", {&Controller::DescribeJobQueues, "DescribeJobQueues", false}},
      {"deletejobqueue", {&Controller::DeleteJobQueue, "DeleteJobQueue", true}},
      {"createquotashare", {&Controller::CreateQuotaShare, "CreateQuotaShare", true}},
      {"updatequotashare", {&Controller::UpdateQuotaShare, "UpdateQuotaShare", true}},
      {"describequotashare", {&Controller::DescribeQuotaShare, "DescribeQuotaShare", false}},
      {"listquotashares", {&Controller::ListQuotaShares, "ListQuotaShares", false}},
      {"deletequotashare", {&Controller::DeleteQuotaShare, "DeleteQuotaShare", true}},
      {"submitservicejob", {&Controller::SubmitServiceJob, "SubmitServiceJob", true}},
      {"updateservicejob", {&Controller::UpdateServiceJob, "UpdateServiceJob", true}},
      {"describeservicejob", {&Controller::DescribeServiceJob, "DescribeServiceJob", false}},
      {"listservicejobs", {&Controller::ListServiceJobs, "ListServiceJobs", false}},
      {"terminateservicejob", {&Controller::TerminateServiceJob, "TerminateServiceJob", true}},
      {"getjobqueuesnapshot", {&Controller::GetJobQueueSnapshot, "GetJobQueueSnapshot", false}},
  };
  return kActions;
}

std::string Controller::ResourceArn(const std::string& prefix, const Json& r,
                                    const char* field) const {
  const std::string value = StringField(r, field);
  return value.starts_with("arn:") ? value : Arn(prefix + value);
}

auth::Decision Controller::Decide(const Caller& caller, const std::string& action,
                                  const std::string& resource, const JobRecord* job,
                                  std::optional<std::int64_t> priority) const {
  if (caller.system) return auth::Decision::kAllow;
  if (!caller.policies || caller.policies->empty()) return auth::Decision::kImplicitDeny;
  auth::AccessRequest request;
  request.action = action;
  request.resource = resource;
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

void Controller::Require(const Caller& caller, const std::string& action,
                         const std::string& resource, const JobRecord* job,
                         std::optional<std::int64_t> priority) const {
  const auth::Decision decision = Decide(caller, action, resource, job, priority);
  if (decision == auth::Decision::kAllow) return;
  throw AccessDenied(auth::DeniedMessage(caller.arn, action, resource, decision));
}

// The old and new values of the fields a configuration update asks to change (the new as asked).
void Controller::NoteChanges(const Json& old_doc, const Json& r,
                             std::initializer_list<const char*> fields) {
  if (!audit_) return;
  for (const char* field : fields) {
    auto asked = r.find(field);
    if (asked == r.end()) continue;
    const std::string was = old_doc.contains(field) ? old_doc[field].dump() : "";
    const std::string now = asked->dump(-1, ' ', false, Json::error_handler_t::replace);
    if (was != now) audit_->changes.push_back({field, was, now});
  }
}

void Controller::NoteConfigChanges(const std::string& action, const Json& r) {
  try {
    if (action == "updatequotashare") {
      const auto [q, s] = ShareKeyFromArn(StringField(r, "quotaShareArn"));
      if (auto it = shares_.find(q + "/" + s); it != shares_.end()) {
        NoteChanges(
            DescribeShare(it->second), r,
            {"capacityLimits", "resourceSharingConfiguration", "preemptionConfiguration", "state"});
      }
    } else if (action == "updateserviceenvironment") {
      if (const auto* env = FindEnvironment(StringField(r, "serviceEnvironment"))) {
        NoteChanges(DescribeEnvironment(*env), r, {"capacityLimits", "state"});
      }
    } else if (action == "updatejobqueue") {
      if (const auto* queue = FindQueue(StringField(r, "jobQueue"))) {
        NoteChanges(DescribeQueue(*queue), r, {"priority", "state", "serviceEnvironmentOrder"});
      }
    }
  } catch (const std::exception&) {
    // A malformed name is the handler's to refuse; the record then shows no change.
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

void Controller::AuthorizeCall(const std::string& action, const Json& r) {
  const std::string name = std::string("batch:") + ActionTable().at(action).name;
  auto require = [&](const std::string& resource, const JobRecord* job = nullptr,
                     std::optional<std::int64_t> priority = std::nullopt) {
    if (audit_ && audit_->resource.empty()) audit_->resource = resource;
    Require(name, resource, job, priority);
  };
  if (action == "submitservicejob") {
    // A job not yet made: its share and priority are what the request asks for.
    JobRecord would_be;
    const std::string share = StringField(r, "quotaShareName");
    would_be.share = share;
    const std::int64_t priority = IntField(r, "schedulingPriority").value_or(0);
    const std::string queue = QueueName(StringField(r, "jobQueue"));
    if (audit_) {
      // A refused submission's record says where it was aimed, and at what priority.
      audit_->resource =
          share.empty() ? arns_.Queue(queue) : arns_.Queue(queue) + "/quota-share/" + share;
      audit_->changes.push_back({"schedulingPriority", "", std::to_string(priority)});
    }
    require(arns_.Queue(queue), &would_be, priority);
    if (!share.empty()) {
      require(arns_.Queue(queue) + "/quota-share/" + share, &would_be, priority);
    }
    return;
  }
  if (action == "updateservicejob" || action == "terminateservicejob" ||
      action == "describeservicejob") {
    const std::string id = StringField(r, "jobId");
    const JobRecord* job = FindJob(id);
    const std::string arn = job ? arns_.Job(job->id) : id.starts_with("arn:") ? id : arns_.Job(id);
    std::optional<std::int64_t> priority;
    if (action == "updateservicejob") {
      priority = IntField(r, "schedulingPriority");
      if (audit_ && job != nullptr && priority) {
        audit_->changes.push_back(
            {"schedulingPriority", std::to_string(job->priority), std::to_string(*priority)});
      }
    }
    require(arn, job, priority);
    return;
  }
  NoteConfigChanges(action, r);
  if (action == "createserviceenvironment") {
    return require(ResourceArn("service-environment/", r, "serviceEnvironmentName"));
  }
  if (action == "updateserviceenvironment" || action == "deleteserviceenvironment") {
    return require(ResourceArn("service-environment/", r, "serviceEnvironment"));
  }
  if (action == "createschedulingpolicy")
    return require(ResourceArn("scheduling-policy/", r, "name"));
  if (action == "updateschedulingpolicy" || action == "deleteschedulingpolicy") {
    return require(ResourceArn("scheduling-policy/", r, "arn"));
  }
  if (action == "createjobqueue") return require(ResourceArn("job-queue/", r, "jobQueueName"));
  if (action == "updatejobqueue" || action == "deletejobqueue" || action == "listquotashares" ||
      action == "listservicejobs" || action == "getjobqueuesnapshot") {
    return require(arns_.Queue(QueueName(StringField(r, "jobQueue"))));
  }
  if (action == "createquotashare") {
    return require(arns_.Queue(QueueName(StringField(r, "jobQueue"))) + "/quota-share/" +
                   StringField(r, "quotaShareName"));
  }
  if (action == "updatequotashare" || action == "deletequotashare" ||
      action == "describequotashare") {
    return require(StringField(r, "quotaShareArn"));
  }
  // DescribeServiceEnvironments, DescribeJobQueues, DescribeSchedulingPolicies and
  // ListSchedulingPolicies act on no particular resource: AWS authorizes them on "*".
  require("*");
}

void Controller::AuthorizeTags(const std::string& method, const std::string& arn) {
  const std::string action = method == "GET"    ? "batch:ListTagsForResource"
                             : method == "POST" ? "batch:TagResource"
                                                : "batch:UntagResource";
  if (audit_) audit_->resource = arn;
  const JobRecord* job = arn.find(":service-job/") != std::string::npos ? FindJob(arn) : nullptr;
  Require(action, arn, job);
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

Result<Controller::Reply> Controller::RunAs(const Caller& caller, const std::string& audited_action,
                                            const std::function<void()>& authorize,
                                            const std::function<Reply()>& body) {
  // A refused call answers once its audit record is durable too (outside the lock), so the
  // trail a caller reads next holds it.
  std::shared_future<Status> refusal_written;
  Result<Reply> result = [&]() -> Result<Reply> {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_) return Refused();
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
    auto refused = [&](const std::string& outcome) {
      if (audit_) AddAudit(outcome);
      caller_ = nullptr;
      refusal_written = Finish().durable;
    };
    return Guarded([&] {
      try {
        authorize();
        Reply reply = body();
        if (audit_) AddAudit("Allowed");
        caller_ = nullptr;
        reply.durable = Finish().durable;
        return reply;
      } catch (const AccessDenied&) {
        refused("AccessDenied");
        throw;
      } catch (const ClientError& e) {
        refused(std::string("ClientException: ") + e.what());
        throw;
      } catch (const Json::exception&) {
        refused("ClientException: malformed request");
        throw;
      } catch (...) {
        // A refused request leaves nothing pending; what the engine already did is kept.
        refused("ServerException");
        throw;
      }
    });
  }();
  if (!result.ok()) AwaitRefusalWrite(std::move(refusal_written));
  return result;
}

std::string Controller::AuditedAction(const std::string& action) {
  auto it = ActionTable().find(action);
  return it != ActionTable().end() && it->second.mutating ? std::string("batch:") + it->second.name
                                                          : std::string();
}

void Controller::AuditRefusal(const Caller& caller, const std::string& audited_action,
                              const std::string& message) {
  if (audited_action.empty()) return;
  [[maybe_unused]] const Result<Reply> refused = RunAs(
      caller, audited_action, [] {}, [&]() -> Reply { Refuse(message); });
}

Result<Controller::Reply> Controller::Call(const std::string& action, const Json& r,
                                           const Caller& caller) {
  auto it = ActionTable().find(action);
  if (it == ActionTable().end()) return InvalidArgument("unknown action " + action);
  const std::string audited = AuditedAction(action);
  return RunAs(
      caller, audited, [&] { AuthorizeCall(action, r); },
      [&] {
        Reply reply = (this->*(it->second.handler))(r);
        if (audit_ && action == "submitservicejob" && reply.body.contains("jobArn")) {
          audit_->resource = reply.body["jobArn"].get<std::string>();
        }
        return reply;
      });
}

Result<Controller::Reply> Controller::Tags(const std::string& method, const std::string& arn,
                                           const Json& request,
                                           const std::vector<std::string>& tag_keys,
                                           const Caller& caller) {
  const std::string audited = method == "POST"     ? "batch:TagResource"
                              : method == "DELETE" ? "batch:UntagResource"
                                                   : "";
  return RunAs(
      caller, audited, [&] { AuthorizeTags(method, arn); },
      [&] { return TagsLocked(method, arn, request, tag_keys); });
}

}  // namespace allot::server
