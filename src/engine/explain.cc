// Engine::Explain: why a RUNNABLE job waits, computed on demand from the current state so that
// the pass itself never pays for explanations.

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
    for (const auto& [shape, set] : s->waiting()) ahead += count(set);
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

std::string_view StrategyName(model::SharingStrategy s) {
  switch (s) {
    case model::SharingStrategy::kReserve:
      return "RESERVE";
    case model::SharingStrategy::kLend:
      return "LEND";
    case model::SharingStrategy::kLendAndBorrow:
      return "LEND_AND_BORROW";
  }
  return "";
}

// Free capacity of unit `u` that the job cannot have: other shares' idle quota, and what the
// nominees reserve.
std::string FreeElsewhere(const QueueState& q, const Job& job, std::uint32_t u) {
  const std::int64_t free = q.pool[u] - q.agg[kActual].held[u];
  if (free <= 0) return "";
  std::string out;
  std::int64_t named = 0;
  for (std::uint32_t i = 0; i < q.shares.size(); ++i) {
    const ShareState* s = q.shares[i].get();
    if (s == nullptr || i == job.share) continue;
    const std::int64_t idle = std::min(free, s->limit[u] - s->used[kActual][u]);
    if (idle <= 0) continue;
    named += idle;
    out += (out.empty() ? "" : ", ") + std::to_string(idle) + " free in share " + s->config.name +
           "'s " + std::string(StrategyName(s->config.strategy));
  }
  if (named < free && q.nominee_free.size() > u && q.nominee_free[u] > 0) {
    out += (out.empty() ? "" : ", ") + std::to_string(std::min(free, q.nominee_free[u])) +
           " reserved for a preempting job";
  }
  return out;
}

std::string Sentence(const WaitReason& r, const std::string& share) {
  const std::string amounts = " (needs " + std::to_string(r.needed) + " " + r.unit + ", " +
                              std::to_string(r.available) + " available" +
                              (r.free_elsewhere.empty() ? "" : " (" + r.free_elsewhere + ")") +
                              ", " + std::to_string(r.missing) + " missing)";
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
    case WaitRule::kDispatchesHeld:
      return "The server holds every dispatch: " + r.held_for + ".";
    case WaitRule::kFitsNextPass:
      return "Nothing blocks the job; it starts on the next pass.";
  }
  return "";
}

// When the job's attempt ends at the latest: its time limit counts from RUNNING. 0: unknown (no
// limit, or not running yet).
Timestamp EndsBy(const Job& j) {
  return j.timeout > 0 && j.running_since > 0 ? j.running_since + j.timeout : 0;
}

std::int64_t CountOf(const internal::Shape& shape, std::uint32_t u) {
  for (const auto& [unit, n] : shape.parts) {
    if (unit == u) return n;
  }
  return 0;
}

// Calls f(job, count) for every victim candidate of share `i` that holds unit `u`.
template <typename F>
void ForEachHolderJob(const internal::EngineState& st, const QueueState& q, std::uint32_t i,
                      std::uint32_t u, F f) {
  for (const auto& [instances, set] : q.shares[i]->running) {
    for (const internal::RunKey& k : set) {
      const Job& j = *st.FindJob(k.id);
      const std::int64_t n = CountOf(q.shapes[j.shape], u);
      if (n > 0) f(j, n);
    }
  }
}

// The running jobs behind each holder share, most held first, at most kMaxHolderJobs each.
void HolderJobs(const internal::EngineState& st, const QueueState& q, std::uint32_t u,
                WaitReason* r) {
  for (model::Holder& h : r->holders) {
    const auto it = q.share_index.find(h.share);
    if (it == q.share_index.end()) continue;
    ForEachHolderJob(st, q, it->second, u, [&](const Job& j, std::int64_t n) {
      h.jobs.push_back({j.id, n, EndsBy(j)});
    });
    std::sort(h.jobs.begin(), h.jobs.end(),
              [](const model::HolderJob& a, const model::HolderJob& b) {
                return a.held != b.held ? a.held > b.held : a.id < b.id;
              });
    if (h.jobs.size() > model::kMaxHolderJobs) {
      h.more_jobs = static_cast<std::int64_t>(h.jobs.size() - model::kMaxHolderJobs);
      h.jobs.resize(model::kMaxHolderJobs);
    }
  }
}

