// Engine::Explain: why a RUNNABLE job waits, computed on demand from the current state so that
// the pass itself never pays for explanations.

#include <algorithm>

#include "engine/accounting.h"
#include "engine/engine.h"
#include "engine/pass.h"
#include "engine/state.h"

namespace allot::engine {

using internal::FitMode;
using internal::Job;
using internal::kActual;
using internal::kProjected;
using internal::QueueState;
using internal::ShareState;
using model::WaitReason;
using model::WaitRule;

namespace {

std::vector<model::Holder> Holders(const QueueState& q, std::uint32_t u) {
  std::vector<model::Holder> out;
  for (const auto& s : q.shares) {
    if (s && s->used[kActual][u] > 0) {
      out.push_back({s->config.name, s->used[kActual][u], internal::Borrowed(*s, kActual, u)});
    }
  }
  std::sort(out.begin(), out.end(), [](const model::Holder& a, const model::Holder& b) {
    return a.held != b.held ? a.held > b.held : a.share < b.share;
  });
  return out;
}

void Positions(const QueueState& q, const Job& job, WaitReason* r) {
  const internal::WaitKey key{job.priority, job.created_at, job.id};
  internal::WaitOrder before;
  auto count = [&](const internal::WaitSet& set) {
    return static_cast<std::int64_t>(std::distance(set.begin(), set.lower_bound(key)));
  };
  r->position_in_queue = static_cast<std::int64_t>(q.nominees.size());
  for (std::uint32_t i = 0; i < q.shares.size(); ++i) {
    const ShareState* s = q.shares[i].get();
    if (!s) continue;
    std::int64_t ahead = count(s->misconfigured);
    for (const auto& [shape, set] : s->waiting) ahead += count(set);
    r->position_in_queue += ahead;
    if (i == job.share) r->position_in_share = ahead;
  }
  (void)before;
}

// Fills rule, unit and amounts for the first unit that blocks the job.
void Blocking(const QueueState& q, const Job& job, WaitReason* r) {
  const ShareState& s = *q.shares[job.share];
  for (const auto& [u, n] : q.shapes[job.shape].parts) {
    r->unit = q.units[u];
    r->needed = n;
    r->holders = Holders(q, u);
    const std::int64_t room = s.limit[u] - s.used[kProjected][u];
    const bool quota = internal::UnitFits(q, kProjected, job.share, u, n, FitMode::kWithinQuota);
    const bool borrow =
        s.borrows() && internal::UnitFits(q, kProjected, job.share, u, n, FitMode::kBorrow);
    if (quota || borrow) {
      if (!internal::UnitFits(q, kActual, job.share, u, n,
                              quota ? FitMode::kWithinQuota : FitMode::kBorrow)) {
        r->rule = WaitRule::kCapacityStopping;
        r->available = q.pool[u] - q.agg[kActual].held[u];
        r->missing = n - std::max<std::int64_t>(0, r->available);
        return;
      }
      continue;
    }
    if (n > room && !s.borrows()) {
      r->rule = WaitRule::kShareLimit;
      r->available = std::max<std::int64_t>(0, room);
    } else if (n > room && std::max<std::int64_t>(0, s.used[kProjected][u] + n - s.limit[u]) >
                               s.borrow_cap[u]) {
      r->rule = WaitRule::kBorrowLimit;
      r->available =
          std::max<std::int64_t>(0, room) + s.borrow_cap[u] - internal::Borrowed(s, kProjected, u);
    } else if (q.agg[kProjected].held[u] + n > q.pool[u]) {
      const bool reserved = q.agg[kActual].held[u] + n <= q.pool[u];
      r->rule = reserved ? WaitRule::kReservedForPreemptor : WaitRule::kPoolFull;
      r->available = std::max<std::int64_t>(0, q.pool[u] - q.agg[kProjected].held[u]);
    } else {
      r->rule = n > room ? WaitRule::kNoLendableCapacity : WaitRule::kPoolFull;
      r->available =
          std::max<std::int64_t>(0, q.agg[kProjected].sum_i[u] - q.agg[kProjected].sum_b[u]);
    }
    r->missing = n - r->available;
    return;
  }
  r->rule = WaitRule::kFitsNextPass;
  r->unit.clear();
  r->needed = r->available = r->missing = 0;
  r->holders.clear();
}

// A job that fits may still wait for a preempted job of its share that comes before it and is
// still stopping: the capacity is kept for that job's requeue.
void KeptForRequeuing(const internal::EngineState& st, const QueueState& q, const Job& job,
                      WaitReason* r) {
  const ShareState& s = *q.shares[job.share];
  const internal::Shape& shape = q.shapes[job.shape];
  const bool within = !s.borrows() || internal::FitsNow(q, job.share, shape, FitMode::kWithinQuota);
  const FitMode mode = within ? FitMode::kWithinQuota : FitMode::kBorrow;
  const model::JobId ahead = internal::RequeuingAhead(
      st, q, job.share, {job.priority, job.created_at, job.id}, shape, mode);
  if (ahead == 0) return;
  r->rule = WaitRule::kCapacityStopping;
  r->waiting_for = {ahead};
}

std::string Sentence(const WaitReason& r, const std::string& share) {
  const std::string amounts = " (needs " + std::to_string(r.needed) + " " + r.unit + ", " +
                              std::to_string(r.available) + " available, " +
                              std::to_string(r.missing) + " missing)";
  switch (r.rule) {
    case WaitRule::kNotWaiting:
      return "The job is not waiting.";
    case WaitRule::kMisconfigured:
      return "The job can never fit: " + model::MisconfigurationReason(r.misconfiguration);
    case WaitRule::kNominated:
      return "The job preempted " + std::to_string(r.waiting_for.size()) +
             " job(s) and starts when they have stopped.";
    case WaitRule::kShareLimit:
      return "Quota share " + share + " is at its limit" + amounts;
    case WaitRule::kBorrowLimit:
      return "Quota share " + share + " is at its borrow limit" + amounts;
    case WaitRule::kNoLendableCapacity:
      return "No lendable idle capacity" + amounts;
    case WaitRule::kPoolFull:
      return "The service environment is full" + amounts;
    case WaitRule::kReservedForPreemptor:
      return "The free capacity is reserved for a preempting job" + amounts;
    case WaitRule::kCapacityStopping:
      if (!r.waiting_for.empty()) {
        return "The capacity is kept for preempted job " + std::to_string(r.waiting_for[0]) +
               " of quota share " + share + ", which comes first and is still stopping.";
      }
      return "The capacity is held by jobs that are stopping" + amounts;
    case WaitRule::kServiceEnvironmentDisabled:
      return "The service environment is DISABLED.";
    case WaitRule::kFitsNextPass:
      return "Nothing blocks the job; it starts on the next pass.";
  }
  return "";
}

}  // namespace

Result<model::WaitReason> Engine::Explain(model::JobId id) const {
  const internal::EngineState& st = *state_;
  const Job* job = st.FindJob(id);
  if (job == nullptr) return NotFound("job " + std::to_string(id) + " is not live");
  WaitReason r;
  if (job->status != model::JobStatus::kRunnable) {
    r.message = Sentence(r, "");
    return r;
  }
  const QueueState& q = *st.queues[job->queue];
  const std::string& share = q.shares[job->share]->config.name;
  Positions(q, *job, &r);
  if (job->nominated) {
    r.rule = WaitRule::kNominated;
    auto it = st.nominee_waits.find(id);
    if (it != st.nominee_waits.end()) {
      for (const internal::StoppedAttempt& a : it->second.victims) {
        if (st.StillStopping(a)) r.waiting_for.push_back(a.job);
      }
    }
  } else if (job->misconfig != model::Misconfiguration::kNone) {
    r.rule = WaitRule::kMisconfigured;
    r.misconfiguration = job->misconfig;
  } else if (!q.env_enabled) {
    r.rule = WaitRule::kServiceEnvironmentDisabled;
  } else {
    Blocking(q, *job, &r);
    if (r.rule == WaitRule::kFitsNextPass) KeptForRequeuing(st, q, *job, &r);
  }
  r.message = Sentence(r, share);
  return r;
}

}  // namespace allot::engine
