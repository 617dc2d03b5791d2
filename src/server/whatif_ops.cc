// POST /allot/v1/whatif: what the engine would decide now for a submission, a priority change or
// a quota-share update, computed by Engine::WhatIf on a copy of its state. Nothing changes: no
// job record, no store write, no engine change, no audit record (a what-if is a read, and reads
// are not audited), and no other caller sees it. The caller needs the permission the real call
// would need (AuthorizeCall with the real action's request).

#include "model/rules.h"
#include "server/api_error.h"
#include "server/controller.h"

namespace allot::server {

std::string InstanceSecondsText(Duration ms);  // explain_ops.cc

namespace {

std::string Plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

Result<Controller::Reply> Controller::WhatIf(const Caller& caller,
                                             const api::WhatIfRequest& request) {
  return RunAs(
      caller, "",
      [&] {
        return AuthorizeCall(std::visit([](const auto& r) { return api::Request(r); }, request));
      },
      [&]() -> Result<Reply> { return WhatIfLocked(request); });
}

Result<model::Event> Controller::WhatIfEvent(const api::WhatIfRequest& request,
                                             model::JobId* subject, std::string* share) {
  if (const auto* r = std::get_if<api::SubmitServiceJobRequest>(&request)) {
    // SubmitServiceJob's checks that bear on the decision (job_ops.cc): the queue, the share,
    // the priority and what the payload asks for. The job gets the next sequence number, which
    // no job holds yet; nothing is kept.
    ALLOT_ASSIGN_OR_RETURN(const JobQueueRecord* found, QueueNamed(r->queue));
    const JobQueueRecord& queue = *found;
    if (IsQuotaManaged(queue)) {
      if (!r->quota_share) {
        return InvalidArgument("quotaShareName is required on job queue " + queue.name +
                               ", which uses quota shares");
      }
      *share = *r->quota_share;
      if (!shares_.count(queue.name + "/" + *share)) {
        return InvalidArgument("quotaShareName " + *share + " does not exist in job queue " +
                               queue.name);
      }
    }
    model::JobSpec spec;
    spec.id = *subject = next_seq_;
    spec.queue = queue.name;
    spec.share = share->empty() ? kImplicitShare : *share;
    spec.priority = r->priority;
    spec.demand = DemandIn(environments_.at(queue.environment()), r->parsed);
    spec.attempt_timeout_seconds = AttemptTimeout(*r);
    spec.created_at = Now();
    return model::Event(model::SubmitJob{std::move(spec)});
  }
  if (const auto* r = std::get_if<api::UpdateServiceJobRequest>(&request)) {
    ALLOT_ASSIGN_OR_RETURN(const JobRecord* found, JobNamed(r->job_id));
    const JobRecord& job = *found;
    ALLOT_RETURN_IF_ERROR(PriorityChangeable(job));
    *subject = job.seq;
    *share = std::string(job.share);
    return model::Event(model::UpdateJobPriority{job.seq, r->priority});
  }
  ALLOT_ASSIGN_OR_RETURN(QuotaShareRecord updated,
                         UpdatedShare(std::get<api::UpdateQuotaShareRequest>(request)));
  return model::Event(model::PutQuotaShare{EngineConfig(updated)});
}

// One victim of a what-if; `preemptor` named when the question is a configuration change.
api::WhatIfVictim Controller::WhatIfVictimOf(const model::VictimRecord& v,
                                             const JobRecord* preemptor) {
  const JobRecord* job = JobBySeq(v.victim);
  api::WhatIfVictim out{.job = JobReferenceOf({job ? job->id : "", job ? job->name : "", v.share}),
                        .rule = v.rule};
  // A job the caller may not describe shows its share and the rule only: its priority and its
  // work are another team's (explain and DescribeServiceJob hide them the same way).
  if (out.job.job_id) {
    out.priority = v.key.priority;
    out.work_lost = v.key.work_lost;
  }
  if (preemptor != nullptr) {
    out.preemptor = JobReferenceOf({preemptor->id, preemptor->name, std::string(preemptor->share)});
  }
  return out;
}

Result<Controller::Reply> Controller::WhatIfLocked(const api::WhatIfRequest& request) {
  model::JobId subject = 0;
  std::string share;
  ALLOT_ASSIGN_OR_RETURN(const model::Event event, WhatIfEvent(request, &subject, &share));
  Result<engine::WhatIfAnswer> answer = engine_.WhatIf(event, Now(), subject);
  if (!answer.ok()) return InvalidArgument(answer.status().message());

  api::WhatIfResponse out;
  std::vector<api::WhatIfStart> starts;
  bool preempts = false;
  bool starts_subject = false;
  std::string victim_text;
  for (const model::Decision& d : answer->decisions) {
    if (const auto* p = std::get_if<model::Preemption>(&d)) {
      if (subject != 0 && p->preemptor != subject) continue;
      preempts = true;
      for (const model::VictimRecord& v : p->victims) {
        api::WhatIfVictim& victim = out.victims.emplace_back(
            WhatIfVictimOf(v, subject == 0 ? JobBySeq(p->preemptor) : nullptr));
        const std::optional<std::string>& name = victim.job.job_name;
        victim_text +=
            std::string(victim_text.empty() ? "" : ", ") +
            (name ? *name + " of " : std::string("a job of ")) + "quota share " + v.share + " (" +
            std::string(model::ToString(v.rule)) +
            (name ? ", " + InstanceSecondsText(v.key.work_lost) + " instance-seconds lost)"
                  : std::string(")"));
      }
    } else if (const auto* x = std::get_if<model::Dispatch>(&d)) {
      if (x->job == subject) starts_subject = true;
      if (subject != 0) continue;
      if (const JobRecord* job = JobBySeq(x->job)) {
        starts.push_back({.job = JobReferenceOf({job->id, job->name, std::string(job->share)}),
                          .mode = x->mode});
      }
    }
  }
  const bool starts_any = subject == 0 ? !starts.empty() : starts_subject;
  // A new priority for a job already dispatched only moves it among the victim candidates.
  const JobRecord* subject_job = subject == 0 ? nullptr : JobBySeq(subject);
  const bool running = !preempts && !starts_any && subject_job != nullptr &&
                       model::IsDispatched(subject_job->status);
  out.decision = preempts     ? api::WhatIfDecision::kPreempt
                 : starts_any ? api::WhatIfDecision::kStart
                 : running    ? api::WhatIfDecision::kRunning
                              : api::WhatIfDecision::kWait;
  if (running) {
    out.summary = "It is already " + std::string(model::ToString(subject_job->status)) +
                  ": a new priority changes only the order in which it would be chosen as a "
                  "victim.";
  } else if (subject == 0) {
    out.summary = "The change would preempt " + Plural(out.victims.size(), "job", "jobs") +
                  (victim_text.empty() ? "" : " (" + victim_text + ")") + " and start " +
                  Plural(starts.size(), "waiting job", "waiting jobs") + " now.";
  } else if (preempts) {
    out.summary = "It would preempt " + Plural(out.victims.size(), "job", "jobs") + ": " +
                  victim_text + "; it starts when they have stopped.";
  } else if (starts_any) {
    out.summary = "It would start now.";
  } else if (answer->wait) {
    out.summary = "It would wait. " + WaitingSummary(*answer->wait, share);
  } else {
    out.summary = "It would not start now.";
  }
  if (subject == 0) out.starts = std::move(starts);
  if (answer->wait && !preempts && !starts_any && !running) {
    out.explanation = WaitExplanationOf(*answer->wait, share);
  }
  return Reply{std::move(out), {}};
}

}  // namespace allot::server