// The latest time by which the running jobs that hold the blocking unit have freed what the job
// misses, from their time limits: those of its own share when its quota binds, of every share
// when the pool or lending does.
void StartBound(const internal::EngineState& st, const QueueState& q, const Job& job,
                std::uint32_t u, WaitReason* r) {
  const bool own_share = r->rule == WaitRule::kShareLimit || r->rule == WaitRule::kBorrowLimit;
  std::vector<std::pair<Timestamp, std::int64_t>> ends;  // (ends_by, held); 0 sorts last
  std::int64_t unlimited = 0;
  for (std::uint32_t i = 0; i < q.shares.size(); ++i) {
    if (!q.shares[i] || (own_share && i != job.share)) continue;
    ForEachHolderJob(st, q, i, u, [&](const Job& j, std::int64_t n) {
      const Timestamp by = EndsBy(j);
      if (by == 0) ++unlimited;
      ends.emplace_back(by == 0 ? internal::kInfinite : by, n);
    });
  }
  std::sort(ends.begin(), ends.end());
  std::int64_t freed = 0;
  for (const auto& [by, n] : ends) {
    if (by == internal::kInfinite) break;
    freed += n;
    if (freed >= r->missing) {
      r->start_bound = std::max(by, st.now);
      return;
    }
  }
  const std::string whose = own_share ? "of quota share " + q.shares[job.share]->config.name : "";
  if (ends.empty()) {
    r->start_unknown = "no running job " + whose + (whose.empty() ? "" : " ") + "holds " + r->unit +
                       " that could end to free it";
  } else {
    r->start_unknown = std::to_string(unlimited) + " of the " + std::to_string(ends.size()) +
                       " running jobs " + whose + (whose.empty() ? "" : " ") + "holding " +
                       r->unit +
                       " have no time limit (timeoutConfig.attemptDurationSeconds or "
                       "MaxRuntimeInSeconds) or are not running yet, and those that have one "
                       "free too little";
  }
}

// Why in-share preemption does not start the job now, in the order the pass checks it.
std::string InShareWhyNot(const internal::EngineState& st, const QueueState& q, const Job& job) {
  const ShareState& s = *q.shares[job.share];
  const internal::Shape& shape = q.shapes[job.shape];
  const std::string share = "quota share " + s.config.name;
  if (!s.config.in_share_preemption) return "in-share preemption is off in " + share;
  if (s.held_by_priority.empty() || s.held_by_priority.begin()->first >= job.priority) {
    return "no running job of " + share + " has a priority below " + std::to_string(job.priority);
  }
  for (const auto& [u, n] : shape.parts) {
    std::int64_t lower = 0;
    for (const auto& [prio, held] : s.held_by_priority) {
      if (prio >= job.priority) break;
      lower += held[u];
    }
    if (s.used[kProjected][u] - lower + n > s.limit[u]) {
      return "the running jobs of " + share + " below priority " + std::to_string(job.priority) +
             " hold " + std::to_string(lower) + " " + q.units[u] + ", too few to make room for " +
             std::to_string(n) + " within its limit of " + std::to_string(s.limit[u]);
    }
  }
  const auto set = s.waiting().find(job.shape);
  if (set != s.waiting().end() && !set->second.empty() && set->second.begin()->id != job.id) {
    return "job " + std::to_string(set->second.begin()->id) + " of " + share +
           " needs the same and comes first";
  }
  (void)st;
  return "no set of lower-priority victims of " + share +
         " makes room without one of them able to start again at once" +
         (s.borrows() ? ", or without borrowing what another share's waiting job is to take "
                        "within its own limit"
                      : "");
}

