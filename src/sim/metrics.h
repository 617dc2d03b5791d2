#pragma once

// The meter of a simulated run: it integrates capacity held, waiting demand, borrowing and
// shortfall over virtual time, collects per-job samples and turns both into a RunResult
// (docs/sim.md, Metrics). The world tells it every change; it never reads the engine.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/time.h"
#include "model/reason.h"
#include "sim/cluster.h"
#include "sim/result.h"
#include "sim/trace.h"

namespace allot::sim::internal {

// Sums of a piecewise-constant figure over chart buckets that double in width as time grows, so
// a run of any length ends with between max/2 and max buckets.
class BucketSeries {
 public:
  BucketSeries(std::size_t series, int max_buckets);
  // Adds value[i] x time for every series i over [from, to).
  void Add(Timestamp from, Timestamp to, const std::vector<double>& values);
  // Mean value per bucket of series i over [0, end).
  std::vector<double> Means(std::size_t i, Timestamp end) const;
  Duration width() const { return width_; }

 private:
  void Widen();

  std::size_t series_;
  std::size_t max_;
  Duration width_ = kMillisPerSecond;
  std::vector<std::vector<double>> sums_;  // [bucket][series]
};

class Meter {
 public:
  // Units are those of the cluster and of the trace's jobs.
  Meter(const Cluster& cluster, const Trace& trace, int chart_buckets);

  // Index of a share, or -1 when the cluster has no such share (the engine then rejects it).
  int ShareIndex(const std::string& queue, const std::string& share) const;
  int UnitIndex(const std::string& unit) const;

  // Integrates [last time, t) with the current state; every change calls it first.
  void Advance(Timestamp t);
  void AddHeld(int share, int unit, std::int64_t delta);
  void AddWaiting(int share, int unit, std::int64_t count, int sign);
  // The state is consistent again (an event and its decisions are done): reclaim episodes
  // open and close here, so the steps in between do not count.
  void Settle();

  void Submitted(int share, bool accepted);  // share -1: a share the cluster does not list
  void FirstDispatch(int share, const std::string& group, Duration wait);
  void Succeeded(int share, Duration completion, Duration work);
  void Failed(int share);
  void Preempted(int share, model::PreemptionRule rule, std::int64_t lost_instance_ms,
                 std::int64_t restart_instance_ms);
  void Restarted(int share, std::int64_t restart_instance_ms);

  // Live figures, for the invariant checks.
  std::int64_t Held(int share, int unit) const { return held_[Cell(share, unit)]; }
  std::int64_t Limit(int share, int unit) const;
  std::size_t shares() const { return shares_.size(); }
  std::size_t units() const { return units_.size(); }

  RunResult Finish(Timestamp end);

 private:
  struct ShareInfo {
    std::string queue;
    std::string name;
    model::SharingStrategy strategy = model::SharingStrategy::kReserve;
    int queue_index = 0;
    std::vector<std::int64_t> limit;  // per unit
  };
  struct Accumulators {
    double used = 0, iww = 0, shortfall = 0, borrowed = 0, lent = 0, demand = 0;  // inst-ms
    std::int64_t jobs = 0, rejected = 0, succeeded = 0, failed = 0;
    std::int64_t reclaim = 0, in_share = 0;
    double lost = 0, restart = 0;  // instance-ms
    std::vector<Duration> waits, completions;
    std::vector<double> slowdowns;
    std::vector<Duration> episodes;
    Timestamp episode_start = -1;
  };

  std::size_t Cell(int share, int unit) const {
    return static_cast<std::size_t>(share) * units_.size() + static_cast<std::size_t>(unit);
  }
  void IntegrateQueue(int queue, double dt, std::vector<double>* chart);
  bool ShortWhileOthersBorrow(int share) const;
  Figures Summarize(const Accumulators& a, std::int64_t limit, double span_ms) const;

  std::vector<ShareInfo> shares_;
  std::vector<std::vector<int>> queue_shares_;   // share indexes per queue
  std::vector<std::vector<std::int64_t>> pool_;  // per queue, per unit
  std::map<std::string, int> units_;
  std::map<std::pair<std::string, std::string>, int> share_index_;
  std::vector<std::int64_t> held_, waiting_;                         // [share x unit]
  std::vector<std::map<std::int64_t, std::int64_t>> waiting_needs_;  // [share x unit]: need -> jobs
  std::vector<Accumulators> acc_;
  Accumulators overall_;
  std::map<std::string, std::vector<Duration>> group_waits_;
  BucketSeries chart_;
  Timestamp start_ = -1;
  Timestamp last_ = -1;
};

}  // namespace allot::sim::internal
