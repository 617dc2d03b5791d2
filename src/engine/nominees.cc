#include "engine/nominees.h"

#include <algorithm>

namespace allot::engine::internal {

namespace {

// free[u] = need[u] - what the nominee's victims still hold of u (at most need[u]).
void Refresh(EngineState& st, QueueState& q, model::JobId id) {
  auto it = st.nominee_waits.find(id);
  const Job* nominee = st.FindJob(id);
  if (it == st.nominee_waits.end() || nominee == nullptr) return;
  NomineeWait& w = it->second;
  std::vector<std::int64_t> covered(q.units.size(), 0);
  for (const StoppedAttempt& a : w.victims) {
    if (!st.StillStopping(a)) continue;
    for (const auto& [u, n] : st.ShapeOf(*st.FindJob(a.job)).parts) covered[u] += n;
  }
  w.free.resize(q.units.size(), 0);
  for (const auto& [u, need] : st.ShapeOf(*nominee).parts) {
    const std::int64_t now_free = need - std::min(need, covered[u]);
    q.nominee_free[u] += now_free - w.free[u];
    w.free[u] = now_free;
  }
}

}  // namespace

void TrackNominee(EngineState& st, QueueState& q, const Job& nominee,
                  const std::vector<StoppedAttempt>& victims) {
  st.nominee_waits[nominee.id] = NomineeWait{victims, {}};
  for (const StoppedAttempt& a : victims) st.victim_nominee[a.job] = nominee.id;
  Refresh(st, q, nominee.id);
}

void ForgetNominee(EngineState& st, QueueState& q, model::JobId nominee) {
  auto it = st.nominee_waits.find(nominee);
  if (it == st.nominee_waits.end()) return;
  for (std::size_t u = 0; u < it->second.free.size(); ++u) q.nominee_free[u] -= it->second.free[u];
  st.nominee_waits.erase(it);
}

void VictimEnded(EngineState& st, QueueState& q, model::JobId victim) {
  auto it = st.victim_nominee.find(victim);
  if (it == st.victim_nominee.end()) return;
  const model::JobId nominee = it->second;
  st.victim_nominee.erase(it);
  Refresh(st, q, nominee);
}

}  // namespace allot::engine::internal
