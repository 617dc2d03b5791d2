#include "engine/owed.h"

#include "engine/accounting.h"

namespace allot::engine::internal {

namespace {

// The heads of one share's shape sets, each advanced past the jobs already counted.
struct Cursor {
  std::uint32_t shape = 0;
  WaitSet::const_iterator it;
  WaitSet::const_iterator end;
};

// Counts share `i`'s waiting jobs that fit within its quota into the projected view, onto `out`.
void CountShare(QueueState& q, std::uint32_t i, std::vector<OwedNeed>* out) {
  std::vector<Cursor> cursors;
  for (const auto& [shape, set] : q.shares[i]->waiting()) {
    cursors.push_back({shape, set.begin(), set.end()});
  }
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
    if (best == nullptr) return;
    AddUsage(q, kProjected, i, q.shapes[best->shape], +1);
    out->push_back({i, best->shape});
    ++best->it;
  }
}

}  // namespace

std::vector<OwedNeed> OwedToWaitingJobs(QueueState& q, std::uint32_t except) {
  std::vector<OwedNeed> owed;
  for (std::uint32_t i = 0; i < q.shares.size(); ++i) {
    const ShareState* s = q.shares[i].get();
    if (i != except && s != nullptr && !s->deleting && !s->waiting().empty()) {
      CountShare(q, i, &owed);
    }
  }
  CountOwed(q, owed, -1);
  return owed;
}

void CountOwed(QueueState& q, const std::vector<OwedNeed>& owed, std::int64_t sign) {
  for (const OwedNeed& o : owed) AddUsage(q, kProjected, o.share, q.shapes[o.shape], sign);
}

}  // namespace allot::engine::internal
