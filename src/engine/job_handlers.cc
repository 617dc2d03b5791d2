#include <algorithm>

#include "common/glob.h"
#include "common/strings.h"
#include "engine/accounting.h"
#include "engine/handlers.h"
#include "engine/job_index.h"
#include "engine/lifecycle.h"
#include "engine/nominees.h"
#include "model/rules.h"

namespace allot::engine::internal {

namespace {

using model::JobStatus;

std::string Id(JobId id) { return std::to_string(id); }

Status CheckPriority(std::int32_t p) {
  return model::rules::CheckRange(p, 0, model::rules::kMaxSchedulingPriority, "schedulingPriority");
}

Status CheckRetry(const model::RetryStrategy& r) {
  ALLOT_RETURN_IF_ERROR(model::rules::CheckRange(r.attempts, 1, model::rules::kMaxRetryAttempts,
                                                 "retryStrategy.attempts"));
  if (r.evaluate_on_exit.size() > model::rules::kMaxEvaluateOnExit) {
    return InvalidArgument("retryStrategy.evaluateOnExit allows at most 5 entries, got " +
                           std::to_string(r.evaluate_on_exit.size()));
  }
  for (const model::EvaluateOnExit& e : r.evaluate_on_exit) {
    // Characters, as the wire counts them: 512 of them may take up to 2,048 bytes.
    if (const std::size_t length = CodePoints(e.on_status_reason);
        length > model::rules::kMaxOnStatusReason) {
      return InvalidArgument("evaluateOnExit.onStatusReason must be at most 512 characters, got " +
                             std::to_string(length));
    }
  }
  return Status::Ok();
}

// `restoring`: a job recovered after a restart, which DISABLED queues and shares still run.
Status CheckSubmission(const EngineState& st, const model::JobSpec& spec, bool restoring) {
  if (st.FindJob(spec.id) != nullptr) return AlreadyExists("job " + Id(spec.id) + " exists");
  auto qit = st.queue_index.find(spec.queue);
  if (qit == st.queue_index.end()) return NotFound("job queue " + spec.queue + " does not exist");
  const QueueState& q = *st.queues[qit->second];
  if (q.deleting || (!restoring && q.config.state != model::State::kEnabled)) {
    return FailedPrecondition("job queue " + spec.queue + " is not ENABLED");
  }
  auto sit = q.share_index.find(spec.share);
  if (sit == q.share_index.end() || q.shares[sit->second]->deleting) {
    return NotFound("quota share " + spec.share + " does not exist in job queue " + spec.queue);
  }
  if (!restoring && q.shares[sit->second]->config.state != model::State::kEnabled) {
    return FailedPrecondition("quota share " + spec.share + " is DISABLED and accepts no new jobs");
  }
  ALLOT_RETURN_IF_ERROR(CheckPriority(spec.priority));
  ALLOT_RETURN_IF_ERROR(CheckRetry(spec.retry));
  if (spec.preemption_retries && *spec.preemption_retries < 0) {
    return InvalidArgument("preemptionRetriesBeforeTermination must be at least 0, got " +
                           std::to_string(*spec.preemption_retries));
  }
  if (spec.attempt_timeout_seconds && *spec.attempt_timeout_seconds < 1) {
    return InvalidArgument("attemptDurationSeconds must be at least 1, got " +
                           std::to_string(*spec.attempt_timeout_seconds));
  }
  return model::NormalizeDemand(spec.demand).status();
}

std::uint32_t InternRetry(EngineState& st, const model::RetryStrategy& r) {
  std::string key = std::to_string(r.attempts);
  for (const model::EvaluateOnExit& e : r.evaluate_on_exit) {
    key += '\n' + std::to_string(static_cast<int>(e.action)) + e.on_status_reason;
  }
  auto [it, fresh] =
      st.retry_index.try_emplace(key, static_cast<std::uint32_t>(st.retry_policies.size()));
  if (fresh) st.retry_policies.push_back(r);
  return it->second;
}

// The job's current attempt, if `attempt` names it and it is dispatched.
Job* CurrentAttempt(EngineState& st, JobId id, int attempt) {
  Job* job = st.FindJob(id);
  if (job == nullptr || job->attempt != attempt || !model::IsDispatched(job->status)) {
    return nullptr;
  }
  return job;
}

bool ShouldRetry(const EngineState& st, const Job& job, const std::string& reason) {
  const model::RetryStrategy& r = st.retry_policies[job.retry];
  if (job.failed_attempts >= r.attempts) return false;
  for (const model::EvaluateOnExit& e : r.evaluate_on_exit) {
    if (GlobMatch(e.on_status_reason, reason)) return e.action == model::RetryAction::kRetry;
  }
  return true;  // as in AWS Batch: no matching rule means retry
}

// `reason`, and then why the attempt's checkpoints were not saved, when they were not.
std::string WithCheckpointError(std::string reason, const std::string& checkpoint_error) {
  if (checkpoint_error.empty()) return reason;
  return std::move(reason) + "; its checkpoints were not saved: " + checkpoint_error;
}

void EndPreempted(EngineState& st, Job& job, const model::AttemptEnded& e) {
  // An attempt whose launch never began lost nothing and used up no preemption.
  if (e.began) ++job.preemptions;
  const std::string reason =
      WithCheckpointError(model::PreemptionReason(job.stop_rule), e.checkpoint_error);
  // What was really lost: the work since the last checkpoint when the processes were gone, so a
  // job that checkpoints on SIGTERM within the grace period loses (almost) nothing.
  const std::int64_t lost =
      e.began ? st.ShapeOf(job).instances * std::max<Duration>(0, st.now - job.WorkReference()) : 0;
  st.out->push_back(
      model::PreemptedAttempt{job.id, job.attempt, job.stop_rule, lost, job.preemptions, reason});
  if (e.began && job.preemption_retries >= 0 && job.preemptions > job.preemption_retries) {
    FinishJob(st, job, JobStatus::kFailed,
              "Preemption retries exhausted (preemptionRetriesBeforeTermination=" +
                  std::to_string(job.preemption_retries) + "): " + reason);
    return;
  }
  MakeRunnable(st, job, reason);
}

// A stopped attempt ends the way its stop says, whatever its exit status: a well-behaved job
// checkpoints on SIGTERM and exits 0, and that is still a preemption (or a termination), as a
// stopped SageMaker training job is "Stopped" whatever its process returned.
void EndStopped(EngineState& st, Job& job, const model::AttemptEnded& e) {
  switch (job.stop_kind) {
    case model::StopKind::kPreemption:
      EndPreempted(st, job, e);
      return;
    case model::StopKind::kTermination:
    case model::StopKind::kTimeout:
      FinishJob(st, job, JobStatus::kFailed,
                WithCheckpointError(st.final_reasons[job.id], e.checkpoint_error));
      return;
  }
}

void EndRunning(EngineState& st, Job& job, const model::AttemptEnded& e) {
  std::string reason = WithCheckpointError(e.reason, e.checkpoint_error);
  switch (e.outcome) {
    case model::AttemptOutcome::kSucceeded:
      FinishJob(st, job, JobStatus::kSucceeded, std::move(reason));
      return;
    case model::AttemptOutcome::kRequeue:
      MakeRunnable(st, job, std::move(reason));
      return;
    case model::AttemptOutcome::kFailed:
      ++job.failed_attempts;
      if (ShouldRetry(st, job, e.reason)) {  // the attempt's own reason, as the rules name it
        MakeRunnable(st, job, std::move(reason));
      } else {
        FinishJob(st, job, JobStatus::kFailed, std::move(reason));
      }
      return;
  }
}

}  // namespace

namespace {

Job& AddJob(EngineState& st, const model::JobSpec& spec) {
  const std::uint32_t qi = st.queue_index.find(spec.queue)->second;
  QueueState& q = *st.queues[qi];
  Job job;
  job.id = spec.id;
  job.queue = qi;
  job.share = q.share_index.find(spec.share)->second;
  job.shape = InternShape(q, model::NormalizeDemand(spec.demand).value());
  job.retry = InternRetry(st, spec.retry);
  job.priority = spec.priority;
  job.preemption_retries = spec.preemption_retries.value_or(-1);
  job.created_at = spec.created_at;
  job.timeout = spec.attempt_timeout_seconds ? Seconds(*spec.attempt_timeout_seconds) : 0;
  Job& stored = st.jobs.emplace(job.id, std::move(job)).first->second;
  ++q.live_jobs;
  ++st.ShareOf(stored).live_jobs;
  st.dirty.insert(qi);
  return stored;
}

}  // namespace

Status Handle(EngineState& st, const model::SubmitJob& e) {
  ALLOT_RETURN_IF_ERROR(CheckSubmission(st, e.spec, /*restoring=*/false));
  MakeRunnable(st, AddJob(st, e.spec), "");
  return Status::Ok();
}

namespace {

// A restored attempt that still runs holds its capacity again, as it did before the restart.
void RestoreRunning(EngineState& st, Job& job, const model::RestoreJob::Running& r,
                    const std::string& reason) {
  QueueState& q = st.QueueOf(job);
  const Shape& shape = st.ShapeOf(job);
  job.misconfig = CheckMisconfiguration(q, job);
  job.attempt_started = r.attempt_started;
  job.running_since = r.running_since;
  AddUsage(q, kActual, job.share, shape, +1);
  ++st.ShareOf(job).dispatched_jobs;
  if (r.stopping) {
    job.stopping = true;
    job.stop_kind = r.stop_kind;
    job.stop_rule = r.stop_rule;
    ++q.stopping_jobs;
    if (r.stop_kind != model::StopKind::kPreemption) st.final_reasons[job.id] = reason;
    if (r.stop_kind == model::StopKind::kPreemption && WillRequeue(job)) AddRequeuing(st, job);
  } else {
    AddUsage(q, kProjected, job.share, shape, +1);
    AddCandidate(st, job);
    if (job.timeout > 0 && r.running_since > 0) {
      st.deadlines.insert({r.running_since + job.timeout, job.id, DeadlineKind::kAttemptTimeout});
    }
  }
  SetStatus(st, job, JobStatus::kRunning, reason);
}

}  // namespace

Status Handle(EngineState& st, const model::RestoreJob& e) {
  ALLOT_RETURN_IF_ERROR(CheckSubmission(st, e.spec, /*restoring=*/true));
  Job& job = AddJob(st, e.spec);
  job.attempt = e.attempt;
  job.failed_attempts = e.failed_attempts;
  job.preemptions = e.preemptions;
  job.last_checkpoint = e.last_checkpoint;
  if (e.running) {
    RestoreRunning(st, job, *e.running, e.reason);
  } else {
    MakeRunnable(st, job, e.reason);
  }
  return Status::Ok();
}

Status Handle(EngineState& st, const model::UpdateJobPriority& e) {
  Job* job = st.FindJob(e.job);
  if (job == nullptr) return NotFound("job " + Id(e.job) + " is not live");
  ALLOT_RETURN_IF_ERROR(CheckPriority(e.priority));
  const bool waiting = job->status == JobStatus::kRunnable && !job->nominated;
  const bool candidate = model::IsDispatched(job->status) && !job->stopping;
  if (waiting) RemoveWaiting(st, *job);
  if (candidate) RemoveCandidate(st, *job);
  const bool requeuing = job->stopping && RemoveRequeuing(st, *job);
  job->priority = e.priority;
  if (waiting) AddWaiting(st, *job);
  if (candidate) AddCandidate(st, *job);
  if (requeuing) AddRequeuing(st, *job);
  st.dirty.insert(job->queue);
  return Status::Ok();
}

Status Handle(EngineState& st, const model::TerminateJob& e) {
  Job* job = st.FindJob(e.job);
  if (job == nullptr) return NotFound("job " + Id(e.job) + " is not live");
  const std::uint32_t queue = job->queue;
  TerminateLiveJob(st, *job, e.reason.empty() ? "Terminated by user" : e.reason);
  st.dirty.insert(queue);
  CollectDeleted(st, queue);
  return Status::Ok();
}

Status Handle(EngineState& st, const model::AttemptStarting& e) {
  Job* job = CurrentAttempt(st, e.job, e.attempt);
  if (job != nullptr && job->status == JobStatus::kScheduled) {
    SetStatus(st, *job, JobStatus::kStarting, job->status_reason);
  }
  return Status::Ok();
}

Status Handle(EngineState& st, const model::AttemptRunning& e) {
  Job* job = CurrentAttempt(st, e.job, e.attempt);
  if (job == nullptr || job->status == JobStatus::kRunning) return Status::Ok();
  SetStatus(st, *job, JobStatus::kRunning, job->status_reason);
  job->running_since = st.now;
  if (job->timeout > 0) {
    st.deadlines.insert({st.now + job->timeout, job->id, DeadlineKind::kAttemptTimeout});
  }
  return Status::Ok();
}

Status Handle(EngineState& st, const model::CheckpointObserved& e) {
  Job* job = CurrentAttempt(st, e.job, e.attempt);
  if (job == nullptr || e.at <= job->last_checkpoint) return Status::Ok();
  const bool candidate = !job->stopping;
  if (candidate) RemoveCandidate(st, *job);
  job->last_checkpoint = e.at;
  if (candidate) AddCandidate(st, *job);
  return Status::Ok();
}

Status Handle(EngineState& st, const model::AttemptEnded& e) {
  Job* job = CurrentAttempt(st, e.job, e.attempt);
  if (job == nullptr) return Status::Ok();
  QueueState& q = st.QueueOf(*job);
  const Shape& shape = st.ShapeOf(*job);
  AddUsage(q, kActual, job->share, shape, -1);
  --st.ShareOf(*job).dispatched_jobs;
  const std::uint32_t queue = job->queue;
  st.dirty.insert(queue);
  if (job->stopping) {
    RemoveRequeuing(st, *job);
    job->stopping = false;
    --q.stopping_jobs;
    const model::JobId id = job->id;
    EndStopped(st, *job, e);  // may end the job: `job` dangles from here on
    VictimEnded(st, q, id);
  } else {
    RemoveCandidate(st, *job);
    AddUsage(q, kProjected, job->share, shape, -1);
    EndRunning(st, *job, e);
  }
  CollectDeleted(st, queue);
  return Status::Ok();
}

Status Handle(EngineState&, const model::Tick&) { return Status::Ok(); }

Status Handle(EngineState& st, const model::HoldDispatches& e) {
  if (!e.held) {
    if (!st.dispatch_hold) return Status::Ok();
    st.dispatch_hold.reset();
    for (std::uint32_t q = 0; q < st.queues.size(); ++q) {
      if (st.queues[q]) st.dirty.insert(q);
    }
    return Status::Ok();
  }
  if (e.reason.empty()) return InvalidArgument("a hold of dispatches needs a reason");
  st.dispatch_hold = e.reason;
  return Status::Ok();
}

namespace {

void FireTimeout(EngineState& st, const Deadline& d) {
  Job* job = st.FindJob(d.job);
  if (job == nullptr || !model::IsDispatched(job->status) || job->stopping ||
      job->running_since == 0 || job->running_since + job->timeout != d.at) {
    return;
  }
  BeginStop(st, *job, model::StopKind::kTimeout, "Job attempt duration exceeded timeout", false);
  st.dirty.insert(job->queue);
}

void FireTimeLimit(EngineState& st, const Deadline& d) {
  Job* job = st.FindJob(d.job);
  if (job == nullptr || job->status != JobStatus::kRunnable || job->nominated) return;
  for (const model::JobStateTimeLimitAction& a : st.QueueOf(*job).config.time_limit_actions) {
    if (job->status_reason.rfind(a.reason, 0) != 0) continue;
    if (job->reason_since + Seconds(a.max_time_seconds) > st.now) continue;
    const std::uint32_t queue = job->queue;
    RemoveWaiting(st, *job);
    FinishJob(st, *job, JobStatus::kFailed,
              "Terminated by JobStateTimeLimit action due to reason: " + a.reason);
    st.dirty.insert(queue);
    CollectDeleted(st, queue);
    return;
  }
}

}  // namespace

void FireDeadlines(EngineState& st) {
  while (!st.deadlines.empty() && st.deadlines.begin()->at <= st.now) {
    const Deadline d = *st.deadlines.begin();
    st.deadlines.erase(st.deadlines.begin());
    if (d.kind == DeadlineKind::kAttemptTimeout) {
      FireTimeout(st, d);
    } else {
      FireTimeLimit(st, d);
    }
  }
}

}  // namespace allot::engine::internal
