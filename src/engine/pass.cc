#include "engine/pass.h"

#include <algorithm>
#include <optional>

#include "engine/accounting.h"
#include "engine/job_index.h"
#include "engine/lifecycle.h"
#include "engine/nominees.h"
#include "engine/owed.h"
#include "engine/victims.h"

namespace allot::engine::internal {

namespace {

using model::DispatchMode;

// max_u U'/L as a fraction; a unit used beyond a zero limit is infinitely full.
struct Fullness {
  std::int64_t num = 0;
  std::int64_t den = 1;
};

Fullness FullnessOf(const ShareState& s) {
  Fullness worst{0, 1};
  for (std::size_t u = 0; u < s.limit.size(); ++u) {
    const std::int64_t used = s.used[kProjected][u];
    const std::int64_t limit = s.limit[u];
    if (used == 0) continue;
    const Fullness f = limit == 0 ? Fullness{1, 0} : Fullness{used, limit};
    // f > worst  <=>  f.num * worst.den > worst.num * f.den (den 0 = infinite).
    if (f.num * worst.den > worst.num * f.den) worst = f;
  }
  return worst;
}

// Whether share `i` has room under its own limit on some unit (projected): without it no job
// of the share can be within quota, so steps 1 and 2 can pass it by without looking at jobs.
bool HasQuotaRoom(const ShareState& s) {
  for (std::size_t u = 0; u < s.limit.size(); ++u) {
    if (s.used[kProjected][u] < s.limit[u]) return true;
  }
  return false;
}

// Whether the pool has a free instance of some unit in both views: without one nothing can be
// dispatched without preemption, so steps 1 and 3 have nothing to do.
bool PoolHasRoom(const QueueState& q) {
  for (std::size_t u = 0; u < q.units.size(); ++u) {
    if (q.agg[kActual].held[u] < q.pool[u] && q.agg[kProjected].held[u] < q.pool[u]) return true;
  }
  return false;
}

// Shares with schedulable waiting jobs that pass `filter`, most starved first, ties by name.
template <typename Filter>
std::vector<std::uint32_t> StarvedOrder(const QueueState& q, Filter filter) {
  struct Entry {
    Fullness f;
    std::uint32_t rank;
    std::uint32_t index;
  };
  std::vector<Entry> entries;
  for (std::uint32_t i = 0; i < q.shares.size(); ++i) {
    const ShareState* s = q.shares[i].get();
    if (s && !s->deleting && !s->waiting().empty() && filter(*s)) {
      entries.push_back({FullnessOf(*s), s->name_rank, i});
    }
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    const std::int64_t l = a.f.num * b.f.den;
    const std::int64_t r = b.f.num * a.f.den;
    if (l != r) return l < r;
    return a.rank < b.rank;
  });
  std::vector<std::uint32_t> order;
  order.reserve(entries.size());
  for (const Entry& e : entries) order.push_back(e.index);
  return order;
}

}  // namespace

model::JobId RequeuingAhead(const EngineState& st, const QueueState& q, std::uint32_t i,
                            const WaitKey& head, const Shape& shape, FitMode mode) {
  const WaitOrder before;
  for (const WaitKey& k : q.shares[i]->requeuing) {
    if (!before(k, head)) break;
    const Shape& victim = st.ShapeOf(*st.FindJob(k.id));
    if (Fits(q, kProjected, i, victim, mode) &&
        !FitsBeside(q, kProjected, i, shape, victim, mode)) {
      return k.id;
    }
  }
  return 0;
}

