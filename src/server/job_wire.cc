#include "server/job_wire.h"

#include "server/config_wire.h"

namespace allot::server {

namespace {

constexpr std::size_t kRecentPreemptions = 5;  // AWS keeps a sliding window

Json ResourceId(const AttemptRecord& a) {
  return {{"name", "TrainingJobArn"}, {"value", a.resource_arn}};
}

Json Attempt(const AttemptRecord& a) {
  Json out = {{"serviceResourceId", ResourceId(a)}, {"startedAt", a.started_at}};
  if (a.stopped_at != 0) {
    out["stoppedAt"] = a.stopped_at;
    out["statusReason"] = a.status_reason;
  }
  return out;
}

Json PreemptionSummary(const JobHistory& h) {
  Json recent = Json::array();
  for (const AttemptRecord& a : h.attempts) {
    if (!a.preempted) continue;
    recent.push_back({{"serviceResourceId", ResourceId(a)},
                      {"startedAt", a.started_at},
                      {"stoppedAt", a.stopped_at},
                      {"statusReason", a.status_reason}});
  }
  while (recent.size() > kRecentPreemptions) recent.erase(recent.begin());
  return {{"preemptedAttemptCount", h.preempted_attempt_count},
          {"recentPreemptedAttempts", recent}};
}

Json PreemptionRecords(const JobHistory& h) {
  Json out = Json::array();
  for (const PreemptionRecord& p : h.preemptions) {
    Json r = {{"attempt", p.attempt},
              {"preemptor", p.preemptor},
              {"rule", model::ToString(p.rule)},
              {"victimKey",
               {{"priority", p.victim_priority},
                {"workLostInstanceSeconds", static_cast<double>(p.work_lost_when_chosen) / 1000.0},
                {"attemptStartedAt", p.attempt_started_at}}},
              {"at", p.at}};
    if (p.work_lost) r["workLostInstanceSeconds"] = static_cast<double>(*p.work_lost) / 1000.0;
    // The preemptor and the runner-up by name and share too (the caller hides what its reader
    // may not describe: explain_ops.cc).
    if (!p.preemptor_share.empty()) {
      r["preemptorName"] = p.preemptor_name;
      r["preemptorShare"] = p.preemptor_share;
    }
    if (p.runner_up) {
      const RunnerUpRecord& u = *p.runner_up;
      r["runnerUp"] = {{"jobId", u.job.id},
                       {"jobName", u.job.name},
                       {"share", u.job.share},
                       {"rule", model::ToString(u.rule)},
                       {"putBack", u.put_back},
                       {"victimKey",
                        {{"priority", u.priority},
                         {"workLostInstanceSeconds", static_cast<double>(u.work_lost) / 1000.0},
                         {"attemptStartedAt", u.attempt_started_at}}}};
    }
    out.push_back(std::move(r));
  }
  return out;
}

// The preemptions a preemptor made: whom each stopped.
Json PreemptionsMade(const JobHistory& h) {
  Json out = Json::array();
  for (const CausedPreemption& c : h.caused) {
    Json victims = Json::array();
    for (const VictimRef& v : c.victims) {
      victims.push_back(
          {{"jobId", v.job.id},
           {"jobName", v.job.name},
           {"share", v.job.share},
           {"attempt", v.attempt},
           {"rule", model::ToString(v.rule)},
           {"workLostInstanceSeconds", static_cast<double>(v.work_lost_when_chosen) / 1000.0}});
    }
    out.push_back({{"at", c.at}, {"victims", std::move(victims)}});
  }
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

// Allot's extensions, under "allot".
Json Extensions(const JobRecord& job) {
  Json out = {{"seq", job.seq},
              {"attempt", job.attempt},
              {"failedAttempts", job.failed_attempts},
              {"preemptions", job.preemptions},
              {"lastCheckpoint", job.last_checkpoint},
              {"preemptionRecords", job.history ? PreemptionRecords(*job.history) : Json::array()}};
  if (job.runnable_since != 0) out["runnableSince"] = job.runnable_since;
  if (!job.submitted_by.empty()) out["submittedBy"] = std::string(job.submitted_by);
  // Per attempt, what the sandbox enforced ("uid=200001 gid=200001 memory=8 GiB pids=4096 ...").
  Json limits = Json::array();
  for (std::size_t i = 0; i < job.attempts().size(); ++i) {
    const std::string& enforced = job.attempts()[i].enforced_limits;
    if (!enforced.empty()) limits.push_back({{"attempt", i + 1}, {"enforcedLimits", enforced}});
  }
  if (!limits.empty()) out["attemptLimits"] = limits;
  if (job.attempt_timeout_seconds) out["attemptTimeoutSeconds"] = *job.attempt_timeout_seconds;
  if (!job.history) return out;
  const JobHistory& h = *job.history;
  if (h.dispatch_mode) out["dispatchMode"] = model::ToString(*h.dispatch_mode);
  if (h.stopping) {
    out["stopping"] = {{"kind", model::ToString(h.stopping->kind)}, {"reason", h.stopping->reason}};
  }
  if (h.stop_rule) out["stopRule"] = model::ToString(*h.stop_rule);
  if (!h.caused.empty()) out["preemptionsMade"] = PreemptionsMade(h);
  return out;
}

// The fields a summary and the full document share.
void PutCommon(const JobRecord& job, const ArnContext& arns, Json& out) {
  out["jobArn"] = arns.Job(job.id);
  out["jobId"] = job.id;
  out["jobName"] = job.name;
  out["createdAt"] = job.created_at;
  if (job.scheduled_at != 0) out["scheduledAt"] = job.scheduled_at;
  if (job.started_at != 0) out["startedAt"] = job.started_at;
  if (job.stopped_at != 0) out["stoppedAt"] = job.stopped_at;
  out["serviceJobType"] = "SAGEMAKER_TRAINING";
  if (!job.share.empty()) out["quotaShareName"] = std::string(job.share);
  out["status"] = model::ToString(job.status);
  if (!job.status_reason.empty()) out["statusReason"] = job.status_reason;
  out["capacityUsage"] = CapacityUsage(job.demand);
  const std::vector<AttemptRecord>& attempts = job.attempts();
  if (!attempts.empty())
    out["latestAttempt"] = {{"serviceResourceId", ResourceId(attempts.back())}};
}

}  // namespace

Json CapacityUsage(const model::Demand& demand) {
  Json out = Json::array();
  for (const model::UnitCount& u : demand) {
    out.push_back({{"capacityUnit", u.unit}, {"quantity", static_cast<double>(u.count)}});
  }
  return out;
}

Json SummarizeJob(const JobRecord& job, const ArnContext& arns) {
  Json out = Json::object();
  PutCommon(job, arns, out);
  return out;
}

Json DescribeJob(const JobRecord& job, const ArnContext& arns) {
  Json out = Json::object();
  PutCommon(job, arns, out);
  out["jobQueue"] = arns.Queue(job.queue);
  out["schedulingPriority"] = job.priority;
  out["isTerminated"] = job.is_terminated;
  Json attempts = Json::array();
  for (const AttemptRecord& a : job.attempts()) attempts.push_back(Attempt(a));
  out["attempts"] = attempts;
  const JobOptions& o = job.options();
  out["tags"] = TagsJson(o.tags);
  if (o.retry) out["retryStrategy"] = RetryStrategy(*o.retry);
  if (o.timeout_config_seconds) {
    out["timeoutConfig"] = {{"attemptDurationSeconds", *o.timeout_config_seconds}};
  }
  if (o.preemption_retries) {
    out["preemptionConfiguration"] = {
        {"preemptionRetriesBeforeTermination", *o.preemption_retries}};
  }
  if (job.history && job.history->preempted_attempt_count > 0) {
    out["preemptionSummary"] = PreemptionSummary(*job.history);
  }
  out["allot"] = Extensions(job);
  return out;
}

}  // namespace allot::server
