#pragma once

// An independent shadow of the engine's accounting, for property tests. It follows the events fed
// to the engine and the decisions the engine returns, in order, keeps its own per-queue, per-share,
// per-unit figures, and after every single decision checks the rules of docs/design/engine.md and
// the invariants of DESIGN.md section 2. It uses only the engine's public API, and that only to
// cross-check (Usage, GetJob) and to learn which nominees the engine returned to waiting.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "engine/engine.h"
#include "model/config.h"
#include "model/decision.h"
#include "model/event.h"

namespace allot::testing {

class ShadowModel {
 public:
  // Feeds the event the engine was given at `now`, the status it returned and the decisions it
  // produced. Returns the first violated check ("" = all fine). `engine` is only read.
  std::string Observe(const model::Event& event, Timestamp now, const Status& status,
                      const model::Decisions& decisions, const engine::Engine& engine);

  // Whether the shadow expects the engine to accept a submission of this spec.
  bool SubmissionValid(const model::JobSpec& spec) const;

 private:
  enum class JobState : std::uint8_t { kWaiting, kNominated, kDispatched, kStopping };

  struct Job {
    model::JobSpec spec;
    std::size_t queue = 0;
    std::size_t share = 0;
    std::vector<std::pair<std::size_t, std::int64_t>> need;  // (unit index, count)
    JobState state = JobState::kWaiting;
    int attempt = 0;
    Timestamp running_since = -1;  // -1: the current attempt has not reported AttemptRunning
    bool preemption_victim = false;
    bool stop_seen = false;
    bool stop_final = false;       // a preemption victim terminated while stopping
    std::int32_t preemptions = 0;  // from PreemptedAttempt
  };

  struct Share {
    model::QuotaShareConfig config;
    bool deleted = false;
    std::vector<std::int64_t> limit;  // L per unit index
  };

  struct Queue {
    model::JobQueueConfig config;
    std::vector<std::string> units;
    std::vector<std::int64_t> pool;  // P per unit index
    std::vector<Share> shares;
  };

  // Key of an invariant figure: queue, share (unused for pool-wide ones), unit, invariant, view.
  using ViolationKey = std::array<std::size_t, 5>;

  // U per (share, unit), flattened: [share * units + unit].
  struct Tally {
    std::size_t units = 0;
    std::vector<std::int64_t> used;
    std::int64_t& At(std::size_t s, std::size_t u) { return used[s * units + u]; }
    std::int64_t At(std::size_t s, std::size_t u) const { return used[s * units + u]; }
  };

  enum class FitMode : std::uint8_t { kWithinQuota, kBorrowing };

  // --- configuration ---
  std::optional<std::size_t> FindQueue(const std::string& name) const;
  std::optional<std::size_t> FindShare(const Queue& q, const std::string& name) const;
  std::size_t UnitIndex(Queue& q, const std::string& unit);
  void Refresh(Queue& q);
  std::int64_t Limit(const Queue& q, std::size_t s, std::size_t u) const;
  std::optional<std::int64_t> Cap(const Queue& q, std::size_t s, std::size_t u) const;
  std::int64_t Idle(const Queue& q, std::size_t s, std::size_t u, std::int64_t used) const;
  std::int64_t Pool(const Queue& q, std::size_t u) const;
  bool EnvironmentEnabled(const Queue& q) const;
  void ApplyConfig(const model::Event& event);
  bool ConfigValid(const model::Event& event) const;

  // --- views and checks ---
  Tally View(std::size_t q, bool projected) const;
  std::int64_t LendingBalance(const Queue& q, const Tally& t, std::size_t u) const;
  std::string Fit(std::size_t q, const Tally& t, const Job& job, FitMode mode) const;
  std::vector<std::pair<ViolationKey, std::int64_t>> Violations(std::size_t q) const;
  void AddReservationViolations(std::size_t q, const Tally& t,
                                std::vector<std::pair<ViolationKey, std::int64_t>>* out) const;
  std::string DescribeKey(const ViolationKey& k) const;
  void ResetAllowances(std::size_t q);
  std::string CheckInvariants(std::size_t q);

  // --- events and decisions ---
  static std::size_t TimerPrefix(const model::Decisions& decisions);
  std::string FollowDecisions(const model::Decisions& decisions, std::size_t begin,
                              std::size_t end);
  std::string ApplyEvent(const model::Event& event, Timestamp now, const Status& status);
  std::string DropSilentNominees(const model::Decisions& decisions, const engine::Engine& engine);
  std::string Unnominate(Job& job);
  std::string OnDecision(const model::Decision& d);
  std::string OnStatus(const model::StatusChanged& d);
  std::string OnDispatch(const model::Dispatch& d);
  std::string OnStop(const model::Stop& d);
  std::string OnPreemption(const model::Preemption& d);
  std::string CheckVictims(const Job& preemptor, const model::Preemption& d) const;
  std::string CheckVictimSet(const Job& preemptor, const model::Preemption& d) const;
  std::string CheckThrash(const model::Preemption& d);
  std::vector<const Job*> Owed(std::size_t q, std::size_t except, Tally t) const;
  static void Add(const Job& job, Tally* t);
  // `t` with `jobs` added.
  static Tally Beside(Tally t, const std::vector<const Job*>& jobs);
  // Waiting order (docs/design/engine.md): priority descending, creation, id.
  static std::tuple<std::int32_t, Timestamp, model::JobId> WaitKey(const Job& j);
  std::string CheckNoRestartAtOnce(const Job& preemptor, const model::Preemption& d, Tally after,
                                   const std::vector<const Job*>& owed) const;
  bool WillRequeue(const Job& job) const;
  std::string CheckPlaceKept(const Job& job, FitMode mode) const;
  std::string AfterApply(const engine::Engine& engine);
  std::string CrossCheckUsage(std::size_t q, const engine::Engine& engine) const;
  std::string CrossCheckJobs(const engine::Engine& engine) const;
  std::string CheckTimers() const;

  std::vector<Queue> queues_;
  std::map<std::string, model::ServiceEnvironmentConfig> environments_;
  std::map<model::JobId, Job> jobs_;
  // How far a violation an admin caused may still go; absent = 0.
  std::map<ViolationKey, std::int64_t> allowance_;
  // (preemptor, victim) -> epoch of the preemption; the epoch moves on a submission, a priority
  // change or a configuration change.
  std::map<std::pair<model::JobId, model::JobId>, std::uint64_t> preempted_;
  std::uint64_t epoch_ = 0;
  bool config_event_ = false;
  bool dispatches_held_ = false;  // model::HoldDispatches: no Dispatch and no Preemption
  Timestamp now_ = 0;
};

}  // namespace allot::testing
