#include "server/job_wire.h"

namespace allot::server {

namespace {

constexpr std::size_t kRecentPreemptions = 5;  // AWS keeps a sliding window

api::AttemptDetail Attempt(const AttemptRecord& a) {
  return {.resource_arn = a.resource_arn,
          .started_at = a.started_at,
          .stopped_at = a.stopped_at,
          .status_reason = a.status_reason};
}

api::PreemptionDetail Preemption(const PreemptionRecord& p) {
  api::PreemptionDetail out{
      .attempt = p.attempt,
      .preemptor = p.preemptor,
      .rule = p.rule,
      .key = {p.victim_priority, p.work_lost_when_chosen, p.attempt_started_at},
      .at = p.at,
      .work_lost = p.work_lost};
  // The preemptor and the runner-up by name and share too (the controller unnames what its
  // reader may not describe).
  if (!p.preemptor_share.empty()) {
    out.preemptor_name = p.preemptor_name;
    out.preemptor_share = p.preemptor_share;
  }
  if (p.runner_up) {
    const RunnerUpRecord& u = *p.runner_up;
    out.runner_up = api::RunnerUpDetail{.job_id = u.job.id,
                                        .job_name = u.job.name,
                                        .share = u.job.share,
                                        .rule = u.rule,
                                        .put_back = u.put_back,
                                        .key = {u.priority, u.work_lost, u.attempt_started_at}};
  }
  return out;
}

// The preemptions a preemptor made: whom each stopped.
api::PreemptionMade Made(const CausedPreemption& c) {
  api::PreemptionMade out{.at = c.at};
  for (const VictimRef& v : c.victims) {
    out.victims.push_back({.job_id = v.job.id,
                           .job_name = v.job.name,
                           .share = v.job.share,
                           .attempt = v.attempt,
                           .rule = v.rule,
                           .work_lost = v.work_lost_when_chosen});
  }
  return out;
}

// Allot's extensions, under "allot".
api::JobExtensions Extensions(const JobRecord& job) {
  api::JobExtensions out{.seq = job.seq,
                         .attempt = job.attempt,
                         .failed_attempts = job.failed_attempts,
                         .preemptions = job.preemptions,
                         .last_checkpoint = job.last_checkpoint,
                         .runnable_since = job.runnable_since,
                         .submitted_by = std::string(job.submitted_by),
                         .attempt_timeout_seconds = job.attempt_timeout_seconds};
  // Per attempt, what the sandbox enforced ("uid=200001 gid=200001 memory=8 GiB pids=4096 ...").
  for (std::size_t i = 0; i < job.attempts().size(); ++i) {
    const std::string& enforced = job.attempts()[i].enforced_limits;
    if (!enforced.empty()) out.attempt_limits.emplace_back(static_cast<int>(i + 1), enforced);
  }
  if (!job.history) return out;
  const JobHistory& h = *job.history;
  for (const PreemptionRecord& p : h.preemptions) out.preemption_records.push_back(Preemption(p));
  out.dispatch_mode = h.dispatch_mode;
  if (h.stopping) out.stopping = std::make_pair(h.stopping->kind, h.stopping->reason);
  out.stop_rule = h.stop_rule;
  for (const CausedPreemption& c : h.caused) out.preemptions_made.push_back(Made(c));
  if (h.files_bytes >= 0) out.files_bytes = h.files_bytes;
  out.files_removed_at = h.files_removed_at;
  return out;
}

}  // namespace

api::ServiceJobSummary SummarizeJob(const JobRecord& job, const ArnContext& arns) {
  const std::vector<AttemptRecord>& attempts = job.attempts();
  return {.arn = arns.Job(job.id),
          .id = job.id,
          .name = job.name,
          .created_at = job.created_at,
          .scheduled_at = job.scheduled_at,
          .started_at = job.started_at,
          .stopped_at = job.stopped_at,
          .share = std::string(job.share),
          .status = job.status,
          .status_reason = job.status_reason,
          .capacity_usage = job.demand,
          .latest_attempt_arn = attempts.empty() ? std::string() : attempts.back().resource_arn};
}

api::ServiceJobDetail DescribeJob(const JobRecord& job, const ArnContext& arns) {
  const JobOptions& o = job.options();
  api::ServiceJobDetail out{.summary = SummarizeJob(job, arns),
                            .job_queue_arn = arns.Queue(job.queue),
                            .scheduling_priority = job.priority,
                            .is_terminated = job.is_terminated,
                            .tags = o.tags,
                            .retry = o.retry,
                            .timeout_config_seconds = o.timeout_config_seconds,
                            .preemption_retries = o.preemption_retries,
                            .allot = Extensions(job)};
  for (const AttemptRecord& a : job.attempts()) out.attempts.push_back(Attempt(a));
  if (job.history && job.history->preempted_attempt_count > 0) {
    out.preempted_attempt_count = job.history->preempted_attempt_count;
    for (const AttemptRecord& a : job.history->attempts) {
      if (a.preempted) out.recent_preempted_attempts.push_back(Attempt(a));
    }
    auto& recent = out.recent_preempted_attempts;
    if (recent.size() > kRecentPreemptions) {
      recent.erase(recent.begin(), recent.end() - kRecentPreemptions);
    }
  }
  return out;
}

}  // namespace allot::server
