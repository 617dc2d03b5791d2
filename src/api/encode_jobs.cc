// The service-job answers: Submit/Update, Describe (with Allot's extensions), List, and the
// queue snapshot.

#include "api/encode.h"
#include "api/encode_bodies.h"

namespace allot::api {

using Json = nlohmann::json;

namespace {

Json ResourceId(const std::string& arn) { return {{"name", "TrainingJobArn"}, {"value", arn}}; }

Json Attempt(const AttemptDetail& a) {
  Json out = {{"serviceResourceId", ResourceId(a.resource_arn)}, {"startedAt", a.started_at}};
  if (a.stopped_at != 0) {
    out["stoppedAt"] = a.stopped_at;
    out["statusReason"] = a.status_reason;
  }
  return out;
}

// Sets `key` to `value` when there is one.
template <typename T>
void PutIf(Json& out, const char* key, const std::optional<T>& value) {
  if (value) out[key] = *value;
}

Json RunnerUp(const RunnerUpDetail& u) {
  Json out = {{"share", u.share},
              {"rule", model::ToString(u.rule)},
              {"putBack", u.put_back},
              {"victimKey", bodies::EncodeVictimKey(u.key)}};
  PutIf(out, "jobId", u.job_id);
  PutIf(out, "jobName", u.job_name);
  return out;
}

Json Preemption(const PreemptionDetail& p) {
  Json out = {{"attempt", p.attempt},
              {"rule", model::ToString(p.rule)},
              {"victimKey", bodies::EncodeVictimKey(p.key)},
              {"at", p.at}};
  PutIf(out, "preemptor", p.preemptor);
  PutIf(out, "preemptorName", p.preemptor_name);
  PutIf(out, "preemptorShare", p.preemptor_share);
  if (p.work_lost) out["workLostInstanceSeconds"] = bodies::InstanceSeconds(*p.work_lost);
  if (p.runner_up) out["runnerUp"] = RunnerUp(*p.runner_up);
  return out;
}

Json Made(const PreemptionMade& m) {
  Json victims = Json::array();
  for (const VictimDetail& v : m.victims) {
    Json out = {{"share", v.share},
                {"attempt", v.attempt},
                {"rule", model::ToString(v.rule)},
                {"workLostInstanceSeconds", bodies::InstanceSeconds(v.work_lost)}};
    PutIf(out, "jobId", v.job_id);
    PutIf(out, "jobName", v.job_name);
    victims.push_back(std::move(out));
  }
  return {{"at", m.at}, {"victims", std::move(victims)}};
}

Json Waiting(const WaitingDetail& w) {
  return {{"rule", model::ToString(w.rule)},
          {"unit", w.unit},
          {"missing", w.missing},
          {"positionInShare", w.position_in_share},
          {"positionInQueue", w.position_in_queue},
          {"message", w.message}};
}

Json Extensions(const JobExtensions& e) {
  Json records = Json::array();
  for (const PreemptionDetail& p : e.preemption_records) records.push_back(Preemption(p));
  Json out = {{"seq", e.seq},
              {"attempt", e.attempt},
              {"failedAttempts", e.failed_attempts},
              {"preemptions", e.preemptions},
              {"lastCheckpoint", e.last_checkpoint},
              {"preemptionRecords", std::move(records)}};
  if (e.runnable_since != 0) out["runnableSince"] = e.runnable_since;
  if (!e.submitted_by.empty()) out["submittedBy"] = e.submitted_by;
  if (!e.attempt_limits.empty()) {
    Json limits = Json::array();
    for (const auto& [attempt, enforced] : e.attempt_limits) {
      limits.push_back({{"attempt", attempt}, {"enforcedLimits", enforced}});
    }
    out["attemptLimits"] = std::move(limits);
  }
  PutIf(out, "attemptTimeoutSeconds", e.attempt_timeout_seconds);
  if (e.dispatch_mode) out["dispatchMode"] = model::ToString(*e.dispatch_mode);
  if (e.stopping) {
    out["stopping"] = {{"kind", model::ToString(e.stopping->first)},
                       {"reason", e.stopping->second}};
  }
  if (e.stop_rule) out["stopRule"] = model::ToString(*e.stop_rule);
  if (!e.preemptions_made.empty()) {
    Json made = Json::array();
    for (const PreemptionMade& m : e.preemptions_made) made.push_back(Made(m));
    out["preemptionsMade"] = std::move(made);
  }
  if (e.waiting_reason) out["waitingReason"] = Waiting(*e.waiting_reason);
  PutIf(out, "filesBytes", e.files_bytes);
  if (e.files_removed_at != 0) out["filesRemovedAt"] = e.files_removed_at;
  return out;
}

Json RetryStrategy(const model::RetryStrategy& retry) {
  Json eval = Json::array();
  for (const model::EvaluateOnExit& e : retry.evaluate_on_exit) {
    eval.push_back({{"action", e.action == model::RetryAction::kExit ? "EXIT" : "RETRY"},
                    {"onStatusReason", e.on_status_reason}});
  }
  return {{"attempts", retry.attempts}, {"evaluateOnExit", eval}};
}

Json Front(const std::vector<FrontEntry>& entries) {
  Json out = Json::array();
  for (const FrontEntry& e : entries) {
    Json entry = {{"earliestTimeAtPosition", e.earliest_time_at_position}};
    if (e.job_arn) entry["jobArn"] = *e.job_arn;
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

Json EncodeCapacity(const model::Demand& demand) {
  Json out = Json::array();
  for (const model::UnitCount& u : demand) {
    out.push_back({{"capacityUnit", u.unit}, {"quantity", static_cast<double>(u.count)}});
  }
  return out;
}

Json Encode(const ServiceJobSummary& job) {
  Json out = {{"jobArn", job.arn},
              {"jobId", job.id},
              {"jobName", job.name},
              {"createdAt", job.created_at},
              {"serviceJobType", "SAGEMAKER_TRAINING"},
              {"status", model::ToString(job.status)},
              {"capacityUsage", EncodeCapacity(job.capacity_usage)}};
  if (job.scheduled_at != 0) out["scheduledAt"] = job.scheduled_at;
  if (job.started_at != 0) out["startedAt"] = job.started_at;
  if (job.stopped_at != 0) out["stoppedAt"] = job.stopped_at;
  if (!job.share.empty()) out["quotaShareName"] = job.share;
  if (!job.status_reason.empty()) out["statusReason"] = job.status_reason;
  if (!job.latest_attempt_arn.empty()) {
    out["latestAttempt"] = {{"serviceResourceId", ResourceId(job.latest_attempt_arn)}};
  }
  return out;
}

Json Encode(const ServiceJobDetail& job) {
  Json out = Encode(job.summary);
  out["jobQueue"] = job.job_queue_arn;
  out["schedulingPriority"] = job.scheduling_priority;
  out["isTerminated"] = job.is_terminated;
  Json attempts = Json::array();
  for (const AttemptDetail& a : job.attempts) attempts.push_back(Attempt(a));
  out["attempts"] = std::move(attempts);
  out["tags"] = EncodeTags(job.tags);
  if (job.retry) out["retryStrategy"] = RetryStrategy(*job.retry);
  if (job.timeout_config_seconds) {
    out["timeoutConfig"] = {{"attemptDurationSeconds", *job.timeout_config_seconds}};
  }
  if (job.preemption_retries) {
    out["preemptionConfiguration"] = {
        {"preemptionRetriesBeforeTermination", *job.preemption_retries}};
  }
  if (job.preempted_attempt_count > 0) {
    Json recent = Json::array();
    for (const AttemptDetail& a : job.recent_preempted_attempts) {
      recent.push_back({{"serviceResourceId", ResourceId(a.resource_arn)},
                        {"startedAt", a.started_at},
                        {"stoppedAt", a.stopped_at},
                        {"statusReason", a.status_reason}});
    }
    out["preemptionSummary"] = {{"preemptedAttemptCount", job.preempted_attempt_count},
                                {"recentPreemptedAttempts", std::move(recent)}};
  }
  PutIf(out, "serviceRequestPayload", job.payload);
  out["allot"] = Extensions(job.allot);
  return out;
}

namespace bodies {

double InstanceSeconds(Duration instance_ms) { return static_cast<double>(instance_ms) / 1000.0; }

Json EncodeVictimKey(const VictimKey& k) {
  return {{"priority", k.priority},
          {"workLostInstanceSeconds", InstanceSeconds(k.work_lost)},
          {"attemptStartedAt", k.attempt_started_at}};
}

Json Body(const ServiceJobChanged& r) {
  return {{"jobArn", r.arn}, {"jobName", r.name}, {"jobId", r.id}};
}

Json Body(const ListServiceJobsResponse& r) {
  Json list = Json::array();
  for (const ServiceJobSummary& job : r.jobs) list.push_back(Encode(job));
  Json out = {{"jobSummaryList", std::move(list)}};
  PutIf(out, "nextToken", r.next_token);
  return out;
}

Json Body(const JobQueueSnapshotResponse& r) {
  Json fronts = Json::object();
  for (const auto& [share, entries] : r.front_of_shares) fronts[share] = Front(entries);
  Json out = {
      {"frontOfQueue", {{"jobs", Front(r.front_of_queue)}, {"lastUpdatedAt", r.last_updated_at}}},
      {"frontOfQuotaShares", {{"quotaShares", fronts}, {"lastUpdatedAt", r.last_updated_at}}},
      {"queueUtilization",
       {{"totalCapacityUsage", EncodeCapacity(r.total_usage)},
        {"lastUpdatedAt", r.last_updated_at}}}};
  if (r.share_utilization) {
    Json per_share = Json::array();
    for (const ShareUtilization& s : *r.share_utilization) {
      per_share.push_back({{"quotaShareName", s.name},
                           {"capacityUsage", EncodeCapacity(s.used)},
                           {"borrowed", EncodeCapacity(s.borrowed)},
                           {"lent", EncodeCapacity(s.lent)},
                           {"waitingJobs", s.waiting_jobs}});
    }
    out["queueUtilization"]["quotaShareUtilization"] = {
        {"topCapacityUtilization", std::move(per_share)}};
  }
  return out;
}

}  // namespace bodies

}  // namespace allot::api
