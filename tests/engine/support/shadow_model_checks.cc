// The checks of ShadowModel: views, the "fits" rule, the invariants, preemption sets and the
// cross-checks against the engine's public API.

#include <algorithm>
#include <cstdlib>
#include <set>
#include <tuple>

#include "engine/support/shadow_model.h"

namespace allot::testing {

namespace {

constexpr std::size_t kPoolWide = static_cast<std::size_t>(-1);
constexpr std::size_t kActual = 0;
constexpr std::size_t kProjected = 1;

std::string JobName(model::JobId id) { return "job " + std::to_string(id); }

const char* InvariantName(std::size_t i) {
  switch (i) {
    case 1:
      return "1 (sum U <= P)";
    case 2:
      return "2 (B <= C)";
    case 3:
      return "3 (sum B <= sum I)";
    case 4:
      return "4 (a share with nominees keeps U' <= L on the units they reserve)";
    default:
      return "?";
  }
}

}  // namespace

ShadowModel::Tally ShadowModel::View(std::size_t q, bool projected) const {
  Tally t;
  t.units = queues_[q].units.size();
  t.used.assign(t.units * queues_[q].shares.size(), 0);
  for (const auto& [id, job] : jobs_) {
    if (job.queue != q) continue;
    const bool counts =
        projected ? (job.state == JobState::kDispatched || job.state == JobState::kNominated)
                  : (job.state == JobState::kDispatched || job.state == JobState::kStopping);
    if (!counts) continue;
    Add(job, &t);
  }
  return t;
}

// D = sum_s B - sum_s I for one unit.
std::int64_t ShadowModel::LendingBalance(const Queue& q, const Tally& t, std::size_t u) const {
  std::int64_t d = 0;
  for (std::size_t s = 0; s < q.shares.size(); ++s) {
    const std::int64_t used = t.At(s, u);
    d += std::max<std::int64_t>(0, used - Limit(q, s, u)) - Idle(q, s, u, used);
  }
  return d;
}

// The "fits" rule of docs/design/engine.md; returns why not, "" when it fits.
std::string ShadowModel::Fit(std::size_t qi, const Tally& t, const Job& job, FitMode mode) const {
  const Queue& q = queues_[qi];
  const std::size_t s = job.share;
  for (const auto& [u, n] : job.need) {
    const std::string at = " on " + q.units[u];
    const std::int64_t used = t.At(s, u);
    const std::int64_t limit = Limit(q, s, u);
    if (mode == FitMode::kWithinQuota && used + n > limit) return "over quota" + at;
    const std::optional<std::int64_t> cap = Cap(q, s, u);
    if (mode == FitMode::kBorrowing && cap && std::max<std::int64_t>(0, used + n - limit) > *cap) {
      return "over borrow cap" + at;
    }
    std::int64_t total = n;
    for (std::size_t o = 0; o < q.shares.size(); ++o) total += t.At(o, u);
    if (total > Pool(q, u)) return "over pool" + at;
    const std::int64_t d = LendingBalance(q, t, u);
    const std::int64_t after =
        d - (std::max<std::int64_t>(0, used - limit) - Idle(q, s, u, used)) +
        (std::max<std::int64_t>(0, used + n - limit) - Idle(q, s, u, used + n));
    if (after > 0 && after > d) return "lending condition" + at;
  }
  return "";
}

std::vector<std::pair<ShadowModel::ViolationKey, std::int64_t>> ShadowModel::Violations(
    std::size_t qi) const {
  std::vector<std::pair<ViolationKey, std::int64_t>> out;
  const Queue& q = queues_[qi];
  for (std::size_t view : {kActual, kProjected}) {
    const Tally t = View(qi, view == kProjected);
    for (std::size_t u = 0; u < q.units.size(); ++u) {
      std::int64_t total = 0;
      std::int64_t borrowed = 0;
      std::int64_t idle = 0;
      for (std::size_t s = 0; s < q.shares.size(); ++s) {
        const std::int64_t used = t.At(s, u);
        const std::int64_t b = std::max<std::int64_t>(0, used - Limit(q, s, u));
        total += used;
        borrowed += b;
        idle += Idle(q, s, u, used);
        const std::optional<std::int64_t> cap = Cap(q, s, u);
        if (cap && b > *cap) out.push_back({{qi, s, u, 2, view}, b - *cap});
      }
      if (total > Pool(q, u)) out.push_back({{qi, kPoolWide, u, 1, view}, total - Pool(q, u)});
      if (borrowed > idle) out.push_back({{qi, kPoolWide, u, 3, view}, borrowed - idle});
    }
    if (view == kProjected) AddReservationViolations(qi, t, &out);
  }
  return out;
}

// Invariant 4: a nominee reserved its need within its share's quota (both preemption steps aim at
// U' + N <= L), so on the units nominees wait for, a share that cannot borrow stays within its
// limit. A LEND_AND_BORROW share's other jobs may borrow other shares' idle capacity while its
// nominee waits, which takes nothing of the reservation: there invariants 2 and 3 of the projected
// view (which counts the nominee) are what keep the reservation whole.
void ShadowModel::AddReservationViolations(
    std::size_t qi, const Tally& t, std::vector<std::pair<ViolationKey, std::int64_t>>* out) const {
  const Queue& q = queues_[qi];
  std::set<std::pair<std::size_t, std::size_t>> reserved;
  for (const auto& [id, job] : jobs_) {
    if (job.queue != qi || job.state != JobState::kNominated) continue;
    for (const auto& [u, n] : job.need) reserved.insert({job.share, u});
  }
  for (const auto& [s, u] : reserved) {
    if (q.shares[s].config.strategy == model::SharingStrategy::kLendAndBorrow) continue;
    const std::int64_t over = t.At(s, u) - Limit(q, s, u);
    if (over > 0) out->push_back({{qi, s, u, 4, kProjected}, over});
  }
}

std::string ShadowModel::DescribeKey(const ViolationKey& k) const {
  const Queue& q = queues_[k[0]];
  std::string s = "invariant " + std::string(InvariantName(k[3])) + " in the " +
                  (k[4] == kProjected ? "projected" : "actual") + " view, queue " + q.config.name;
  if (k[1] != kPoolWide) s += " share " + q.shares[k[1]].config.name;
  return s + " unit " + q.units[k[2]];
}

void ShadowModel::ResetAllowances(std::size_t q) {
  std::erase_if(allowance_, [q](const auto& e) { return e.first[0] == q; });
  for (const auto& [key, amount] : Violations(q)) allowance_[key] = amount;
}

std::string ShadowModel::CheckInvariants(std::size_t q) {
  const auto violations = Violations(q);
  for (const auto& [key, amount] : violations) {
    auto it = allowance_.find(key);
    const std::int64_t allowed = it == allowance_.end() ? 0 : it->second;
    if (amount > allowed) {
      return DescribeKey(key) + " violated by " + std::to_string(amount) + " (allowed " +
             std::to_string(allowed) + " after the last configuration change)";
    }
  }
  // The allowance only shrinks: it becomes the current violation.
  std::erase_if(allowance_, [q](const auto& e) { return e.first[0] == q; });
  for (const auto& [key, amount] : violations) allowance_[key] = amount;
  return "";
}

// ---------------------------------------------------------------- preemption

std::string ShadowModel::CheckVictims(const Job& preemptor, const model::Preemption& d) const {
  if (d.victims.empty()) return "Preemption without victims";
  const Queue& q = queues_[preemptor.queue];
  std::set<model::JobId> seen;
  for (const model::VictimRecord& v : d.victims) {
    auto it = jobs_.find(v.victim);
    if (it == jobs_.end()) return "victim " + JobName(v.victim) + " unknown";
    const Job& victim = it->second;
    const std::string who = "victim " + JobName(v.victim);
    if (!seen.insert(v.victim).second) return who + " listed twice";
    if (victim.queue != preemptor.queue) return who + " is in another queue";
    if (victim.state != JobState::kDispatched) return who + " is not dispatched or is stopping";
    if (q.shares[victim.share].config.name != v.share) return who + " carries the wrong share";
    if (v.key.priority != victim.spec.priority || v.key.id != v.victim) return who + " bad key";
    const bool same_share = victim.share == preemptor.share;
    if ((v.rule == model::PreemptionRule::kInShare) != same_share) {
      return who + " rule " + std::string(model::ToString(v.rule)) +
             (same_share ? " but it is in the preemptor's share" : " from another share");
    }
    if (same_share && victim.spec.priority >= preemptor.spec.priority) {
      return who + " (in-share) has priority " + std::to_string(victim.spec.priority) +
             ", not below the preemptor's " + std::to_string(preemptor.spec.priority);
    }
    if (same_share && !q.shares[preemptor.share].config.in_share_preemption) {
      return who + ": in-share preemption in a share without inSharePreemption";
    }
    const model::QuotaShareConfig& vc = q.shares[victim.share].config;
    if (!same_share && vc.strategy != model::SharingStrategy::kLendAndBorrow &&
        v.rule != model::PreemptionRule::kLimitLowered) {
      return who + " is in a share that cannot borrow, so its rule must be LIMIT_LOWERED";
    }
  }
  return "";
}

std::string ShadowModel::CheckVictimSet(const Job& preemptor, const model::Preemption& d) const {
  const Queue& q = queues_[preemptor.queue];
  const Tally before = View(preemptor.queue, true);
  if (Fit(preemptor.queue, before, preemptor, FitMode::kWithinQuota).empty()) {
    return "preemptor already fits within quota in the projected view";
  }
  const bool in_share = std::any_of(d.victims.begin(), d.victims.end(), [](const auto& v) {
    return v.rule == model::PreemptionRule::kInShare;
  });
  if (in_share && Fit(preemptor.queue, before, preemptor, FitMode::kBorrowing).empty()) {
    return "in-share preemptor already fits by borrowing in the projected view";
  }
  Tally after = before;
  for (const model::VictimRecord& v : d.victims) {
    const Job& victim = jobs_.at(v.victim);
    for (const auto& [u, n] : victim.need) after.At(victim.share, u) -= n;
  }
  for (const model::VictimRecord& v : d.victims) {
    const Job& victim = jobs_.at(v.victim);
    if (victim.share == preemptor.share) continue;
    for (const auto& [u, n] : victim.need) {
      if (after.At(victim.share, u) < Limit(q, victim.share, u)) {
        return "reclaim victim " + JobName(v.victim) + " leaves share " + v.share + " at " +
               std::to_string(after.At(victim.share, u)) + " below its limit " +
               std::to_string(Limit(q, victim.share, u)) + " on " + q.units[u];
      }
    }
  }
  // In-share preemption in a share that may borrow aims at fitting within quota or by borrowing
  // (issue 9, item 14): a victim beyond that could borrow its capacity back at once. It borrows
  // nothing other shares' waiting jobs are owed: they would reclaim it at once.
  const bool borrowing = in_share && q.shares[preemptor.share].config.strategy ==
                                         model::SharingStrategy::kLendAndBorrow;
  const std::vector<const Job*> owed =
      borrowing ? Owed(preemptor.queue, preemptor.share, before) : std::vector<const Job*>{};
  auto fits = [&](const Tally& t) -> std::string {
    std::string why = Fit(preemptor.queue, t, preemptor, FitMode::kWithinQuota);
    if (why.empty() || !borrowing) return why;
    return Fit(preemptor.queue, Beside(t, owed), preemptor, FitMode::kBorrowing);
  };
  std::string err = fits(after);
  if (!err.empty()) return "preemptor does not fit once its victims are gone: " + err;
  for (const model::VictimRecord& v : d.victims) {
    Tally back = after;
    Add(jobs_.at(v.victim), &back);
    if (fits(back).empty()) {
      return "victim set not minimal: the preemptor still fits with " + JobName(v.victim) + " kept";
    }
  }
  return in_share ? CheckNoRestartAtOnce(preemptor, d, after, owed) : "";
}

// The waiting jobs of shares other than `except` that fit `t` within their share's quota, each
// beside those before it: shares in creation order, each share's jobs in waiting order. They wait
// only for stopping jobs to go (engine/owed.h).
std::vector<const ShadowModel::Job*> ShadowModel::Owed(std::size_t qi, std::size_t except,
                                                       Tally t) const {
  const Queue& q = queues_[qi];
  std::vector<const Job*> owed;
  for (std::size_t s = 0; s < q.shares.size(); ++s) {
    if (s == except || q.shares[s].deleted) continue;
    std::vector<const Job*> waiting;
    for (const auto& [id, job] : jobs_) {
      if (job.queue == qi && job.share == s && job.state == JobState::kWaiting) {
        waiting.push_back(&job);
      }
    }
    std::sort(waiting.begin(), waiting.end(),
              [](const Job* a, const Job* b) { return WaitKey(*a) < WaitKey(*b); });
    for (const Job* job : waiting) {
      if (!Fit(qi, t, *job, FitMode::kWithinQuota).empty()) continue;
      Add(*job, &t);
      owed.push_back(job);
    }
  }
  return owed;
}

void ShadowModel::Add(const Job& job, Tally* t) {
  for (const auto& [u, n] : job.need) t->At(job.share, u) += n;
}

ShadowModel::Tally ShadowModel::Beside(Tally t, const std::vector<const Job*>& jobs) {
  for (const Job* job : jobs) Add(*job, &t);
  return t;
}

std::tuple<std::int32_t, Timestamp, model::JobId> ShadowModel::WaitKey(const Job& j) {
  return {-j.spec.priority, j.spec.created_at, j.spec.id};
}

// Once the preemptor holds its need, no in-share victim fits its share again (within quota, or
// by borrowing beside what `owed` holds where the share may borrow): it would restart at once,
// and its stop bought nothing.
std::string ShadowModel::CheckNoRestartAtOnce(const Job& preemptor, const model::Preemption& d,
                                              Tally after,
                                              const std::vector<const Job*>& owed) const {
  const Queue& q = queues_[preemptor.queue];
  Add(preemptor, &after);
  const bool borrowing =
      q.shares[preemptor.share].config.strategy == model::SharingStrategy::kLendAndBorrow;
  const Tally beside_owed = Beside(after, owed);
  for (const model::VictimRecord& v : d.victims) {
    if (v.rule != model::PreemptionRule::kInShare) continue;
    const Job& victim = jobs_.at(v.victim);
    if (Fit(preemptor.queue, after, victim, FitMode::kWithinQuota).empty() ||
        (borrowing && Fit(preemptor.queue, beside_owed, victim, FitMode::kBorrowing).empty())) {
      return "in-share victim " + JobName(v.victim) +
             " would fit again at once beside its preemptor " + JobName(preemptor.spec.id);
    }
  }
  return "";
}

// ---------------------------------------------------------------- requeue order

bool ShadowModel::WillRequeue(const Job& job) const {
  return job.state == JobState::kStopping && job.preemption_victim && !job.stop_final &&
         (!job.spec.preemption_retries || job.preemptions < *job.spec.preemption_retries);
}

// A preempted job still stopping that will be requeued keeps its place: no job of its share
// behind it in waiting order is dispatched on capacity it would take (it fits the projected
// view, where stopping jobs are gone, but would not beside the dispatched job), whatever order
// the victims' processes exit in (issue 9, item 14).
std::string ShadowModel::CheckPlaceKept(const Job& job, FitMode mode) const {
  const Tally projected = View(job.queue, true);
  Tally with_job = projected;
  Add(job, &with_job);
  for (const auto& [id, other] : jobs_) {
    if (other.queue != job.queue || other.share != job.share || !WillRequeue(other)) continue;
    if (WaitKey(other) < WaitKey(job) && Fit(job.queue, projected, other, mode).empty() &&
        !Fit(job.queue, with_job, other, mode).empty()) {
      return JobName(job.spec.id) + " dispatched ahead of " + JobName(id) +
             ", a preempted job of its share still stopping that comes first and would fit";
    }
  }
  return "";
}

// ---------------------------------------------------------------- after each Apply

std::string ShadowModel::AfterApply(const engine::Engine& engine) {
  for (const auto& [id, job] : jobs_) {
    if (job.preemption_victim && !job.stop_seen) {
      return "preemption victim " + JobName(id) + " got no Stop in the same Apply";
    }
  }
  std::string err = CheckTimers();
  if (err.empty()) err = CrossCheckJobs(engine);
  for (std::size_t q = 0; q < queues_.size() && err.empty(); ++q) err = CrossCheckUsage(q, engine);
  return err;
}

std::string ShadowModel::CheckTimers() const {
  for (const auto& [id, job] : jobs_) {
    const std::optional<std::int64_t>& t = job.spec.attempt_timeout_seconds;
    if (job.state != JobState::kDispatched || !t || job.running_since < 0) continue;
    if (job.running_since + Seconds(*t) < now_) {
      return JobName(id) + " ran past its attempt timeout without a TIMEOUT stop";
    }
  }
  return "";
}

std::string ShadowModel::CrossCheckJobs(const engine::Engine& engine) const {
  if (engine.LiveJobs() != jobs_.size()) {
    return "engine holds " + std::to_string(engine.LiveJobs()) + " live jobs, shadow " +
           std::to_string(jobs_.size());
  }
  for (const auto& [id, job] : jobs_) {
    std::optional<engine::JobView> v = engine.GetJob(id);
    if (!v) return "engine lost live " + JobName(id);
    const bool holds = job.state == JobState::kDispatched || job.state == JobState::kStopping;
    if (model::IsDispatched(v->status) != holds ||
        v->stopping != (job.state == JobState::kStopping) ||
        v->nominated != (job.state == JobState::kNominated) || v->attempt != job.attempt ||
        v->priority != job.spec.priority) {
      return "engine's view of " + JobName(id) + " differs: status " +
             std::string(model::ToString(v->status)) + " stopping=" + std::to_string(v->stopping) +
             " nominated=" + std::to_string(v->nominated) +
             " attempt=" + std::to_string(v->attempt) + "; shadow state " +
             std::to_string(static_cast<int>(job.state)) +
             " attempt=" + std::to_string(job.attempt);
    }
  }
  return "";
}

std::string ShadowModel::CrossCheckUsage(std::size_t qi, const engine::Engine& engine) const {
  const Queue& q = queues_[qi];
  Result<engine::QueueUsage> usage = engine.Usage(q.config.name);
  if (!usage.ok()) return "Usage(" + q.config.name + ") failed: " + usage.status().ToString();
  const Tally actual = View(qi, false);
  Tally stopping = actual;
  Tally reserved = actual;
  std::fill(stopping.used.begin(), stopping.used.end(), 0);
  std::fill(reserved.used.begin(), reserved.used.end(), 0);
  for (const auto& [id, job] : jobs_) {
    if (job.queue != qi) continue;
    Tally* t = job.state == JobState::kStopping    ? &stopping
               : job.state == JobState::kNominated ? &reserved
                                                   : nullptr;
    if (t == nullptr) continue;
    Add(job, t);
  }
  auto unit_of = [&q](const std::string& name) -> std::optional<std::size_t> {
    auto it = std::find(q.units.begin(), q.units.end(), name);
    if (it == q.units.end()) return std::nullopt;
    return static_cast<std::size_t>(it - q.units.begin());
  };
  for (const engine::UnitUsage& p : usage->pool) {
    std::optional<std::size_t> u = unit_of(p.unit);
    std::int64_t used = 0;
    if (u) {
      for (std::size_t s = 0; s < q.shares.size(); ++s) used += actual.At(s, *u);
    }
    if (p.used != used || (u && p.limit != Pool(q, *u))) {
      return "Usage pool " + p.unit + ": engine used=" + std::to_string(p.used) +
             " limit=" + std::to_string(p.limit) + ", shadow used=" + std::to_string(used);
    }
  }
  Tally seen_used = actual;
  std::fill(seen_used.used.begin(), seen_used.used.end(), 0);
  for (const engine::ShareUsage& su : usage->shares) {
    std::optional<std::size_t> s = FindShare(q, su.name);
    if (!s) return "Usage lists unknown share " + su.name;
    if (q.shares[*s].deleted) continue;
    for (const engine::UnitUsage& uu : su.units) {
      std::optional<std::size_t> u = unit_of(uu.unit);
      const std::int64_t want_used = u ? actual.At(*s, *u) : 0;
      const std::int64_t want_stop = u ? stopping.At(*s, *u) : 0;
      const std::int64_t want_res = u ? reserved.At(*s, *u) : 0;
      const std::int64_t want_limit = u ? Limit(q, *s, *u) : 0;
      if (uu.used != want_used || uu.stopping != want_stop || uu.reserved != want_res ||
          uu.limit != want_limit) {
        return "Usage " + su.name + "/" + uu.unit + ": engine used=" + std::to_string(uu.used) +
               " stopping=" + std::to_string(uu.stopping) +
               " reserved=" + std::to_string(uu.reserved) + " limit=" + std::to_string(uu.limit) +
               "; shadow " + std::to_string(want_used) + "/" + std::to_string(want_stop) + "/" +
               std::to_string(want_res) + "/" + std::to_string(want_limit);
      }
      if (u) seen_used.At(*s, *u) = 1;
    }
  }
  for (std::size_t s = 0; s < q.shares.size(); ++s) {
    for (std::size_t u = 0; u < q.units.size(); ++u) {
      if (!q.shares[s].deleted && seen_used.At(s, u) == 0 &&
          actual.At(s, u) + reserved.At(s, u) > 0) {
        return "Usage omits " + q.shares[s].config.name + "/" + q.units[u] + " which is in use";
      }
    }
  }
  return "";
}

}  // namespace allot::testing
