#include "engine/lifecycle.h"

#include <utility>

#include "common/check.h"
#include "engine/accounting.h"
#include "engine/job_index.h"
#include "engine/nominees.h"

namespace allot::engine::internal {

using model::JobStatus;
using model::Misconfiguration;

void SetStatus(EngineState& st, Job& job, JobStatus to, std::string reason) {
  if (job.status == to && job.status_reason == reason) return;
  st.out->push_back(model::StatusChanged{job.id, job.status, to, reason});
  job.status = to;
  job.status_reason = std::move(reason);
}

namespace {

// Sum of the configured limits of every lending share other than `self` for unit `u`.
std::int64_t ConfiguredLendable(const QueueState& q, std::uint32_t self, std::uint32_t u) {
  std::int64_t total = 0;
  for (std::uint32_t i = 0; i < q.shares.size(); ++i) {
    const ShareState* s = q.shares[i].get();
    if (i != self && s && s->lends()) total += s->limit[u];
  }
  return total;
}

void ScheduleTimeLimits(EngineState& st, const Job& job) {
  if (job.status_reason.empty()) return;
  for (const model::JobStateTimeLimitAction& a : st.QueueOf(job).config.time_limit_actions) {
    if (job.status_reason.rfind(a.reason, 0) == 0) {
      st.deadlines.insert(
          {job.reason_since + Seconds(a.max_time_seconds), job.id, DeadlineKind::kTimeLimitAction});
    }
  }
}

}  // namespace

Misconfiguration CheckMisconfiguration(const QueueState& q, const Job& job) {
  const ShareState& s = *q.shares[job.share];
  const Shape& shape = q.shapes[job.shape];
  for (const auto& [u, n] : shape.parts) {
    if (n > q.pool[u]) return Misconfiguration::kServiceEnvironmentMax;
  }
  for (const auto& [u, n] : shape.parts) {
    if (!s.borrows()) {
      if (n > s.limit[u]) return Misconfiguration::kShareLimit;
    } else if (s.borrow_cap[u] != kInfinite && n > s.limit[u] + s.borrow_cap[u]) {
      return Misconfiguration::kShareAndBorrowLimit;
    }
  }
  if (s.borrows()) {
    for (const auto& [u, n] : shape.parts) {
      if (n - s.limit[u] > ConfiguredLendable(q, job.share, u)) {
        return Misconfiguration::kBorrowableCapacity;
      }
    }
  }
  return Misconfiguration::kNone;
}

void MakeRunnable(EngineState& st, Job& job, std::string reason) {
  job.misconfig = CheckMisconfiguration(st.QueueOf(job), job);
  if (job.misconfig != Misconfiguration::kNone)
    reason = model::MisconfigurationReason(job.misconfig);
  job.reason_since = st.now;
  SetStatus(st, job, JobStatus::kRunnable, std::move(reason));
  AddWaiting(st, job);
  ScheduleTimeLimits(st, job);
}

void RecheckWaiting(EngineState& st, JobId id) {
  // Read through the const lookup first: a what-if copy (whatif.cc) then copies only the jobs
  // whose misconfiguration changes.
  const Job& seen = *std::as_const(st).FindJob(id);
  const Misconfiguration now = CheckMisconfiguration(*st.queues[seen.queue], seen);
  if (now == seen.misconfig) {
    ScheduleTimeLimits(st, seen);  // the queue's actions may have changed
    return;
  }
  Job& job = *st.FindJob(id);
  RemoveWaiting(st, job);
  job.misconfig = now;
  AddWaiting(st, job);
  job.reason_since = st.now;
  SetStatus(st, job, JobStatus::kRunnable, model::MisconfigurationReason(now));
  ScheduleTimeLimits(st, job);
}

void DispatchJob(EngineState& st, Job& job, model::DispatchMode mode, bool projected_held) {
  QueueState& q = st.QueueOf(job);
  const Shape& shape = st.ShapeOf(job);
  AddUsage(q, kActual, job.share, shape, +1);
  if (!projected_held) AddUsage(q, kProjected, job.share, shape, +1);
  ++job.attempt;
  job.attempt_started = st.now;
  job.running_since = 0;
  job.nominated = false;
  ++st.ShareOf(job).dispatched_jobs;
  AddCandidate(st, job);
  SetStatus(st, job, JobStatus::kScheduled, "");
  st.out->push_back(model::Dispatch{job.id, job.attempt, mode});
}

void BeginStop(EngineState& st, Job& job, model::StopKind kind, std::string reason,
               bool already_removed) {
  ALLOT_CHECK(model::IsDispatched(job.status) && !job.stopping);
  if (!already_removed) {
    RemoveCandidate(st, job);
    AddUsage(st.QueueOf(job), kProjected, job.share, st.ShapeOf(job), -1);
  }
  job.stopping = true;
  ++st.QueueOf(job).stopping_jobs;
  job.stop_kind = kind;
  st.out->push_back(model::Stop{job.id, job.attempt, kind, reason});
  if (kind == model::StopKind::kPreemption) {
    if (WillRequeue(job)) AddRequeuing(st, job);
    SetStatus(st, job, job.status, std::string(model::kPreemptionInProgress) + reason);
  } else {
    st.final_reasons[job.id] = std::move(reason);
  }
}

void Denominate(EngineState& st, Job& job) {
  ALLOT_CHECK(job.nominated);
  QueueState& q = st.QueueOf(job);
  AddUsage(q, kProjected, job.share, st.ShapeOf(job), -1);
  q.nominees.erase(job.nomination);
  ForgetNominee(st, q, job.id);
  job.nominated = false;
  job.misconfig = CheckMisconfiguration(q, job);
  AddWaiting(st, job);
}

void FinishJob(EngineState& st, Job& job, JobStatus status, std::string reason) {
  SetStatus(st, job, status, std::move(reason));
  const model::JobId id = job.id;
  --st.QueueOf(job).live_jobs;
  --st.ShareOf(job).live_jobs;
  st.final_reasons.erase(id);
  ForgetNominee(st, st.QueueOf(job), id);
  st.EraseJob(id);  // `job` dangles from here on
}

void TerminateLiveJob(EngineState& st, Job& job, std::string reason) {
  if (model::IsDispatched(job.status)) {
    if (!job.stopping) {
      BeginStop(st, job, model::StopKind::kTermination, std::move(reason), false);
    } else {
      RemoveRequeuing(st, job);
      job.stop_kind = model::StopKind::kTermination;  // a preemption becomes final
      st.final_reasons[job.id] = std::move(reason);
    }
    return;
  }
  if (job.nominated) {
    Denominate(st, job);
  }
  RemoveWaiting(st, job);
  FinishJob(st, job, JobStatus::kFailed, std::move(reason));
}

}  // namespace allot::engine::internal
