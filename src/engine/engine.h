#pragma once

// The scheduling engine: pure, deterministic, single-threaded. It takes events with the current
// time and returns decisions; it reads no clock, does no I/O and starts no thread. The server
// and the simulator are its two drivers. Same sequence of (event, now) => same decisions.
//
// Thread-safety: none; the driver serializes calls.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "model/decision.h"
#include "model/event.h"
#include "model/reason.h"

namespace allot::engine {

namespace internal {
struct EngineState;
}

// One capacity unit of a share (or of the whole queue when it describes the pool).
struct UnitUsage {
  std::string unit;
  std::int64_t limit = 0;          // L[s,u] (for the pool: P[u])
  std::int64_t used = 0;           // U[s,u]: held by dispatched jobs, stopping ones included
  std::int64_t borrowed = 0;       // B[s,u] = max(0, U - L)
  std::int64_t lent = 0;           // share of the queue's borrowed capacity this share's idle backs
  std::int64_t idle_lendable = 0;  // I[s,u]
  std::int64_t reserved = 0;       // reserved for nominated preemptors of this share
  std::int64_t stopping = 0;       // held by jobs that are stopping
  std::int64_t waiting = 0;        // what RUNNABLE jobs need in total
};

struct ShareUsage {
  std::string name;
  model::SharingStrategy strategy = model::SharingStrategy::kReserve;
  std::vector<UnitUsage> units;
  std::int64_t waiting_jobs = 0;
  std::int64_t dispatched_jobs = 0;
};

struct QueueUsage {
  std::string queue;
  std::vector<UnitUsage> pool;     // limit = service environment capacity, used = sum over shares
  std::vector<ShareUsage> shares;  // by name
};

// What the engine knows of a live (not yet terminal) job.
struct JobView {
  model::JobId id = 0;
  std::string queue;
  std::string share;
  model::JobStatus status = model::JobStatus::kSubmitted;
  std::string status_reason;
  std::int32_t priority = 0;
  int attempt = 0;  // attempts dispatched so far
  int failed_attempts = 0;
  int preemptions = 0;
  bool stopping = false;
  bool nominated = false;
  Timestamp last_checkpoint = 0;  // 0 = never
  Timestamp attempt_started_at = 0;
};

// How victims of equal priority are ordered (docs/design/engine.md, Victims).
enum class VictimOrder : std::uint8_t {
  // Allot's order: least work lost (instances x time since the last checkpoint or the attempt's
  // start), then the most recently started.
  kLeastWorkLost,
  // Checkpoint-blind, as Kueue orders: the most recently started first. Only the simulator uses
  // it, to measure what checkpoint awareness saves.
  kNewestFirst,
};

// What an event would decide now (Engine::WhatIf).
struct WhatIfAnswer {
  model::Decisions decisions;
  std::optional<JobView> subject;         // the job the question is about, after the event
  std::optional<model::WaitReason> wait;  // why it would wait, when it would be RUNNABLE
};

struct EngineOptions {
  VictimOrder victim_order = VictimOrder::kLeastWorkLost;
};

class Engine {
 public:
  Engine();
  explicit Engine(const EngineOptions& options);
  ~Engine();
  Engine(Engine&&) noexcept;
  Engine& operator=(Engine&&) noexcept;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Applies one event at time `now` and appends the resulting decisions to `out`. An invalid
  // event (unknown queue or share, a bad value, a priority change or termination of a job that
  // is not live) returns a non-OK status and changes nothing it names. Executor reports for a job
  // or attempt that is not current are ignored with OK: they may simply be late. Timers due by
  // `now` fire either way. `now` never goes backwards: an earlier time counts as the latest seen.
  Status Apply(const model::Event& event, Timestamp now, model::Decisions* out);

  // The earliest time at which a Tick would change something (a timeout or a
  // jobStateTimeLimitAction), if any.
  std::optional<Timestamp> NextDeadline() const;

  std::optional<JobView> GetJob(model::JobId id) const;
  Result<QueueUsage> Usage(std::string_view queue) const;

  // Why a RUNNABLE job waits: rule, unit, amounts, holders (shares and jobs) and its position,
  // when it could start at the latest, what would let it start, and why in-share preemption
  // does not start it.
  Result<model::WaitReason> Explain(model::JobId id) const;
  // Explain's sentence alone, without what walks the jobs (positions, holders' jobs, start
  // bound): cheap enough for every RUNNABLE job of a ListServiceJobs page.
  Result<std::string> WaitSentence(model::JobId id) const;

  // What applying `event` at `now` would decide, and how `subject` (0: none; a submission's new
  // id) would stand after it; the engine does not change. Timers due by `now` are left out of
  // the decisions. An event Apply would refuse returns its status.
  Result<WhatIfAnswer> WhatIf(const model::Event& event, Timestamp now, model::JobId subject) const;

  // RUNNABLE jobs in dispatch order, front first: nominated preemptors, then priority
  // descending, creation time, id. `share` empty = the whole queue.
  std::vector<model::JobId> FrontOfQueue(std::string_view queue, std::string_view share,
                                         std::size_t limit) const;

  // Live jobs the engine holds (waiting and dispatched).
  std::size_t LiveJobs() const;

 private:
  std::unique_ptr<internal::EngineState> state_;
};

}  // namespace allot::engine
