#pragma once

// A driver for benchmarks: builds a queue with N shares and applies events, keeping track of
// what the engine dispatched so that it can report attempts as ended. It reads the clock only
// to time single events (benchmarks are drivers; the engine itself never does).

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace allot::bench {

inline const std::string kUnit = "ml.g5.xlarge";

// Instance type `i` of a world: kUnit first, then larger g5 types.
std::string UnitName(int i);

// How many instance types hold `instances`, each type at most model::rules::kMaxCapacity.
int UnitsFor(std::int64_t instances);

struct WorldConfig {
  int shares = 20;
  std::int64_t pool = 0;             // service environment capacity, per instance type
  std::int64_t share_limit = 0;      // each share's limit, unless `limits` names it
  std::vector<std::int64_t> limits;  // per share, overrides share_limit
  model::SharingStrategy strategy = model::SharingStrategy::kLendAndBorrow;
  bool in_share_preemption = false;
  // Instance types (1-5): the environment and every share have their capacity for each. More
  // than one where a world needs more instances than one type may hold
  // (model::rules::kMaxCapacity).
  int units = 1;
};

class World {
 public:
  explicit World(const WorldConfig& config);

  // Submits a job of `count` instances of type `unit` to share `share` at priority `priority`.
  void Submit(int share, std::int64_t count = 1, std::int32_t priority = 0, int unit = 0);
  // Ends the oldest dispatched attempt; returns false when nothing runs.
  bool EndOldest();
  // Reports attempt `attempt` of `job` as ended (a stopped job that reports failure was
  // killed by its stop).
  void End(model::JobId job, int attempt,
           model::AttemptOutcome outcome = model::AttemptOutcome::kSucceeded);
  void Apply(const model::Event& e);
  // Applies `e` and returns how long Apply took, in nanoseconds.
  std::int64_t TimedApply(const model::Event& e);
  void SetPool(std::int64_t pool);  // for each instance type

  engine::Engine& engine() { return engine_; }
  std::size_t running() const { return running_.size(); }
  std::int64_t dispatches() const { return dispatches_; }
  Timestamp now() const { return now_; }
  void Advance(Duration d) { now_ += d; }
  const model::Decisions& last_decisions() const { return decisions_; }
  // Running attempts in dispatch order.
  const std::deque<std::pair<model::JobId, int>>& running_attempts() const { return running_; }

 private:
  void Absorb();

  std::vector<model::CapacityLimit> PerUnit(std::int64_t limit) const;
  int units_ = 1;
  engine::Engine engine_;
  model::Decisions decisions_;
  std::deque<std::pair<model::JobId, int>> running_;
  model::JobId next_id_ = 1;
  Timestamp now_ = 1'000'000;
  std::int64_t dispatches_ = 0;
};

std::string ShareName(int i);

// p-th percentile (0-100) of `samples` (sorted in place).
double Percentile(std::vector<std::int64_t>& samples, double p);

}  // namespace allot::bench
