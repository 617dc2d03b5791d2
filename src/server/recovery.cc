// Start-up: the engine is rebuilt from the store. Configuration first, then every live job in
// submission order. Attempts that were running when the server stopped are adopted again; one
// that left nothing to adopt ends here with a clear reason (the executor killed its leftovers,
// identified by the pid and start time recorded when it started) and the job is requeued without
// using a retry.

#include <algorithm>

#include "server/api_error.h"
#include "server/controller.h"
#include "server/payload.h"

namespace allot::server {

namespace {

constexpr char kLostReason[] =
    "Attempt lost: the server stopped while it ran; requeued without using a retry";

Result<std::vector<Json>> LoadDocs(store::Store& store, store::Kind kind) {
  Result<std::vector<store::Record>> records = store.Load(kind);
  if (!records.ok()) return records.status();
  std::vector<Json> docs;
  for (const store::Record& r : records.value()) {
    Json j = Json::parse(r.value, nullptr, false);
    if (j.is_discarded()) return Internal("corrupt record " + r.key + " in the store");
    docs.push_back(std::move(j));
  }
  return docs;
}

model::JobSpec SpecFromDoc(const Json& doc, const std::string& queue, const model::Demand& demand) {
  model::JobSpec spec;
  spec.id = doc["allot"]["seq"];
  spec.queue = queue;
  spec.share = doc.value("quotaShareName", kImplicitShare);
  spec.priority = doc["schedulingPriority"];
  spec.demand = demand;
  if (doc.contains("preemptionConfiguration")) {
    spec.preemption_retries = doc["preemptionConfiguration"]["preemptionRetriesBeforeTermination"];
  }
  if (doc.contains("retryStrategy")) {
    spec.retry.attempts = doc["retryStrategy"]["attempts"];
    for (const Json& e : doc["retryStrategy"]["evaluateOnExit"]) {
      spec.retry.evaluate_on_exit.push_back(
          {e["action"] == "EXIT" ? model::RetryAction::kExit : model::RetryAction::kRetry,
           e["onStatusReason"]});
    }
  }
  if (doc["allot"].contains("attemptTimeoutSeconds")) {
    spec.attempt_timeout_seconds = doc["allot"]["attemptTimeoutSeconds"];
  }
  spec.created_at = doc["createdAt"];
  return spec;
}

// The hosts' identities ExecutorStarted recorded; records written before start times were
// recorded give 0, which the executor never matches.
std::vector<exec::HostProcess> RecordedHosts(const Json& doc) {
  std::vector<exec::HostProcess> hosts;
  for (const Json& h : doc["allot"].value("hosts", Json::array())) {
    if (!h.is_object()) continue;
    hosts.push_back({.host = h.value("host", ""),
                     .pid = h.value("pid", 0),
                     .start_time = h.value("start_time", std::uint64_t{0}),
                     .child_pid = h.value("child_pid", 0),
                     .child_start_time = h.value("child_start_time", std::uint64_t{0})});
  }
  return hosts;
}

}  // namespace

Status Controller::Recover() {
  std::lock_guard<std::mutex> lock(mu_);
  return RecoverLocked();
}

Status Controller::RecoverLocked() {
  try {
    auto envs = LoadDocs(*store_, store::Kind::kServiceEnvironment);
    auto policies = LoadDocs(*store_, store::Kind::kSchedulingPolicy);
    auto queues = LoadDocs(*store_, store::Kind::kJobQueue);
    auto shares = LoadDocs(*store_, store::Kind::kQuotaShare);
    auto jobs = LoadDocs(*store_, store::Kind::kJob);
    auto tokens = store_->Load(store::Kind::kClientToken);
    for (const auto* r : {&envs, &policies, &queues, &shares, &jobs}) {
      if (!r->ok()) return r->status();
    }
    if (!tokens.ok()) return tokens.status();
    for (const Json& p : policies.value()) policies_[p["name"]] = p;
    for (const Json& e : envs.value()) {
      environments_[e["serviceEnvironmentName"]] = e;
      PutEnvironmentToEngine(e);
    }
    for (const Json& q : queues.value()) {
      queues_[q["jobQueueName"]] = q;
      PutQueueToEngine(q);
    }
    for (const Json& s : shares.value()) {
      const std::string queue = s["jobQueueArn"].get<std::string>().substr(
          s["jobQueueArn"].get<std::string>().find(":job-queue/") + 11);
      shares_[queue + "/" + s["quotaShareName"].get<std::string>()] = s;
      PutShareToEngine(s);
    }
    for (const store::Record& t : tokens.value()) {
      Json j = Json::parse(t.value);
      client_tokens_[t.key] = {j["jobId"], j["hash"]};
    }
    // In submission order. The sequence is read once per document: reading it inside the
    // comparison (two JSON lookups per compare) was a third of a restart at 100k jobs.
    std::vector<Json> docs = std::move(jobs).value();
    std::vector<std::pair<model::JobId, std::size_t>> order;
    order.reserve(docs.size());
    for (std::size_t i = 0; i < docs.size(); ++i) {
      order.emplace_back(docs[i]["allot"]["seq"].get<model::JobId>(), i);
    }
    std::sort(order.begin(), order.end());
    std::vector<Json> sorted;
    sorted.reserve(docs.size());
    for (const auto& [seq, i] : order) sorted.push_back(std::move(docs[i]));
    docs = std::move(sorted);
    // Attempts that still run take their capacity back before any waiting job is restored, so
    // that no pass hands that capacity to someone else.
    auto dispatched = [](const Json& doc) {
      const std::string s = doc["status"];
      return s == "SCHEDULED" || s == "STARTING" || s == "RUNNING";
    };
    for (Json& doc : docs) {
      if (dispatched(doc)) RecoverJob(std::move(doc));
    }
    for (Json& doc : docs) {
      if (!doc.is_null() && !dispatched(doc)) RecoverJob(std::move(doc));
    }
  } catch (const std::exception& e) {
    return Internal(std::string("recovery failed: ") + e.what());
  }
  Finish();
  return Status::Ok();
}

void Controller::RecoverJob(Json doc) {
  JobRecord job;
  job.seq = doc["allot"]["seq"];
  job.id = doc["jobId"];
  next_seq_ = std::max(next_seq_, job.seq + 1);
  Json* queue = FindQueue(doc["jobQueue"]);
  const std::string qname = queue ? (*queue)["jobQueueName"].get<std::string>() : "";
  const std::string status = doc["status"];
  const bool live = status != "SUCCEEDED" && status != "FAILED" && queue != nullptr;
  model::Demand demand;
  for (const Json& u : doc["capacityUsage"]) {
    demand.push_back({u["capacityUnit"], static_cast<std::int64_t>(u["quantity"].get<double>())});
  }
  if (live) {
    Result<std::optional<std::string>> payload = store_->Get(store::Kind::kJobPayload, job.id);
    if (payload.ok() && payload.value()) {
      job.launch = ParsePayload(*payload.value(), doc["jobName"]).launch;
    }
  }
  job.spec = SpecFromDoc(doc, qname, demand);
  job.doc = std::move(doc);
  const std::string id = job.id;
  JobRecord& stored = jobs_.emplace(id, std::move(job)).first->second;
  job_by_seq_[stored.seq] = id;
  if (!qname.empty()) IndexJob(stored);
  if (!live) return;
  Json& d = stored.doc;
  const Json original = d;  // a start writes back only the jobs it changed
  std::string reason = d.value("statusReason", "");
  if (status == "SCHEDULED" || status == "STARTING" || status == "RUNNING") {
    if (AdoptAttempt(stored)) {
      UntouchIfUnchanged(stored, original);
      return;
    }
    const Timestamp now = Now();
    if (!d["attempts"].empty() && !d["attempts"].back().contains("stoppedAt")) {
      d["attempts"].back()["stoppedAt"] = now;
      d["attempts"].back()["statusReason"] = kLostReason;
    }
    d["allot"].erase("hosts");
    reason = kLostReason;
  }
  SetJobStatus(stored, "SUBMITTED");  // the restore below reports SUBMITTED -> RUNNABLE
  Touch(stored);
  Apply(model::RestoreJob{stored.spec, d["allot"]["attempt"], d["allot"]["failedAttempts"],
                          d["allot"]["preemptions"], d["allot"]["lastCheckpoint"], reason},
        false);
  UntouchIfUnchanged(stored, original);
}

// The restore passes through SUBMITTED: a job that comes back as it was keeps its time in
// RUNNABLE, and is not written again.
void Controller::UntouchIfUnchanged(JobRecord& job, const Json& original) {
  const Json& before = original["allot"];
  if (job.doc["status"] == original["status"] && before.contains("runnableSince")) {
    job.doc["allot"]["runnableSince"] = before["runnableSince"];
  }
  if (job.doc == original) touched_.erase(job.id);
}

// Watches the supervisors of a running attempt again and restores the job as RUNNING; false
// if nothing of the attempt is left to adopt (the executor then killed what the recorded
// identities still verify).
bool Controller::AdoptAttempt(JobRecord& job) {
  Json& d = job.doc;
  const int attempt = d["allot"]["attempt"];
  exec::AdoptSpec spec{.job = job.seq,
                       .attempt = attempt,
                       .attempt_dir = AttemptDir(job.id, attempt),
                       .instance_count = job.launch.instance_count,
                       .job_dir = JobDir(job.id),
                       .checkpoint_sync_dir = job.launch.checkpoint_sync_dir,
                       .recorded_hosts = RecordedHosts(d)};
  // AlreadyExists: the executor still watches it (a rebuild after a failed write, not a restart).
  const Status adopted = executor_->Adopt(spec);
  if (!adopted.ok() && adopted.code() != StatusCode::kAlreadyExists) return false;
  MarkSlotsTaken(job);
  model::RestoreJob::Running running;
  if (!d["attempts"].empty()) running.attempt_started = d["attempts"].back()["startedAt"];
  running.running_since = running.attempt_started;
  std::string reason = d.value("statusReason", "");
  if (d["allot"].contains("stopping")) {
    const std::string kind = d["allot"]["stopping"]["kind"];
    running.stopping = true;
    running.stop_kind = kind == "PREEMPTION" ? model::StopKind::kPreemption
                        : kind == "TIMEOUT"  ? model::StopKind::kTimeout
                                             : model::StopKind::kTermination;
    const std::string rule = d["allot"].value("stopRule", "RECLAIM");
    running.stop_rule = rule == "IN_SHARE"        ? model::PreemptionRule::kInShare
                        : rule == "LIMIT_LOWERED" ? model::PreemptionRule::kLimitLowered
                                                  : model::PreemptionRule::kReclaim;
    if (running.stop_kind != model::StopKind::kPreemption) {
      reason = d["allot"]["stopping"].value("reason", reason);  // the final reason
    }
  }
  SetJobStatus(job, "SUBMITTED");  // the restore reports SUBMITTED -> RUNNING
  Touch(job);
  Apply(model::RestoreJob{job.spec, attempt, d["allot"]["failedAttempts"],
                          d["allot"]["preemptions"], d["allot"]["lastCheckpoint"], reason, running},
        false);
  return true;
}

}  // namespace allot::server