std::string WouldStart(const WaitReason& r, const std::string& share) {
  const std::string amount = std::to_string(r.missing) + " " + r.unit;
  switch (r.rule) {
    case WaitRule::kNotWaiting:
      return "";
    case WaitRule::kMisconfigured:
      return "Nothing as configured: a smaller request or larger limits.";
    case WaitRule::kNominated:
      return "Its victims stopping.";
    case WaitRule::kShareLimit:
      return amount + " of quota share " + share + "'s limit freed by its running jobs, or a " +
             "higher limit.";
    case WaitRule::kBorrowLimit:
      return amount + " of quota share " + share + "'s usage freed, or a higher borrow limit.";
    case WaitRule::kNoLendableCapacity:
      return amount + " of idle capacity lent by another share, or room under " + share +
             "'s own limit.";
    case WaitRule::kPoolFull:
      return amount + " freed in the service environment, or a larger maxCapacity.";
    case WaitRule::kReservedForPreemptor:
      return "The preempting job starting, then " + amount + " free.";
    case WaitRule::kCapacityStopping:
      return "The stopping jobs ending.";
    case WaitRule::kServiceEnvironmentDisabled:
      return "The service environment being ENABLED.";
    case WaitRule::kDispatchesHeld:
      return "The server taking dispatches again.";
    case WaitRule::kFitsNextPass:
      return "Nothing: it starts on the next pass.";
  }
  return "";
}

// Start bound, in-share why-not and what would let it start, once the rule is known.
void Outlook(const internal::EngineState& st, const QueueState& q, const Job& job, WaitReason* r) {
  switch (r->rule) {
    case WaitRule::kShareLimit:
    case WaitRule::kBorrowLimit:
    case WaitRule::kNoLendableCapacity:
    case WaitRule::kPoolFull:
    case WaitRule::kReservedForPreemptor: {
      const std::uint32_t u = q.unit_index.find(r->unit)->second;
      if (r->available <= 0) r->free_elsewhere = FreeElsewhere(q, job, u);
      HolderJobs(st, q, u, r);
      StartBound(st, q, job, u, r);
      r->in_share_why_not = InShareWhyNot(st, q, job);
      break;
    }
    case WaitRule::kMisconfigured:
      r->start_unknown = "it can never start as configured";
      break;
    case WaitRule::kNominated:
    case WaitRule::kCapacityStopping:
      r->start_unknown = "it waits for jobs to stop, within the server's stop grace";
      break;
    case WaitRule::kServiceEnvironmentDisabled:
      r->start_unknown = "the service environment is DISABLED";
      break;
    case WaitRule::kDispatchesHeld:
      r->start_unknown = "the server holds every dispatch";
      break;
    case WaitRule::kFitsNextPass:
      r->start_bound = st.now;
      break;
    case WaitRule::kNotWaiting:
      break;
  }
  r->would_start = WouldStart(*r, q.shares[job.share]->config.name);
}

// `full`: also positions, the holders' jobs, the start bound and in-share's why-not, which
// walk the waiting and running jobs; without, only what the share and unit sums tell.
Result<model::WaitReason> ExplainIn(const internal::EngineState& st, model::JobId id, bool full) {
  const Job* job = st.FindJob(id);
  if (job == nullptr) return NotFound("job " + std::to_string(id) + " is not live");
  WaitReason r;
  if (job->status != model::JobStatus::kRunnable) {
    r.message = Sentence(r, "");
    return r;
  }
  const QueueState& q = *st.queues[job->queue];
  const std::string& share = q.shares[job->share]->config.name;
  if (full) Positions(q, *job, &r);
  if (st.dispatch_hold) {  // first: while held, not even a nominee whose victims ended starts
    r.rule = WaitRule::kDispatchesHeld;
    r.held_for = *st.dispatch_hold;
  } else if (job->nominated) {
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
  if (full) {
    Outlook(st, q, *job, &r);
  } else if (!r.unit.empty() && r.available <= 0) {
    r.free_elsewhere = FreeElsewhere(q, *job, q.unit_index.find(r.unit)->second);
  }
  r.message = Sentence(r, share);
  return r;
}

}  // namespace

Result<model::WaitReason> Engine::Explain(model::JobId id) const {
  return ExplainIn(*state_, id, /*full=*/true);
}

Result<std::string> Engine::WaitSentence(model::JobId id) const {
  Result<model::WaitReason> r = ExplainIn(*state_, id, /*full=*/false);
  if (!r.ok()) return r.status();
  return std::move(r.value().message);
}

}  // namespace allot::engine
