#pragma once

// Capacity owed to other shares' waiting jobs (docs/design/engine.md, Victims). In-share
// preemption in a share that may borrow counts on borrowing only what no other share's waiting
// job is about to take within its own quota: that job would reclaim it at once.

#include <cstdint>
#include <vector>

#include "engine/state.h"

namespace allot::engine::internal {

// What one share's waiting jobs are owed, summed.
struct OwedNeed {
  std::uint32_t share = 0;
  Shape need;
};

// The waiting jobs of shares other than `except` that fit the projected view within their
// share's quota, each counted beside those before it: the shares in index (creation) order, each
// share's jobs in waiting order. They wait only for stopping jobs to go, and step 1 (which takes
// shares in another order, and checks the actual view too) starts them once the jobs have, unless
// a job within its own share's limit takes the pool first. The projected view is left as it was.
std::vector<OwedNeed> OwedToWaitingJobs(QueueState& q, std::uint32_t except);

// Adds (`sign` +1) or takes out (-1) the need of `owed` in the projected view.
void CountOwed(QueueState& q, const std::vector<OwedNeed>& owed, std::int64_t sign);

// Counts `owed` into the projected view while it lives.
class OwedCounted {
 public:
  OwedCounted(QueueState& q, const std::vector<OwedNeed>& owed) : q_(q), owed_(owed) {
    CountOwed(q_, owed_, +1);
  }
  ~OwedCounted() { CountOwed(q_, owed_, -1); }
  OwedCounted(const OwedCounted&) = delete;
  OwedCounted& operator=(const OwedCounted&) = delete;

 private:
  QueueState& q_;
  const std::vector<OwedNeed>& owed_;
};

}  // namespace allot::engine::internal