namespace {

// The best waiting job of share `i` (first in waiting order among the heads of its shape sets)
// for which `accept(shape)` holds, unless a requeuing job ahead of it would fit in `mode`.
template <typename Accept>
Job* BestHead(EngineState& st, QueueState& q, std::uint32_t i, FitMode mode, Accept accept) {
  const WaitKey* best = nullptr;
  WaitOrder before;
  for (const auto& [shape, set] : q.shares[i]->waiting()) {
    const WaitKey& head = *set.begin();
    if (best != nullptr && !before(head, *best)) continue;
    if (accept(q.shapes[shape])) best = &head;
  }
  if (best == nullptr) return nullptr;
  Job* job = st.FindJob(best->id);
  return RequeuingAhead(st, q, i, *best, st.ShapeOf(*job), mode) != 0 ? nullptr : job;
}

// Heads of share `i`'s shape sets for which `accept(shape)` holds, in waiting order.
template <typename Accept>
std::vector<Job*> HeadsInOrder(EngineState& st, QueueState& q, std::uint32_t i, Accept accept) {
  std::vector<WaitKey> heads;
  for (const auto& [shape, set] : q.shares[i]->waiting()) {
    if (accept(q.shapes[shape])) heads.push_back(*set.begin());
  }
  std::sort(heads.begin(), heads.end(), WaitOrder());
  std::vector<Job*> jobs;
  jobs.reserve(heads.size());
  for (const WaitKey& k : heads) jobs.push_back(st.FindJob(k.id));
  return jobs;
}

void Dispatch(EngineState& st, Job& job, DispatchMode mode) {
  RemoveWaiting(st, job);
  DispatchJob(st, job, mode, /*projected_held=*/false);
}

// A nominee was within its share's quota when it was nominated, and the projected view holds
// its need since. Jobs of its share may still borrow other shares' idle capacity meanwhile, so
// when the nominee starts its share may be above its limit by exactly what they borrowed: the
// nominee is checked in borrowing mode for shares that can borrow.
FitMode NomineeMode(const ShareState& s) {
  return s.borrows() ? FitMode::kBorrow : FitMode::kWithinQuota;
}

// Whether every attempt `nominee` waits for has ended.
bool VictimsGone(const EngineState& st, model::JobId nominee) {
  auto it = st.nominee_waits.find(nominee);
  if (it == st.nominee_waits.end()) return true;
  return std::none_of(it->second.victims.begin(), it->second.victims.end(),
                      [&st](const StoppedAttempt& a) { return st.StillStopping(a); });
}

// Quick necessary condition for reclaim: every blocked unit has borrowed capacity elsewhere.
bool ReclaimPossible(const QueueState& q, std::uint32_t i, const Shape& shape) {
  for (const auto& [u, n] : shape.parts) {
    if (UnitFits(q, kProjected, i, u, n, FitMode::kWithinQuota)) continue;
    if (q.agg[kProjected].sum_b[u] - Borrowed(*q.shares[i], kProjected, u) <= 0) return false;
  }
  return true;
}

// Whether a waiting job of share `i` is within its share's quota but short of the pool or of
// lenders: step 2's condition for reclaiming from other shares.
bool WouldReclaim(const QueueState& q, std::uint32_t i, const Shape& shape) {
  return WithinQuota(q, i, shape) && !Fits(q, kProjected, i, shape, FitMode::kWithinQuota) &&
         ReclaimPossible(q, i, shape);
}

// Whether `nominee`, started now, would at once be the reclaim victim of a victim of its own:
// a victim it reclaimed from another share, requeued, is within its own share's quota again but
// short of the pool, while the nominee's share borrowed meanwhile so far that the nominee would
// run on borrowed capacity (its share stays at or above its limit without it: a reclaim
// candidate), with no lower-priority job running in a share above its limit (reclaim takes the
// lowest priority first, then the least work lost: the nominee, which has lost none yet). The
// victim's preemption bought nothing then. Only when the victim fits within its quota once the
// nominee's reservation is gone, so that it takes that capacity back without stopping anyone.
bool VictimWouldReclaimIt(const EngineState& st, QueueState& q, const Job& nominee,
                          const NomineeWait& wait) {
  const Shape& shape = st.ShapeOf(nominee);
  if (!AboveLimitAfter(*q.shares[nominee.share], shape)) return false;
  for (const auto& other : q.shares) {
    if (!other || other->held_by_priority.empty() ||
        other->held_by_priority.begin()->first >= nominee.priority) {
      continue;
    }
    for (std::size_t u = 0; u < other->limit.size(); ++u) {
      if (other->used[kProjected][u] > other->limit[u]) return false;
    }
  }
  std::vector<const Job*> short_of_pool;  // victims that would reclaim beside the nominee
  for (const StoppedAttempt& a : wait.victims) {
    const Job* victim = st.FindJob(a.job);
    if (victim != nullptr && victim->share != nominee.share &&
        victim->status == model::JobStatus::kRunnable && !victim->nominated &&
        victim->misconfig == model::Misconfiguration::kNone &&
        WouldReclaim(q, victim->share, st.ShapeOf(*victim))) {
      short_of_pool.push_back(victim);
    }
  }
  if (short_of_pool.empty()) return false;
  AddUsage(q, kProjected, nominee.share, shape, -1);
  const bool fits_without =
      std::any_of(short_of_pool.begin(), short_of_pool.end(), [&st, &q](const Job* victim) {
        return Fits(q, kProjected, victim->share, st.ShapeOf(*victim), FitMode::kWithinQuota);
      });
  AddUsage(q, kProjected, nominee.share, shape, +1);
  return fits_without;
}

// Step 0. A nominee starts once its own victims are gone and it fits the actual view beside the
// other nominees' free reservations. Free capacity alone is not enough: part of it (of the pool
// or of its share's quota) may be what an older nominee reserved, and taking it would make that
// one wait for this one's victims. A nominee that a victim would reclaim from at once returns to
// waiting instead, and the victim takes its capacity back without stopping anyone.
bool DispatchNominees(EngineState& st, QueueState& q) {
  for (const auto& [seq, id] : q.nominees) {
    Job& job = *st.FindJob(id);
    const Shape& shape = st.ShapeOf(job);
    if (!VictimsGone(st, id) ||
        !Fits(q, kActual, job.share, shape, NomineeMode(*q.shares[job.share]))) {
      continue;
    }
    const auto wait = st.nominee_waits.find(id);
    if (wait != st.nominee_waits.end() && VictimWouldReclaimIt(st, q, job, wait->second)) {
      Denominate(st, job);
      return true;
    }
    if (RoomBesideNominees(q, shape,
                           wait == st.nominee_waits.end() ? nullptr : &wait->second.free)) {
      q.nominees.erase(seq);
      ForgetNominee(st, q, job.id);
      DispatchJob(st, job, DispatchMode::kPreemptor, /*projected_held=*/true);
      return true;
    }
  }
  return false;
}

// Step 1.
bool WithinQuotaStep(EngineState& st, QueueState& q, const std::vector<std::uint32_t>& order) {
  if (!PoolHasRoom(q)) return false;
  for (std::uint32_t i : order) {
    Job* job = BestHead(st, q, i, FitMode::kWithinQuota, [&](const Shape& shape) {
      return FitsNow(q, i, shape, FitMode::kWithinQuota);
    });
    if (job != nullptr) {
      Dispatch(st, *job, DispatchMode::kWithinQuota);
      return true;
    }
  }
  return false;
}

void Nominate(EngineState& st, QueueState& q, Job& preemptor,
              const std::vector<VictimChoice>& victims, std::optional<model::RunnerUp> runner_up) {
  RemoveWaiting(st, preemptor);
  AddUsage(q, kProjected, preemptor.share, st.ShapeOf(preemptor), +1);
  preemptor.nominated = true;
  preemptor.nomination = st.next_nomination++;
  q.nominees.emplace(preemptor.nomination, preemptor.id);
  model::Preemption record{preemptor.id, {}, std::move(runner_up)};
  std::vector<StoppedAttempt> waiting_for;
  for (const VictimChoice& v : victims) {
    record.victims.push_back({v.job->id, q.shares[v.job->share]->config.name, v.rule, v.key});
    waiting_for.push_back({v.job->id, v.job->attempt});
  }
  st.out->push_back(std::move(record));
  for (const VictimChoice& v : victims) {
    RemoveCandidate(st, *v.job);
    v.job->stop_rule = v.rule;
    BeginStop(st, *v.job, model::StopKind::kPreemption, model::PreemptionReason(v.rule),
              /*already_removed=*/true);
  }
  TrackNominee(st, q, preemptor, waiting_for);
}

bool TryPreempt(EngineState& st, QueueState& q, Job& job, bool in_share,
                const std::vector<OwedNeed>& owed) {
  std::vector<VictimChoice> victims;
  std::optional<model::RunnerUp> runner_up;
  if (!ChooseVictims(st, q, job, in_share, owed, &victims, &runner_up)) return false;
  Nominate(st, q, job, victims, std::move(runner_up));
  return true;
}

// Step 2.
bool ReclaimStep(EngineState& st, QueueState& q, const std::vector<std::uint32_t>& order) {
  for (std::uint32_t i : order) {
    for (Job* job :
         HeadsInOrder(st, q, i, [&](const Shape& shape) { return WouldReclaim(q, i, shape); })) {
      if (TryPreempt(st, q, *job, /*in_share=*/false, /*owed=*/{})) return true;
    }
  }
  return false;
}

// Step 3.
bool BorrowStep(EngineState& st, QueueState& q) {
  if (!PoolHasRoom(q)) return false;
  Job* first = nullptr;
  for (std::uint32_t i = 0; i < q.shares.size(); ++i) {
    const ShareState* s = q.shares[i].get();
    if (!s || s->deleting || !s->borrows() || s->waiting().empty()) continue;
    Job* job = BestHead(st, q, i, FitMode::kBorrow,
                        [&](const Shape& shape) { return FitsNow(q, i, shape, FitMode::kBorrow); });
    if (job == nullptr) continue;
    if (first == nullptr || job->created_at < first->created_at ||
        (job->created_at == first->created_at && job->id < first->id)) {
      first = job;
    }
  }
  if (first == nullptr) return false;
  Dispatch(st, *first, DispatchMode::kBorrowed);
  return true;
}

// Quick necessary condition for in-share preemption: lower-priority jobs of the share hold
// enough to bring it within quota.
bool InShareFeasible(const ShareState& s, const Job& job, const Shape& shape) {
  if (s.held_by_priority.empty() || s.held_by_priority.begin()->first >= job.priority) {
    return false;
  }
  for (const auto& [u, n] : shape.parts) {
    std::int64_t lower = 0;
    for (const auto& [prio, held] : s.held_by_priority) {
      if (prio >= job.priority) break;
      lower += held[u];
    }
    if (s.used[kProjected][u] - lower + n > s.limit[u]) return false;
  }
  return true;
}

// Step 4.
bool InShareStep(EngineState& st, QueueState& q) {
  const auto order = StarvedOrder(q, [](const ShareState& s) {
    return s.config.in_share_preemption && !s.held_by_priority.empty();
  });
  for (std::uint32_t i : order) {
    const ShareState& s = *q.shares[i];
    // What other shares' waiting jobs are owed, counted once per share: a search that fails
    // leaves the projected view as it was.
    std::optional<std::vector<OwedNeed>> owed;
    for (Job* job : HeadsInOrder(st, q, i, [&](const Shape& shape) {
           // A job that fits the projected view only waits for stopping jobs to go.
           return !Fits(q, kProjected, i, shape, FitMode::kWithinQuota) &&
                  !(s.borrows() && Fits(q, kProjected, i, shape, FitMode::kBorrow));
         })) {
      if (!InShareFeasible(s, *job, st.ShapeOf(*job))) continue;
      if (!owed) owed = s.borrows() ? OwedToWaitingJobs(q, i) : std::vector<OwedNeed>{};
      if (TryPreempt(st, q, *job, /*in_share=*/true, *owed)) return true;
    }
  }
  return false;
}

// A nominee that cannot start although nothing in its queue is stopping would wait forever.
bool ReleaseStuckNominee(EngineState& st, QueueState& q) {
  if (q.nominees.empty() || q.stopping_jobs > 0) return false;
  Job& job = *st.FindJob(q.nominees.begin()->second);
  Denominate(st, job);
  return true;
}

bool Step(EngineState& st, QueueState& q) {
  if (DispatchNominees(st, q)) return true;
  // Steps 1 and 2 only concern shares with room under their own limit.
  const auto order = StarvedOrder(q, HasQuotaRoom);
  return WithinQuotaStep(st, q, order) || ReclaimStep(st, q, order) || BorrowStep(st, q) ||
         InShareStep(st, q) || ReleaseStuckNominee(st, q);
}

}  // namespace

void RunPass(EngineState& st, QueueState& q) {
  if (!q.env_enabled || st.dispatch_hold) return;
  while (Step(st, q)) {
  }
}

void RevalidateNominees(EngineState& st, QueueState& q) {
  std::vector<model::JobId> ids;
  for (const auto& [seq, id] : q.nominees) ids.push_back(id);
  for (model::JobId id : ids) {
    Job& job = *st.FindJob(id);
    const Shape& shape = st.ShapeOf(job);
    AddUsage(q, kProjected, job.share, shape, -1);
    const bool fits = job.misconfig == model::Misconfiguration::kNone &&
                      CheckMisconfiguration(q, job) == model::Misconfiguration::kNone &&
                      Fits(q, kProjected, job.share, shape, NomineeMode(*q.shares[job.share]));
    AddUsage(q, kProjected, job.share, shape, +1);
    if (!fits) Denominate(st, job);
  }
}

}  // namespace allot::engine::internal
