#pragma once

// The scheduling invariants of DESIGN section 2, checked against the simulated world after
// every event when SimOptions::check_invariants is on (the debug default):
//   1. sum_s U[s,u] <= P[u]
//   2. B[s,u] <= C[s,u]
//   3. sum_s B[s,u] <= sum_s I[s,u]
//   4. capacity reserved for a nominated preemptor goes to no one else: once its last victim
//      has ended it is dispatched, at the latest when the jobs stopping then have ended too
//      (they may still hold part of its share's quota), i.e. within one stop grace period
// and the engine's own Usage and work-lost figures against the world's. The world counts U
// itself, from Dispatch to the attempt's end, so the checks do not trust the engine's books.

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "engine/engine.h"
#include "model/decision.h"
#include "sim/cluster.h"
#include "sim/metrics.h"

namespace allot::sim::internal {

class InvariantChecker {
 public:
  InvariantChecker(const Cluster& cluster, const Meter& meter, bool enabled, Duration stop_grace);

  bool enabled() const { return enabled_; }
  std::int64_t checks() const { return checks_; }

  void Nominated(const model::Preemption& p);
  void Dispatched(model::JobId job) {
    nominees_.erase(job);
    released_at_.erase(job);
  }
  void AttemptEnded(model::JobId job);
  void Finished(model::JobId job) {
    nominees_.erase(job);
    released_at_.erase(job);
  }

  // The state after one event and its decisions.
  Status Check(const engine::Engine& engine, Timestamp now);
  // The engine's work lost for a preempted attempt against the world's own figure.
  Status CheckWorkLost(const model::PreemptedAttempt& p, std::int64_t expected, Timestamp now);

 private:
  struct ShareCaps {
    int queue = 0;
    std::string name;
    bool lends = false;
    std::vector<std::int64_t> cap;  // C[s,u] per unit; -1 = unlimited
  };
  Status CheckQueue(std::size_t queue, Timestamp now) const;
  Status CheckEngineUsage(const engine::Engine& engine, Timestamp now) const;

  const Meter& meter_;
  bool enabled_;
  std::int64_t checks_ = 0;
  std::vector<std::string> queue_names_;
  std::vector<std::vector<std::int64_t>> pool_;  // per queue, per unit
  std::vector<ShareCaps> shares_;                // by meter index
  std::vector<std::string> unit_names_;          // by meter index
  // Nominees not yet dispatched, with their victims whose attempts have not ended.
  std::unordered_map<model::JobId, std::set<model::JobId>> nominees_;
  std::unordered_map<model::JobId, model::JobId> victim_of_;
  std::vector<model::JobId> released_;  // nominees whose last victim ended in this event
  std::unordered_map<model::JobId, Timestamp> released_at_;  // ... and when, until dispatched
  Duration stop_grace_;
};

}  // namespace allot::sim::internal
