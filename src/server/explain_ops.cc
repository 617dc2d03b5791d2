// Explanations: GET /allot/v1/jobs/{id}/explain (why a job waits, why it was preempted), the
// sentence a RUNNABLE job's statusReason carries, and preemption records that name both sides.
//
// Tenancy: only a caller allowed to describe a job explains it (DescribeServiceJob's check).
// Other jobs it names (holders of the capacity, the preemptor, the runner-up, victims) keep their
// id and name only where the caller may describe them too; elsewhere the share alone is shown.

#include <algorithm>
#include <cstdio>

#include "common/civil_time.h"
#include "server/api_error.h"
#include "server/controller.h"

namespace allot::server {

namespace {

double InstanceSeconds(Duration ms) { return static_cast<double>(ms) / 1000.0; }

}  // namespace

// Instance-seconds for a sentence: two decimals below 10, whole above (whatif_ops.cc too).
std::string InstanceSecondsText(Duration ms);
std::string InstanceSecondsText(Duration ms) {
  char buf[32];
  const double s = InstanceSeconds(ms);
  std::snprintf(buf, sizeof(buf), s < 10 ? "%.2f" : "%.0f", s);
  return buf;
}

namespace {

std::string Ordinal(std::int64_t n) {
  const std::int64_t tens = n % 100;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th"
                       : n % 10 == 1              ? "st"
                       : n % 10 == 2              ? "nd"
                       : n % 10 == 3              ? "rd"
                                                  : "th";
  return std::to_string(n) + suffix;
}

// Why the victim order put the victim before the runner-up (docs/design/engine.md, Victims):
// the first key that differs.
std::string ChosenOver(const PreemptionRecord& p, const RunnerUpRecord& r) {
  if (r.put_back) {
    return "the runner-up came first in the victim order but was put back: the victims after it "
           "free enough without it";
  }
  if (p.victim_priority != r.priority) {
    return "lower priority (" + std::to_string(p.victim_priority) + " < " +
           std::to_string(r.priority) + ")";
  }
  if (p.work_lost_when_chosen != r.work_lost) {
    return "less work lost since its last checkpoint (" +
           InstanceSecondsText(p.work_lost_when_chosen) + " < " + InstanceSecondsText(r.work_lost) +
           " instance-seconds)";
  }
  if (p.attempt_started_at != r.attempt_started_at) return "started more recently";
  return "the lower job number, all else equal";
}

// Explain's "preempted" for the job's latest preemption `p`, its `preempted` preemptions so far
// and its `retries` (preemptionRetriesBeforeTermination; unset: unlimited). The preemptor and
// runner-up references come named or not from the caller (Controller::JobReferenceOf).
api::PreemptionExplanation Preempted(const PreemptionRecord& p, bool stopping,
                                     std::optional<std::int32_t> retries, std::int32_t preempted,
                                     api::JobReference preemptor,
                                     std::optional<api::JobReference> runner_up) {
  api::PreemptionExplanation out{
      .attempt = p.attempt,
      .at = p.at,
      .preemptor = std::move(preemptor),
      .rule = p.rule,
      .key = {p.victim_priority, p.work_lost_when_chosen, p.attempt_started_at},
      .stopping = stopping,
      .work_lost = p.work_lost.value_or(p.work_lost_when_chosen),
      .work_lost_final = p.work_lost.has_value(),
      .retries_before_termination = retries,
      .retries_left = retries ? std::optional(std::max(0, *retries - preempted)) : std::nullopt};
  if (p.runner_up && runner_up) {
    const RunnerUpRecord& r = *p.runner_up;
    out.runner_up = api::RunnerUpExplanation{.job = std::move(*runner_up),
                                             .rule = r.rule,
                                             .key = {r.priority, r.work_lost, r.attempt_started_at},
                                             .put_back = r.put_back,
                                             .chosen_over_because = ChosenOver(p, r)};
  }
  return out;
}

// The sentence for `pre`, made from the record `p` after `preempted` preemptions.
std::string PreemptedSentence(const PreemptionRecord& p, const api::PreemptionExplanation& pre,
                              std::int32_t preempted) {
  const std::string who = pre.preemptor.job_name
                              ? "job " + *pre.preemptor.job_name + " (" + p.preemptor +
                                    ") of quota share " + p.preemptor_share
                              : "a job of quota share " + p.preemptor_share;
  std::string s = std::string(pre.stopping ? "Being preempted" : "Preempted") + " by " + who +
                  " under rule " + std::string(model::ToString(p.rule));
  if (pre.runner_up) {
    const api::RunnerUpExplanation& ru = *pre.runner_up;
    const std::string name =
        ru.job.job_name ? "job " + *ru.job.job_name : "a job of quota share " + ru.job.share;
    s += "; chosen over " + name + ": " + ru.chosen_over_because;
  } else {
    s += "; no other job could have been chosen";
  }
  s += ". " + InstanceSecondsText(pre.work_lost) + " instance-seconds of work " +
       (p.work_lost ? "were lost" : "are lost if it stops now") + ", ";
  if (pre.retries_before_termination) {
    const std::int32_t retries = *pre.retries_before_termination;
    const int left = std::max(0, retries - preempted);
    s += retries - preempted < 0
             ? "and it had no preemption retry left: it is terminated."
             : std::to_string(left) + " preemption retr" + (left == 1 ? "y" : "ies") + " left.";
  } else {
    s += "and its preemption retries are unlimited.";
  }
  return s;
}

}  // namespace

bool Controller::MayName(const std::string& id) {
  const JobRecord* job = FindJob(id);
  return job != nullptr ? CanDescribe(*job) : caller_->system;
}

api::JobReference Controller::JobReferenceOf(const JobRef& ref) {
  api::JobReference out{.share = ref.share};
  if (MayName(ref.id)) {
    out.job_id = ref.id;
    out.job_name = ref.name;
  }
  return out;
}

std::optional<RunnerUpRecord> Controller::RunnerUpOf(const model::Preemption& p) {
  if (!p.runner_up) return std::nullopt;
  const model::VictimRecord& c = p.runner_up->candidate;
  const JobRecord* job = JobBySeq(c.victim);
  RunnerUpRecord r;
  r.job = {job ? job->id : std::to_string(c.victim), job ? job->name : "", c.share};
  r.rule = c.rule;
  r.priority = c.key.priority;
  r.work_lost = c.key.work_lost;
  r.attempt_started_at = c.key.started_at;
  r.put_back = p.runner_up->put_back;
  return r;
}

// Preemption records in Describe's "allot" part: the preemptor and runner-up by name and share,
// and the victims a preemptor's own record lists, each hidden to a caller who may not describe
// that job.
void Controller::RedactPreemptionRecords(api::JobExtensions& allot) {
  // A record without the preemptor's share is redacted all the same: MayName decides by the
  // job itself, and names nobody it cannot find.
  for (api::PreemptionDetail& r : allot.preemption_records) {
    if (!MayName(r.preemptor.value_or(""))) {
      r.preemptor.reset();
      r.preemptor_name.reset();
    }
    if (r.runner_up && !MayName(r.runner_up->job_id.value_or(""))) {
      r.runner_up->job_id.reset();
      r.runner_up->job_name.reset();
    }
  }
  for (api::PreemptionMade& made : allot.preemptions_made) {
    for (api::VictimDetail& v : made.victims) {
      if (!MayName(v.job_id.value_or(""))) {
        v.job_id.reset();
        v.job_name.reset();
      }
    }
  }
}

std::string Controller::RunnableReason(const JobRecord& job) const {
  const std::string& stored = job.status_reason;
  // AWS's own codes (a job that can never fit) already say it; keep them as they are.
  if (stored.starts_with("MISCONFIGURATION:")) return stored;
  Result<std::string> why = engine_.WaitSentence(job.seq);
  if (!why.ok() || why->empty()) return stored;
  return stored.empty() ? *why : stored + "; now waiting: " + *why;
}

api::WaitExplanation Controller::WaitExplanationOf(const model::WaitReason& why,
                                                   const std::string& share) {
  api::WaitExplanation out{.rule = why.rule,
                           .unit = why.unit,
                           .needed = why.needed,
                           .available = why.available,
                           .missing = why.missing,
                           .position_in_share = why.position_in_share,
                           .position_in_queue = why.position_in_queue,
                           .start_bound = why.start_bound,
                           .would_start = why.would_start,
                           .message = why.message,
                           .share = share,
                           .free_elsewhere = why.free_elsewhere,
                           .start_unknown = why.start_unknown,
                           .in_share_preemption = why.in_share_why_not,
                           .misconfiguration = why.misconfiguration};
  for (const model::Holder& h : why.holders) {
    api::HolderDetail& entry = out.holders.emplace_back(api::HolderDetail{
        .share = h.share, .held = h.held, .borrowed = h.borrowed, .more_jobs = h.more_jobs});
    for (const model::HolderJob& hj : h.jobs) {
      const JobRecord* job = JobBySeq(hj.id);
      if (job == nullptr || !CanDescribe(*job)) {
        ++entry.hidden_jobs;
        continue;
      }
      entry.jobs.push_back({.job_id = job->id,
                            .job_name = job->name,
                            .held = hj.held,
                            .ends_by = hj.ends_by != 0 ? std::optional(hj.ends_by) : std::nullopt});
    }
  }
  for (model::JobId seq : why.waiting_for) {
    if (const JobRecord* job = JobBySeq(seq)) {
      out.waiting_for.push_back(JobReferenceOf({job->id, job->name, std::string(job->share)}));
    }
  }
  return out;
}

std::string Controller::WaitingSummary(const model::WaitReason& why,
                                       const std::string& share) const {
  std::string s = why.message;
  if (!s.empty() && s.back() != '.') s += '.';
  if (why.rule == model::WaitRule::kMisconfigured) return s;
  std::string second = "It is " + Ordinal(why.position_in_share + 1) + " in quota share " + share +
                       " and " + Ordinal(why.position_in_queue + 1) + " in the queue";
  if (why.start_bound) {
    second += "; it can start by " + FormatRfc3339Utc(*why.start_bound) +
              " at the latest, when the time limits of the jobs holding the capacity end it" +
              (why.position_in_queue > 0 ? ", unless a job ahead of it takes it first" : "");
  } else if (!why.start_unknown.empty()) {
    second += "; its start is unknown: " + why.start_unknown;
  }
  if (!why.in_share_why_not.empty())
    second += "; in-share preemption does not apply: " + why.in_share_why_not;
  return s + " " + second + ".";
}

api::ExplainResponse Controller::ExplainJob(const JobRecord& job) {
  const std::string share(job.share);
  api::ExplainResponse out{.job_id = job.id, .job_name = job.name, .status = job.status};
  std::string summary;
  if (job.status == model::JobStatus::kRunnable) {
    if (Result<model::WaitReason> why = engine_.Explain(job.seq); why.ok()) {
      out.waiting = WaitExplanationOf(*why, share);
      summary = WaitingSummary(*why, share);
    }
  }
  // The latest preemption, while it still concerns the job: the attempt it stopped is the last
  // one (stopping, requeued, or ended by it).
  const JobHistory* h = job.history.get();
  if (h != nullptr && !h->preemptions.empty() && h->preemptions.back().attempt == job.attempt) {
    const PreemptionRecord& p = h->preemptions.back();
    const bool stopping = h->stopping && h->stopping->kind == model::StopKind::kPreemption;
    const auto preempted = static_cast<std::int32_t>(h->preemptions.size());
    std::optional<api::JobReference> runner_up;
    if (p.runner_up) runner_up = JobReferenceOf(p.runner_up->job);
    out.preempted = Preempted(p, stopping, job.options().preemption_retries, preempted,
                              JobReferenceOf({p.preemptor, p.preemptor_name, p.preemptor_share}),
                              std::move(runner_up));
    const std::string s = PreemptedSentence(p, *out.preempted, preempted);
    summary = summary.empty() ? s : s + " " + summary;
  }
  if (summary.empty()) {
    summary = model::IsTerminal(job.status)
                  ? "The job has finished (" + std::string(model::ToString(job.status)) +
                        "); nothing keeps it waiting."
                  : "The job is " + std::string(model::ToString(job.status)) +
                        "; it holds its capacity and is not waiting.";
  }
  out.summary = std::move(summary);
  return out;
}

Result<Controller::Reply> Controller::Explain(const Caller& caller, const std::string& id) {
  return RunAs(
      caller, "",
      [&] {
        const JobRecord* job = FindJob(id);
        return Allowed(*caller_, "batch:DescribeServiceJob",
                       job ? arns_.Job(job->id) : arns_.Job(id), job, std::nullopt);
      },
      [&]() -> Result<Reply> {
        ALLOT_ASSIGN_OR_RETURN(const JobRecord* job, JobNamed(id));
        return Reply{ExplainJob(*job), {}};
      });
}

}  // namespace allot::server
