#include "engine/owed.h"

#include <map>

#include "engine/accounting.h"

namespace allot::engine::internal {

namespace {

// The heads of one share's shape sets, each advanced past the jobs already counted.
struct Cursor {
  std::uint32_t shape = 0;
  WaitSet::const_iterator it;
  WaitSet::const_iterator end;
};

// Counts share `i`'s waiting jobs that fit within its quota into the projected view; returns
// their summed need (empty: none fits). One job at a time: each must fit beside those before it.
Shape CountShare(QueueState& q, std::uint32_t i) {
  std::vector<Cursor> cursors;
  for (const auto& [shape, set] : q.shares[i]->waiting()) {
    cursors.push_back({shape, set.begin(), set.end()});
  }
  std::map<std::uint32_t, std::int64_t> sum;
  const WaitOrder before;
  for (;;) {
    Cursor* best = nullptr;
    for (Cursor& c : cursors) {
      if (c.it == c.end || (best != nullptr && !before(*c.it, *best->it))) continue;
      // The jobs of one set share a shape: once its head does not fit, none of them will.
      if (Fits(q, kProjected, i, q.shapes[c.shape], FitMode::kWithinQuota)) {
        best = &c;
      } else {
        c.it = c.end;
      }
    }
    if (best == nullptr) break;
    const Shape& shape = q.shapes[best->shape];
    AddUsage(q, kProjected, i, shape, +1);
    for (const auto& [u, n] : shape.parts) sum[u] += n;
    ++best->it;
  }
  Shape need;
  for (const auto& [u, n] : sum) {
    need.parts.emplace_back(u, n);
    need.instances += n;
  }
  return need;
}

}  // namespace

std::vector<OwedNeed> OwedToWaitingJobs(QueueState& q, std::uint32_t except) {
  std::vector<OwedNeed> owed;
  for (std::uint32_t i = 0; i < q.shares.size(); ++i) {
    const ShareState* s = q.shares[i].get();
    if (i == except || s == nullptr || s->deleting || s->waiting().empty()) continue;
    Shape need = CountShare(q, i);
    if (!need.parts.empty()) owed.push_back({i, std::move(need)});
  }
  CountOwed(q, owed, -1);
  return owed;
}

void CountOwed(QueueState& q, const std::vector<OwedNeed>& owed, std::int64_t sign) {
  for (const OwedNeed& o : owed) AddUsage(q, kProjected, o.share, o.need, sign);
}

}  // namespace allot::engine::internal
