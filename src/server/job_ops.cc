// Service jobs: submit, update, describe, list, terminate, and the queue snapshot.

#include <algorithm>
#include <cctype>
#include <charconv>
#include <random>

#include "common/strings.h"
#include "model/rules.h"
#include "server/api_error.h"
#include "server/controller.h"
#include "server/payload.h"

namespace allot::server {

namespace {


std::string NewJobId() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  const std::uint64_t a = rng();
  const std::uint64_t b = rng();
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%08x-%04x-4%03x-%04x-%012llx",
                static_cast<unsigned>(a >> 32), static_cast<unsigned>((a >> 16) & 0xffff),
                static_cast<unsigned>(a & 0xfff),
                static_cast<unsigned>(0x8000 | ((b >> 48) & 0x3fff)),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

model::RetryStrategy ReadRetry(const Json& r, Json* doc) {
  model::RetryStrategy retry;
  const Json* rs = OptionalObject(r, "retryStrategy");
  if (rs == nullptr) return retry;
  const std::int64_t attempts = RequireInt(*rs, "attempts", 1, model::rules::kMaxRetryAttempts,
                                            "retryStrategy.attempts");
  retry.attempts = static_cast<int>(attempts);
  Json saved = {{"attempts", attempts}, {"evaluateOnExit", Json::array()}};
  if (const Json* rules = OptionalArray(*rs, "evaluateOnExit", "retryStrategy.evaluateOnExit")) {
    if (rules->size() > model::rules::kMaxEvaluateOnExit) {
      Refuse("retryStrategy.evaluateOnExit allows at most 5 entries, got " +
             std::to_string(rules->size()));
    }
    RequireObjects(*rules, "retryStrategy.evaluateOnExit");
    for (const Json& rule : *rules) {
      const std::string action = AsciiLower(
          OptionalString(rule, "action", "retryStrategy.evaluateOnExit.action").value_or("RETRY"));
      if (action != "retry" && action != "exit") {
        Refuse("retryStrategy.evaluateOnExit.action must be RETRY or EXIT, got " +
               Quoted(Json(action)));
      }
      const std::string pattern =
          OptionalString(rule, "onStatusReason", "retryStrategy.evaluateOnExit.onStatusReason")
              .value_or("*");
      if (pattern.size() > model::rules::kMaxOnStatusReason) {
        Refuse("retryStrategy.evaluateOnExit.onStatusReason allows at most 512 characters");
      }
      retry.evaluate_on_exit.push_back(
          {action == "retry" ? model::RetryAction::kRetry : model::RetryAction::kExit, pattern});
      saved["evaluateOnExit"].push_back(
          {{"action", action == "retry" ? "RETRY" : "EXIT"}, {"onStatusReason", pattern}});
    }
  }
  (*doc)["retryStrategy"] = saved;
  return retry;
}

Json CapacityUsage(const model::Demand& demand) {
  Json out = Json::array();
  for (const model::UnitCount& u : demand) {
    out.push_back({{"capacityUnit", u.unit}, {"quantity", static_cast<double>(u.count)}});
  }
  return out;
}

// The SHA-256-free request identity for clientToken: the request without the token.
std::string RequestHash(const Json& r) {
  Json copy = r;
  copy.erase("clientToken");
  return copy.dump();
}

bool IsTerminalStatus(const std::string& s) { return s == "SUCCEEDED" || s == "FAILED"; }

// A whole number >= 0 written in decimal digits only, that fits its type.
template <typename T>
bool ParseWhole(std::string_view text, T* out) {
  if (text.empty() || text.size() > 20) return false;
  const auto [ptr, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && ptr == text.data() + text.size() && *out >= 0;
}

// The quota share a job names: required, existing and not DISABLED on a quota-share queue, and
// refused on any other.
std::optional<std::string> ReadQuotaShare(const Json& r, const std::string& qname,
                                          bool quota_managed,
                                          const std::map<std::string, Json>& shares) {
  std::optional<std::string> share = OptionalString(r, "quotaShareName");
  if (quota_managed) {
    if (!share) Refuse("quotaShareName is required on job queue " + qname + ", which uses quota shares");
    if (!shares.count(qname + "/" + *share)) {
      Refuse("quotaShareName " + *share + " does not exist in job queue " + qname);
    }
    if (shares.at(qname + "/" + *share).value("state", "") == "DISABLED") {
      Refuse("quota share " + *share + " is DISABLED and accepts no new jobs");
    }
  } else if (share) {
    Refuse("quotaShareName is allowed only on job queues with a quota-share scheduling policy; "
           "job queue " + qname + " has none");
  }
  return share;
}

// Every instance type the job asks for is a capacity unit of the queue's service environment.
void CheckUnitsOffered(const model::Demand& demand, const Json& env) {
  for (const model::UnitCount& u : demand) {
    bool known = false;
    std::string units;
    for (const Json& l : env["capacityLimits"]) {
      known = known || l["capacityUnit"] == u.unit;
      units += (units.empty() ? "" : ", ") + l["capacityUnit"].get<std::string>();
    }
    if (!known) {
      Refuse("serviceRequestPayload.ResourceConfig.InstanceType " + u.unit +
             " is not offered by service environment " +
             env["serviceEnvironmentName"].get<std::string>() + " (it has " + units + ")");
    }
  }
}

// The new job's document, as DescribeServiceJob shows it before its share, retry strategy and
// limits are added. REQUIRES: job.seq, job.id and job.spec are set.
Json NewJobDoc(const JobRecord& job, const std::string& arn, const std::string& name,
               const Json& r, const Json& queue) {
  return {{"jobArn", arn},
          {"jobId", job.id},
          {"jobName", name},
          {"jobQueue", queue["jobQueueArn"]},
          {"serviceJobType", "SAGEMAKER_TRAINING"},
          {"schedulingPriority", job.spec.priority},
          {"status", "SUBMITTED"},
          {"createdAt", job.spec.created_at},
          {"capacityUsage", CapacityUsage(job.spec.demand)},
          {"attempts", Json::array()},
          {"isTerminated", false},
          {"tags", ReadTags(r)},
          {"allot", {{"seq", job.seq}, {"attempt", 0}, {"failedAttempts", 0}, {"preemptions", 0},
                     {"lastCheckpoint", 0}, {"preemptionRecords", Json::array()}}}};
}

// preemptionConfiguration, and the attempt timeout: the shorter of the payload's
// MaxRuntimeInSeconds and timeoutConfig.attemptDurationSeconds.
void ReadJobLimits(const Json& r, std::optional<std::int64_t> max_runtime_seconds,
                   JobRecord& job) {
  if (const Json* pc = OptionalObject(r, "preemptionConfiguration")) {
    if (auto n = OptionalInt(*pc, "preemptionRetriesBeforeTermination", 0,
                             model::rules::kMaxPreemptionRetries,
                             "preemptionConfiguration.preemptionRetriesBeforeTermination")) {
      job.spec.preemption_retries = static_cast<std::int32_t>(*n);
      job.doc["preemptionConfiguration"] = {{"preemptionRetriesBeforeTermination", *n}};
    }
  }
  std::optional<std::int64_t> timeout = max_runtime_seconds;
  if (const Json* tc = OptionalObject(r, "timeoutConfig")) {
    if (auto s = OptionalInt(*tc, "attemptDurationSeconds", 1,
                             model::rules::kMaxAttemptDurationSeconds,
                             "timeoutConfig.attemptDurationSeconds")) {
      job.doc["timeoutConfig"] = {{"attemptDurationSeconds", *s}};
      timeout = timeout ? std::min(*timeout, *s) : *s;
    }
  }
  if (timeout) job.doc["allot"]["attemptTimeoutSeconds"] = *timeout;
  job.spec.attempt_timeout_seconds = timeout;
}

}  // namespace

Controller::Reply Controller::SubmitServiceJob(const Json& r) {
  if (r.dump().size() > std::size_t{30} * 1024) Refuse("a SubmitServiceJob request must be at most 30 KiB");
  const std::string name = RequireString(r, "jobName");
  RefuseUnless(model::rules::CheckName(name, "jobName"));
  Json& queue = MustFindQueue(RequireString(r, "jobQueue"));
  const std::string qname = queue["jobQueueName"];
  RequireEnum(r, "serviceJobType", {"SAGEMAKER_TRAINING"});
  if (OptionalString(r, "shareIdentifier")) {
    Refuse("shareIdentifier is for fair-share queues; job queue " + qname +
           " uses quotaShareName");
  }
  std::optional<std::string> share = ReadQuotaShare(r, qname, IsQuotaManaged(queue), shares_);
  if (queue.value("state", "") == "DISABLED") Refuse("job queue " + qname + " is DISABLED");
  std::optional<std::string> token = OptionalString(r, "clientToken");
  if (token) {
    if (token->empty() || token->size() > model::rules::kMaxClientTokenLength) {
      Refuse("clientToken must be 1 to 64 characters, got " + std::to_string(token->size()));
    }
    auto it = client_tokens_.find(qname + "/" + *token);
    if (it != client_tokens_.end()) {
      if (it->second.second != RequestHash(r)) {
        Refuse("clientToken " + *token + " was already used with a different request");
      }
      const JobRecord& job = jobs_.at(it->second.first);
      return {{{"jobArn", job.doc["jobArn"]}, {"jobName", job.doc["jobName"]}, {"jobId", job.id}}};
    }
  }
  const std::int64_t priority =
      OptionalInt(r, "schedulingPriority", 0, model::rules::kMaxSchedulingPriority).value_or(0);
  const std::string payload = RequireString(r, "serviceRequestPayload");
  ParsedPayload parsed = ParsePayload(payload, name);
  CheckChannelSources(parsed.launch);
  const Json& env = environments_.at(queue["serviceEnvironmentOrder"][0]["serviceEnvironment"]);
  if (UsesNumInstances(env)) {
    // NUM_INSTANCES counts every instance together, whatever its type.
    parsed.demand = {{std::string(model::rules::kNumInstances), parsed.launch.instance_count}};
  }
  CheckUnitsOffered(parsed.demand, env);
  JobRecord job;
  job.seq = next_seq_++;
  job.id = NewJobId();
  job.spec.id = job.seq;
  job.spec.queue = qname;
  job.spec.share = share.value_or(kImplicitShare);
  job.spec.priority = static_cast<std::int32_t>(priority);
  job.spec.demand = parsed.demand;
  job.spec.created_at = Now();
  job.doc = NewJobDoc(job, Arn("service-job/" + job.id), name, r, queue);
  if (share) job.doc["quotaShareName"] = *share;
  job.spec.retry = ReadRetry(r, &job.doc);
  ReadJobLimits(r, parsed.max_runtime_seconds, job);
  job.launch = parsed.launch;
  const std::string id = job.id;
  const model::JobSpec spec = job.spec;
  JobRecord& stored = jobs_.emplace(id, std::move(job)).first->second;
  job_by_seq_[stored.seq] = id;
  IndexJob(stored);
  Touch(stored);
  try {
    Apply(model::SubmitJob{spec});  // its decisions need the record
  } catch (const ClientError&) {
    UnindexJob(stored);
    job_by_seq_.erase(spec.id);
    touched_.erase(id);
    jobs_.erase(id);
    throw;
  }
  pending_.Put(store::Kind::kJobPayload, id, payload);
  if (token) {
    client_tokens_[qname + "/" + *token] = {id, RequestHash(r)};
    pending_.Put(store::Kind::kClientToken, qname + "/" + *token,
                 Json{{"jobId", id}, {"hash", RequestHash(r)}}.dump());
  }
  return {{{"jobArn", stored.doc["jobArn"]}, {"jobName", name}, {"jobId", id}}};
}

Controller::Reply Controller::UpdateServiceJob(const Json& r) {
  JobRecord& job = MustFindJob(RequireString(r, "jobId"));
  const std::int64_t priority =
      RequireInt(r, "schedulingPriority", 0, model::rules::kMaxSchedulingPriority);
  const std::string status = job.doc["status"];
  if (IsTerminalStatus(status)) {
    Refuse("job " + job.id + " is " + status + "; only unfinished jobs can change priority");
  }
  Apply(model::UpdateJobPriority{job.seq, static_cast<std::int32_t>(priority)});
  job.doc["schedulingPriority"] = priority;
  Touch(job);
  return {{{"jobArn", job.doc["jobArn"]}, {"jobName", job.doc["jobName"]}, {"jobId", job.id}}};
}

Controller::Reply Controller::DescribeServiceJob(const Json& r) {
  JobRecord& job = MustFindJob(RequireString(r, "jobId"));
  Json out = job.doc;
  Result<std::optional<std::string>> payload = store_->Get(store::Kind::kJobPayload, job.id);
  if (payload.ok() && payload.value()) out["serviceRequestPayload"] = *payload.value();
  if (auto view = engine_.GetJob(job.seq); view && view->status == model::JobStatus::kRunnable) {
    if (auto why = engine_.Explain(job.seq); why.ok()) {
      out["allot"]["waitingReason"] = {{"rule", model::ToString(why->rule)},
                                       {"unit", why->unit},
                                       {"missing", why->missing},
                                       {"positionInShare", why->position_in_share},
                                       {"positionInQueue", why->position_in_queue},
                                       {"message", why->message}};
    }
  }
  return {out};
}

namespace {

struct ListFilters {
  std::optional<std::string> status;
  std::optional<std::string> name;  // lower case; trailing '*' = prefix
  std::optional<Timestamp> before;
  std::optional<Timestamp> after;
  std::optional<std::string> share;
};

ListFilters ReadFilters(const Json& r) {
  ListFilters f;
  bool status_applies = true;
  if (const Json* filters = OptionalArray(r, "filters")) {
    if (filters->size() > 1) {
      Refuse("filters takes one filter at a time, got " + std::to_string(filters->size()));
    }
    RequireObjects(*filters, "filters");
    for (const Json& kv : *filters) {
      const std::string key =
          RequireEnum(kv, "name", {"JOB_NAME", "BEFORE_CREATED_AT", "AFTER_CREATED_AT",
                                   "QUOTA_SHARE_NAME"}, "filters.name");
      const Json* values = OptionalArray(kv, "values", "filters.values");
      if (values == nullptr || values->size() != 1 || !(*values)[0].is_string()) {
        Refuse("filters." + key + " takes exactly one string value");
      }
      const std::string v = (*values)[0];
      if (key == "JOB_NAME") {
        f.name = AsciiLower(v);
        status_applies = false;
      } else if (key == "QUOTA_SHARE_NAME") {
        f.share = v;
      } else {
        Timestamp t = 0;
        if (!ParseWhole(v, &t)) {
          Refuse("filters." + key + " must be a time in epoch milliseconds, got " +
                 Quoted(Json(v)));
        }
        (key == "BEFORE_CREATED_AT" ? f.before : f.after) = t;
        status_applies = false;
      }
    }
  }
  const auto status = OptionalEnum(r, "jobStatus", {"SUBMITTED", "PENDING", "RUNNABLE",
                                                    "SCHEDULED", "STARTING", "RUNNING",
                                                    "SUCCEEDED", "FAILED"});
  if (status_applies) f.status = status.value_or("RUNNING");
  return f;
}

bool Matches(const ListFilters& f, const Json& doc) {
  if (f.status && doc["status"] != *f.status) return false;
  if (f.share && doc.value("quotaShareName", "") != *f.share) return false;
  const Timestamp created = doc["createdAt"];
  if (f.before && created >= *f.before) return false;
  if (f.after && created <= *f.after) return false;
  if (f.name) {
    const std::string name = AsciiLower(doc["jobName"].get<std::string>());
    if (!f.name->empty() && f.name->back() == '*') {
      if (name.rfind(f.name->substr(0, f.name->size() - 1), 0) != 0) return false;
    } else if (name != *f.name) {
      return false;
    }
  }
  return true;
}

Json Summary(const Json& doc) {
  Json s;
  for (const char* k : {"jobArn", "jobId", "jobName", "createdAt", "scheduledAt", "startedAt",
                        "stoppedAt", "serviceJobType", "quotaShareName", "status",
                        "statusReason", "capacityUsage", "latestAttempt"}) {
    if (doc.contains(k)) s[k] = doc[k];
  }
  return s;
}

}  // namespace

Controller::Reply Controller::ListServiceJobs(const Json& r) {
  const std::string qname = MustFindQueue(RequireString(r, "jobQueue"))["jobQueueName"];
  const ListFilters f = ReadFilters(r);
  const std::int64_t max =
      OptionalInt(r, "maxResults", 1, model::rules::kMaxPageSize).value_or(100);
  // Newest first; the token is the (createdAt, seq) of the last job returned. A status (alone or
  // with a quota share) reads its own index; name and time filters read all of the queue's jobs.
  const ListIndex::Set& index =
      f.name || f.before || f.after ? list_index_.All(qname)
      : f.share                     ? list_index_.ByShareStatus(qname, *f.share, *f.status)
                                    : list_index_.ByStatus(qname, *f.status);
  auto it = index.rbegin();
  if (f.before) it = std::make_reverse_iterator(index.lower_bound({*f.before, 0}));
  if (auto token = OptionalString(r, "nextToken")) {
    Timestamp created = 0;
    model::JobId seq = 0;
    const std::size_t dot = token->find('.');
    const std::string_view token_text = *token;
    if (dot == std::string::npos || !ParseWhole(token_text.substr(0, dot), &created) ||
        !ParseWhole(token_text.substr(dot + 1), &seq)) {
      Refuse("nextToken " + Quoted(Json(*token)) + " was not returned by ListServiceJobs");
    }
    it = std::make_reverse_iterator(index.lower_bound({created, seq}));
  }
  Json out = {{"jobSummaryList", Json::array()}};
  std::pair<Timestamp, model::JobId> last{};
  for (; it != index.rend(); ++it) {
    if (f.after && it->first <= *f.after) break;  // older from here on
    const Json& doc = jobs_.at(job_by_seq_.at(it->second)).doc;
    if (!Matches(f, doc)) continue;
    if (static_cast<std::int64_t>(out["jobSummaryList"].size()) == max) {
      out["nextToken"] = std::to_string(last.first) + "." + std::to_string(last.second);
      break;
    }
    out["jobSummaryList"].push_back(Summary(doc));
    last = *it;
  }
  return {out};
}

Controller::Reply Controller::TerminateServiceJob(const Json& r) {
  JobRecord& job = MustFindJob(RequireString(r, "jobId"));
  const std::string reason = RequireString(r, "reason");
  if (reason.size() > model::rules::kMaxTerminateReasonLength) {
    Refuse("reason must be at most 1024 characters, got " + std::to_string(reason.size()));
  }
  if (IsTerminalStatus(job.doc["status"])) return {};
  job.doc["isTerminated"] = true;
  Touch(job);
  Apply(model::TerminateJob{job.seq, reason});
  return {};
}

Controller::Reply Controller::GetJobQueueSnapshot(const Json& r) {
  Json& queue = MustFindQueue(RequireString(r, "jobQueue"));
  const std::string qname = queue["jobQueueName"];
  const Timestamp now = Now();
  auto entry = [this](model::JobId seq) {
    const Json& doc = jobs_.at(job_by_seq_.at(seq)).doc;
    return Json{{"jobArn", doc["jobArn"]},
                {"earliestTimeAtPosition", doc["allot"].value("runnableSince", doc["createdAt"])}};
  };
  Json front = Json::array();
  for (model::JobId seq : engine_.FrontOfQueue(qname, "", 100)) front.push_back(entry(seq));
  Json out = {{"frontOfQueue", {{"jobs", front}, {"lastUpdatedAt", now}}}};
  Result<engine::QueueUsage> usage = engine_.Usage(qname);
  Json total = Json::array();
  Json per_share = Json::array();
  Json fronts = Json::object();
  if (usage.ok()) {
    for (const engine::UnitUsage& u : usage->pool) {
      total.push_back({{"capacityUnit", u.unit}, {"quantity", static_cast<double>(u.used)}});
    }
    const bool quota_managed = IsQuotaManaged(queue);
    for (const engine::ShareUsage& s : usage->shares) {
      if (!quota_managed) continue;  // a plain queue's one share is internal
      Json used = Json::array();
      Json borrowed = Json::array();
      Json lent = Json::array();
      for (const engine::UnitUsage& u : s.units) {
        if (u.limit == 0 && u.used == 0) continue;
        used.push_back({{"capacityUnit", u.unit}, {"quantity", static_cast<double>(u.used)}});
        borrowed.push_back({{"capacityUnit", u.unit}, {"quantity", static_cast<double>(u.borrowed)}});
        lent.push_back({{"capacityUnit", u.unit}, {"quantity", static_cast<double>(u.lent)}});
      }
      per_share.push_back({{"quotaShareName", s.name}, {"capacityUsage", used},
                           {"borrowed", borrowed}, {"lent", lent},
                           {"waitingJobs", s.waiting_jobs}});
      Json list = Json::array();
      for (model::JobId seq : engine_.FrontOfQueue(qname, s.name, 100)) list.push_back(entry(seq));
      fronts[s.name] = list;
    }
  }
  out["frontOfQuotaShares"] = {{"quotaShares", fronts}, {"lastUpdatedAt", now}};
  out["queueUtilization"] = {{"totalCapacityUsage", total}, {"lastUpdatedAt", now}};
  if (IsQuotaManaged(queue)) {
    out["queueUtilization"]["quotaShareUtilization"] = {{"topCapacityUtilization", per_share}};
  }
  return {out};
}

}  // namespace allot::server
