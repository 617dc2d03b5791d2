#include "engine/accounting.h"

#include <algorithm>

namespace allot::engine::internal {

namespace {

void GrowShare(ShareState& s, std::size_t n) {
  s.limit.resize(n, 0);
  s.borrow_cap.resize(n, 0);
  s.used[kActual].resize(n, 0);
  s.used[kProjected].resize(n, 0);
  s.waiting_demand.resize(n, 0);
  for (auto& [prio, held] : s.held_by_priority) held.resize(n, 0);
}

}  // namespace

std::uint32_t InternUnit(QueueState& q, std::string_view unit) {
  auto it = q.unit_index.find(unit);
  if (it != q.unit_index.end()) return it->second;
  const auto index = static_cast<std::uint32_t>(q.units.size());
  q.units.emplace_back(unit);
  q.unit_index.emplace(std::string(unit), index);
  const std::size_t n = q.units.size();
  q.pool.resize(n, 0);
  q.nominee_free.resize(n, 0);
  for (Aggregates& a : q.agg) {
    a.held.resize(n, 0);
    a.sum_b.resize(n, 0);
    a.sum_i.resize(n, 0);
  }
  for (auto& s : q.shares) {
    if (s) GrowShare(*s, n);
  }
  return index;
}

std::uint32_t InternShape(QueueState& q, const model::Demand& demand) {
  std::vector<std::pair<std::uint32_t, std::int64_t>> parts;
  for (const model::UnitCount& p : demand) parts.emplace_back(InternUnit(q, p.unit), p.count);
  std::sort(parts.begin(), parts.end());
  auto it = q.shape_index.find(parts);
  if (it != q.shape_index.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(q.shapes.size());
  Shape shape{.parts = parts, .instances = 0};
  for (const auto& [u, n] : parts) shape.instances += n;
  q.shapes.push_back(std::move(shape));
  q.shape_index.emplace(std::move(parts), id);
  return id;
}

void ApplyShareLimits(QueueState& q, ShareState& s) {
  for (const model::CapacityLimit& l : s.config.capacity_limits) InternUnit(q, l.unit);
  GrowShare(s, q.units.size());
  std::fill(s.limit.begin(), s.limit.end(), 0);
  if (!s.deleting) {
    for (const model::CapacityLimit& l : s.config.capacity_limits) {
      s.limit[q.unit_index.find(l.unit)->second] = l.max_capacity;
    }
  }
  for (std::size_t u = 0; u < s.limit.size(); ++u) {
    if (!s.borrows() || s.deleting) {
      s.borrow_cap[u] = 0;
    } else if (s.config.borrow_limit == model::kUnlimitedBorrow) {
      s.borrow_cap[u] = kInfinite;
    } else {
      s.borrow_cap[u] = s.limit[u] * s.config.borrow_limit / 100;
    }
  }
}

std::int64_t Borrowed(const ShareState& s, View view, std::uint32_t u) {
  return std::max<std::int64_t>(0, s.used[view][u] - s.limit[u]);
}

bool AboveLimitAfter(const ShareState& s, const Shape& held) {
  for (const auto& [u, n] : held.parts) {
    if (s.used[kProjected][u] - n < s.limit[u]) return false;
  }
  return true;
}

std::int64_t Idle(const ShareState& s, View view, std::uint32_t u) {
  return s.lends() ? std::max<std::int64_t>(0, s.limit[u] - s.used[view][u]) : 0;
}

void RecomputeAggregates(QueueState& q) {
  for (int v = 0; v < 2; ++v) {
    Aggregates& a = q.agg[v];
    std::fill(a.held.begin(), a.held.end(), 0);
    std::fill(a.sum_b.begin(), a.sum_b.end(), 0);
    std::fill(a.sum_i.begin(), a.sum_i.end(), 0);
    for (const auto& s : q.shares) {
      if (!s) continue;
      for (std::uint32_t u = 0; u < q.units.size(); ++u) {
        a.held[u] += s->used[v][u];
        a.sum_b[u] += Borrowed(*s, static_cast<View>(v), u);
        a.sum_i[u] += Idle(*s, static_cast<View>(v), u);
      }
    }
  }
}

void AddUsage(QueueState& q, View view, std::uint32_t share, const Shape& shape,
              std::int64_t sign) {
  ShareState& s = *q.shares[share];
  Aggregates& a = q.agg[view];
  for (const auto& [u, n] : shape.parts) {
    const std::int64_t old_b = Borrowed(s, view, u);
    const std::int64_t old_i = Idle(s, view, u);
    s.used[view][u] += sign * n;
    a.held[u] += sign * n;
    a.sum_b[u] += Borrowed(s, view, u) - old_b;
    a.sum_i[u] += Idle(s, view, u) - old_i;
  }
}

bool UnitFits(const QueueState& q, View view, std::uint32_t share, std::uint32_t u,
              std::int64_t count, FitMode mode) {
  return UnitFitsAfter(q, view, share, u, 0, count, mode);
}

bool UnitFitsAfter(const QueueState& q, View view, std::uint32_t share, std::uint32_t u,
                   std::int64_t added, std::int64_t count, FitMode mode) {
  const ShareState& s = *q.shares[share];
  const Aggregates& a = q.agg[view];
  const std::int64_t limit = s.limit[u];
  const std::int64_t before = s.used[view][u];
  const std::int64_t used = before + added;
  const std::int64_t after = used + count;
  if (mode == FitMode::kWithinQuota) {
    if (after > limit) return false;
  } else if (std::max<std::int64_t>(0, after - limit) > s.borrow_cap[u]) {
    return false;
  }
  if (a.held[u] + added + count > q.pool[u]) return false;
  auto borrowed = [limit](std::int64_t x) { return std::max<std::int64_t>(0, x - limit); };
  auto idle = [limit, &s](std::int64_t x) {
    return s.lends() ? std::max<std::int64_t>(0, limit - x) : 0;
  };
  const std::int64_t deficit =
      a.sum_b[u] - a.sum_i[u] + (borrowed(used) - borrowed(before)) - (idle(used) - idle(before));
  const std::int64_t deficit_after =
      deficit + (borrowed(after) - borrowed(used)) - (idle(after) - idle(used));
  return deficit_after <= 0 || deficit_after <= deficit;
}

bool Fits(const QueueState& q, View view, std::uint32_t share, const Shape& shape, FitMode mode) {
  for (const auto& [u, n] : shape.parts) {
    if (!UnitFits(q, view, share, u, n, mode)) return false;
  }
  return true;
}

bool FitsBeside(const QueueState& q, View view, std::uint32_t share, const Shape& added,
                const Shape& shape, FitMode mode) {
  for (const auto& [u, n] : shape.parts) {
    std::int64_t extra = 0;
    for (const auto& [au, an] : added.parts) {
      if (au == u) extra = an;
    }
    if (!UnitFitsAfter(q, view, share, u, extra, n, mode)) return false;
  }
  return true;
}

bool RoomBesideNominees(const QueueState& q, const Shape& shape,
                        const std::vector<std::int64_t>* own_free) {
  for (const auto& [u, n] : shape.parts) {
    const std::int64_t own = own_free != nullptr && u < own_free->size() ? (*own_free)[u] : 0;
    if (q.agg[kActual].held[u] + q.nominee_free[u] - own + n > q.pool[u]) return false;
  }
  return true;
}

bool FitsNow(const QueueState& q, std::uint32_t share, const Shape& shape, FitMode mode) {
  return Fits(q, kProjected, share, shape, mode) && Fits(q, kActual, share, shape, mode) &&
         RoomBesideNominees(q, shape, nullptr);
}

bool WithinQuota(const QueueState& q, std::uint32_t share, const Shape& shape) {
  const ShareState& s = *q.shares[share];
  for (const auto& [u, n] : shape.parts) {
    if (s.used[kProjected][u] + n > s.limit[u]) return false;
  }
  return true;
}

}  // namespace allot::engine::internal
