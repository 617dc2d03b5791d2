#pragma once

// The virtual world a simulation drives the engine through: the trace's submissions, a
// simulated executor (attempts that run for the job's remaining work, checkpoint, stop after a
// grace period and lose the work since their last checkpoint) and a clock that jumps from one
// event to the next (docs/sim.md, The simulated executor).

#include <cstdint>
#include <queue>
#include <vector>

#include "common/status.h"
#include "engine/engine.h"
#include "sim/invariants.h"
#include "sim/metrics.h"
#include "sim/simulate.h"

namespace allot::sim::internal {

class World {
 public:
  World(const Trace& trace, const Policy& policy, const SimOptions& options);

  // Runs until nothing is left to happen.
  Result<RunResult> Run();

 private:
  enum class Kind : std::uint8_t { kFinish, kCheckpoint, kStopDone, kTick, kPriority };
  struct Timer {
    Timestamp at = 0;
    std::uint64_t seq = 0;
    Kind kind = Kind::kTick;
    std::uint32_t job = 0;
    int attempt = 0;  // kPriority: the new priority
    bool operator>(const Timer& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  // What the simulated executor knows of one trace job (the engine's id is index + 1).
  struct JobState {
    int share = -1;  // meter index; -1 = not accepted
    int unit = -1;
    int attempt = 0;  // the engine's current attempt
    bool dispatched = false;
    bool waiting = false;
    bool terminal = false;
    bool started = false;  // dispatched at least once
    Timestamp attempt_start = 0;
    Timestamp work_start = 0;     // attempt_start plus the restart overhead
    Timestamp checkpoint_at = 0;  // last checkpoint reported in this attempt (0 = none)
    Duration saved = 0;           // work kept by the last checkpoint
    // For the job's row (JobResult).
    Timestamp first_start = -1;
    Timestamp end = -1;
    int preemptions = 0;
    std::int64_t lost = 0;  // instance-ms
    bool succeeded = false;
  };

  Status Configure();
  Status Submit(std::uint32_t job);
  Status Fire(const Timer& timer);
  // Applies `event` and, through the decisions, everything that follows at the same instant.
  // With `first`, the engine's answer to `event` itself goes there instead of failing the run
  // (a submission the engine refuses is a result, not an error).
  Status Feed(model::Event event, Status* first = nullptr);
  bool Stale(const Timer& timer) const;
  Status Handle(const model::Decision& d, std::vector<model::Event>* follow);
  void OnDispatch(const model::Dispatch& d, std::vector<model::Event>* follow);
  void OnStatus(const model::StatusChanged& s);
  void OnPreempted(const model::PreemptedAttempt& p);
  // The attempt's processes are gone: free its capacity and report it.
  Status EndAttempt(std::uint32_t job, model::AttemptOutcome outcome);
  void SetWaiting(std::uint32_t job, bool waiting);
  void ScheduleNextCheckpoint(std::uint32_t job);
  void ScheduleTick();
  void At(Timestamp at, Kind kind, std::uint32_t job, int attempt);
  Duration Interval(std::uint32_t job) const;
  Duration StopTime(std::uint32_t job) const;  // the trace's stop_s, or the --stop-grace
  std::vector<JobResult> JobResults() const;
  Duration Progress(std::uint32_t job) const;  // work done by now, saved or not
  std::int64_t Count(std::uint32_t job) const { return trace_.jobs[job].count; }
  Timestamp Time(Duration trace_time) const { return kEpoch + trace_time; }

  // Virtual time starts here, so that no engine time is 0 ("never").
  static constexpr Timestamp kEpoch = 1'000'000'000'000;

  const Trace& trace_;
  const Policy& policy_;
  const SimOptions& options_;
  engine::Engine engine_;
  Meter meter_;
  InvariantChecker checker_;
  std::vector<JobState> jobs_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::uint64_t seq_ = 0;
  Timestamp now_ = kEpoch;
  Timestamp tick_at_ = -1;  // the Tick already scheduled, if any
  Timestamp last_event_ = kEpoch;
  std::int64_t events_ = 0;
  std::int64_t decisions_ = 0;
  model::Decisions out_;
  // The attempt EndAttempt is reporting: its costs, carried to the PreemptedAttempt decision
  // the report produces (if it was preempted).
  std::uint32_t ended_job_ = 0;
  std::int64_t ended_restart_ = 0;      // instance-ms of restart overhead spent
  std::int64_t ended_lost_ = 0;         // instance-ms of work since the last checkpoint
  std::int64_t ended_engine_lost_ = 0;  // the same as the engine counts it (overhead included)
  bool ended_preempted_ = false;
  Status preempted_status_;
};

}  // namespace allot::sim::internal
