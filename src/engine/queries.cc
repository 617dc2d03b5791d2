// Read-only views of the engine state: usage per share and unit, and the front of a queue.

#include <algorithm>

#include "engine/accounting.h"
#include "engine/engine.h"
#include "engine/state.h"

namespace allot::engine {

using internal::kActual;
using internal::kProjected;
using internal::QueueState;
using internal::ShareState;
using internal::WaitOrder;

namespace {

const QueueState* FindQueue(const internal::EngineState& st, std::string_view name) {
  auto it = st.queue_index.find(name);
  return it == st.queue_index.end() ? nullptr : st.queues[it->second].get();
}

// Reserved capacity of nominees, per share and unit.
std::vector<std::vector<std::int64_t>> Reservations(const internal::EngineState& st,
                                                    const QueueState& q) {
  std::vector<std::vector<std::int64_t>> r(q.shares.size(),
                                           std::vector<std::int64_t>(q.units.size(), 0));
  for (const auto& [seq, id] : q.nominees) {
    const internal::Job& job = *st.FindJob(id);
    for (const auto& [u, n] : q.shapes[job.shape].parts) r[job.share][u] += n;
  }
  return r;
}

// Splits the queue's borrowed capacity of unit `u` over lenders in proportion to their idle
// capacity; the remainder goes one by one in share-name order.
std::vector<std::int64_t> Lent(const QueueState& q, std::uint32_t u,
                               const std::vector<std::uint32_t>& by_name) {
  std::vector<std::int64_t> lent(q.shares.size(), 0);
  const std::int64_t idle = q.agg[kActual].sum_i[u];
  const std::int64_t borrowed = std::min(q.agg[kActual].sum_b[u], idle);
  if (idle <= 0 || borrowed <= 0) return lent;
  std::int64_t given = 0;
  for (std::uint32_t i : by_name) {
    lent[i] = internal::Idle(*q.shares[i], kActual, u) * borrowed / idle;
    given += lent[i];
  }
  for (std::uint32_t i : by_name) {
    if (given >= borrowed) break;
    if (lent[i] < internal::Idle(*q.shares[i], kActual, u)) {
      ++lent[i];
      ++given;
    }
  }
  return lent;
}

}  // namespace

Result<QueueUsage> Engine::Usage(std::string_view queue) const {
  const QueueState* q = FindQueue(*state_, queue);
  if (q == nullptr) return NotFound("job queue " + std::string(queue) + " does not exist");
  const auto reserved = Reservations(*state_, *q);
  std::vector<std::uint32_t> by_name;
  QueueUsage usage{.queue = q->config.name};
  for (const auto& [name, i] : q->share_index) {
    const ShareState& s = *q->shares[i];
    by_name.push_back(i);
    usage.shares.push_back({.name = s.config.name,
                            .strategy = s.config.strategy,
                            .waiting_jobs = s.waiting_jobs,
                            .dispatched_jobs = s.dispatched_jobs});
  }
  for (std::uint32_t u = 0; u < q->units.size(); ++u) {
    UnitUsage pool{.unit = q->units[u], .limit = q->pool[u], .used = q->agg[kActual].held[u]};
    pool.borrowed = q->agg[kActual].sum_b[u];
    pool.idle_lendable = q->agg[kActual].sum_i[u];
    const std::vector<std::int64_t> lent = Lent(*q, u, by_name);
    for (std::size_t k = 0; k < by_name.size(); ++k) {
      const std::uint32_t i = by_name[k];
      const ShareState& s = *q->shares[i];
      UnitUsage x{.unit = q->units[u], .limit = s.limit[u], .used = s.used[kActual][u]};
      x.borrowed = internal::Borrowed(s, kActual, u);
      x.lent = lent[i];
      x.idle_lendable = internal::Idle(s, kActual, u);
      x.reserved = reserved[i][u];
      x.stopping = s.used[kActual][u] - (s.used[kProjected][u] - reserved[i][u]);
      x.waiting = s.waiting_demand[u];
      pool.reserved += x.reserved;
      pool.stopping += x.stopping;
      pool.waiting += x.waiting;
      pool.lent += x.lent;
      usage.shares[k].units.push_back(std::move(x));
    }
    usage.pool.push_back(std::move(pool));
  }
  return usage;
}

std::vector<model::JobId> Engine::FrontOfQueue(std::string_view queue, std::string_view share,
                                               std::size_t limit) const {
  std::vector<model::JobId> out;
  const QueueState* q = FindQueue(*state_, queue);
  if (q == nullptr) return out;
  for (const auto& [seq, id] : q->nominees) {
    const internal::Job& job = *state_->FindJob(id);
    if (share.empty() || q->shares[job.share]->config.name == share) out.push_back(id);
  }
  // Heads of every ordered set, merged.
  using It = internal::WaitSet::const_iterator;
  std::vector<std::pair<It, It>> runs;
  for (const auto& s : q->shares) {
    if (!s || (!share.empty() && s->config.name != share)) continue;
    for (const auto& [shape, set] : s->waiting()) runs.emplace_back(set.begin(), set.end());
    runs.emplace_back(s->misconfigured.begin(), s->misconfigured.end());
  }
  WaitOrder before;
  while (out.size() < limit) {
    std::pair<It, It>* best = nullptr;
    for (auto& r : runs) {
      if (r.first != r.second && (best == nullptr || before(*r.first, *best->first))) best = &r;
    }
    if (best == nullptr) break;
    out.push_back(best->first->id);
    ++best->first;
  }
  if (out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace allot::engine
