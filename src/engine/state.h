#pragma once

// The engine's internal state. Per queue, units are interned to small indexes and every per-unit
// figure is a dense vector over them; job needs are interned as shapes so that waiting jobs of
// the same need share one ordered set.

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/time.h"
#include "model/config.h"
#include "model/decision.h"
#include "model/job.h"
#include "model/reason.h"

namespace allot::engine::internal {

using model::JobId;

constexpr std::int64_t kInfinite = std::numeric_limits<std::int64_t>::max() / 4;

// The two views of usage (docs/design/engine.md, Accounting).
enum View : int { kActual = 0, kProjected = 1 };

struct Shape {
  std::vector<std::pair<std::uint32_t, std::int64_t>> parts;  // (unit index, count), by unit
  std::int64_t instances = 0;
};

// Waiting order inside a share: priority descending, creation ascending, id ascending.
struct WaitKey {
  std::int32_t priority = 0;
  Timestamp created_at = 0;
  JobId id = 0;
};
struct WaitOrder {
  bool operator()(const WaitKey& a, const WaitKey& b) const {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.created_at != b.created_at) return a.created_at < b.created_at;
    return a.id < b.id;
  }
};
using WaitSet = std::set<WaitKey, WaitOrder>;

// Victim order inside one instance-count class: priority ascending, then the newest work
// reference (max of attempt start and last checkpoint) first, i.e. least work lost, then most
// recently started, then id. Across classes the cursors are merged on the exact key.
struct RunKey {
  std::int32_t priority = 0;
  Timestamp reference = 0;
  Timestamp started_at = 0;
  JobId id = 0;
};
struct RunOrder {
  bool operator()(const RunKey& a, const RunKey& b) const {
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.reference != b.reference) return a.reference > b.reference;
    if (a.started_at != b.started_at) return a.started_at > b.started_at;
    return a.id < b.id;
  }
};
using RunSet = std::set<RunKey, RunOrder>;

// A unique_ptr that copies what it points to when it is copied, so that the structs holding one
// keep their default, complete copy (a what-if copies the state, whatif.cc): no field can be
// forgotten by a copy written out by hand.
template <typename T>
class DeepCopied : public std::unique_ptr<T> {
 public:
  DeepCopied() = default;
  explicit DeepCopied(std::unique_ptr<T> p) : std::unique_ptr<T>(std::move(p)) {}
  DeepCopied(const DeepCopied& o) : std::unique_ptr<T>(o ? std::make_unique<T>(*o) : nullptr) {}
  DeepCopied& operator=(const DeepCopied& o) {
    if (this != &o) std::unique_ptr<T>::operator=(o ? std::make_unique<T>(*o) : nullptr);
    return *this;
  }
  DeepCopied(DeepCopied&&) noexcept = default;
  DeepCopied& operator=(DeepCopied&&) noexcept = default;
  ~DeepCopied() = default;
};

struct ShareState {
  model::QuotaShareConfig config;
  bool deleting = false;
  std::uint32_t name_rank = 0;           // position of the name among the queue's shares
  std::vector<std::int64_t> limit;       // L[s,u]
  std::vector<std::int64_t> borrow_cap;  // C[s,u]
  std::vector<std::int64_t> used[2];     // U[s,u] per view
  std::vector<std::int64_t> waiting_demand;
  using WaitMap = std::map<std::uint32_t, WaitSet>;
  // Schedulable waiting jobs by shape. Shared with a what-if copy (whatif.cc) until either
  // changes it: the copy then copies this share's map alone, not every waiting job.
  const WaitMap& waiting() const { return *waiting_index; }
  WaitMap& MutableWaiting() {
    if (waiting_index.use_count() > 1) waiting_index = std::make_shared<WaitMap>(*waiting_index);
    return *waiting_index;
  }
  std::shared_ptr<WaitMap> waiting_index = std::make_shared<WaitMap>();
  WaitSet misconfigured;          // waiting jobs that can never fit
  std::int64_t waiting_jobs = 0;  // both of the above
  std::int64_t dispatched_jobs = 0;
  std::int64_t live_jobs = 0;              // waiting, nominated or dispatched
  std::map<std::int64_t, RunSet> running;  // victim candidates by instance count
  // Preempted jobs still stopping that will be requeued, in waiting order: they keep their
  // place, so jobs behind them do not take what they would take (docs/design/engine.md).
  WaitSet requeuing;
  // Held capacity of victim candidates by priority, for a quick in-share feasibility test.
  std::map<std::int32_t, std::vector<std::int64_t>> held_by_priority;

  bool lends() const { return config.strategy != model::SharingStrategy::kReserve; }
  bool borrows() const { return config.strategy == model::SharingStrategy::kLendAndBorrow; }
};

// Queue-wide sums over shares, per unit and view.
struct Aggregates {
  std::vector<std::int64_t> held;   // sum_s U
  std::vector<std::int64_t> sum_b;  // sum_s B
  std::vector<std::int64_t> sum_i;  // sum_s I
};

struct QueueState {
  model::JobQueueConfig config;
  bool deleting = false;
  bool env_enabled = true;
  std::vector<std::string> units;
  std::map<std::string, std::uint32_t, std::less<>> unit_index;
  std::vector<std::int64_t> pool;  // P[u]
  Aggregates agg[2];
  std::vector<DeepCopied<ShareState>> shares;  // nullptr once a deleted share is empty
  std::map<std::string, std::uint32_t, std::less<>> share_index;
  std::vector<Shape> shapes;
  std::map<std::vector<std::pair<std::uint32_t, std::int64_t>>, std::uint32_t> shape_index;
  std::map<std::uint64_t, JobId> nominees;  // by nomination sequence
  std::vector<std::int64_t> nominee_free;   // sum of the nominees' NomineeWait::free, per unit
  std::int64_t live_jobs = 0;
  std::int64_t stopping_jobs = 0;
};

struct Job {
  JobId id = 0;
  std::uint32_t queue = 0;
  std::uint32_t share = 0;
  std::uint32_t shape = 0;
  std::uint32_t retry = 0;  // index into EngineState::retry_policies
  std::int32_t priority = 0;
  std::int32_t preemption_retries = -1;  // -1 = unlimited
  Timestamp created_at = 0;
  Duration timeout = 0;  // 0 = none
  model::JobStatus status = model::JobStatus::kSubmitted;
  model::Misconfiguration misconfig = model::Misconfiguration::kNone;
  bool stopping = false;
  bool nominated = false;
  model::StopKind stop_kind = model::StopKind::kTermination;
  model::PreemptionRule stop_rule = model::PreemptionRule::kReclaim;
  std::int32_t failed_attempts = 0;
  std::int32_t preemptions = 0;
  std::int32_t attempt = 0;
  std::uint64_t nomination = 0;
  Timestamp attempt_started = 0;
  Timestamp running_since = 0;
  Timestamp last_checkpoint = 0;
  Timestamp reason_since = 0;
  std::string status_reason;

  Timestamp WorkReference() const {
    return last_checkpoint > attempt_started ? last_checkpoint : attempt_started;
  }
  // The reference the victim order uses: the work reference, or with a checkpoint-blind order
  // the attempt's start.
  Timestamp OrderReference(bool newest_first) const {
    return newest_first ? attempt_started : WorkReference();
  }
};

// An attempt a nominee waits for. The victim may end it, be requeued and dispatched again (and
// even be stopped again for someone else) before the nominee starts: only this attempt counts.
struct StoppedAttempt {
  JobId job = 0;
  std::int32_t attempt = 0;
};

// What a nominee waits for, and the part of its reservation that is free already: capacity its
// victims no longer hold (or that was free when it was nominated). Normal dispatches must leave
// that part alone in the actual view too, or the nominee could not start when its victims end.
struct NomineeWait {
  std::vector<StoppedAttempt> victims;
  std::vector<std::int64_t> free;  // per unit of the queue
};

enum class DeadlineKind : std::uint8_t { kAttemptTimeout, kTimeLimitAction };

struct Deadline {
  Timestamp at = 0;
  JobId job = 0;
  DeadlineKind kind = DeadlineKind::kAttemptTimeout;
  bool operator<(const Deadline& o) const {
    if (at != o.at) return at < o.at;
    if (job != o.job) return job < o.job;
    return kind < o.kind;
  }
};

struct EngineState {
  Timestamp now = 0;
  // EngineOptions::victim_order == kNewestFirst: checkpoints do not order victims.
  bool newest_first = false;
  std::map<std::string, model::ServiceEnvironmentConfig, std::less<>> envs;
  std::vector<DeepCopied<QueueState>> queues;  // nullptr once a deleted queue is empty
  std::map<std::string, std::uint32_t, std::less<>> queue_index;
  std::unordered_map<JobId, Job> jobs;  // looked up only, never iterated into output
  std::vector<model::RetryStrategy> retry_policies;
  std::map<std::string, std::uint32_t> retry_index;
  std::set<Deadline> deadlines;
  std::unordered_map<JobId, std::string> final_reasons;  // for jobs stopping to terminate
  std::unordered_map<JobId, NomineeWait> nominee_waits;
  std::unordered_map<JobId, JobId> victim_nominee;  // a victim still stopping -> its nominee
  std::uint64_t next_nomination = 1;
  std::set<std::uint32_t> dirty;  // queues whose pass must run
  // model::HoldDispatches: while set, no pass runs (a queue's pass runs on the release).
  std::optional<std::string> dispatch_hold;
  model::Decisions* out = nullptr;  // where the current Apply writes

  // A what-if copy (whatif.cc) does not copy the jobs: it reads those of the engine it was copied
  // from through `base_jobs` and copies one into `jobs` the first time it may change it (a
  // mutable FindJob); `erased_base_jobs` hides the base jobs the copy has dropped. Node pointers
  // stay valid either way (unordered_map never moves its nodes).
  const std::unordered_map<JobId, Job>* base_jobs = nullptr;
  std::unordered_set<JobId> erased_base_jobs;

  Job* FindJob(JobId id) {
    auto it = jobs.find(id);
    if (it != jobs.end()) return &it->second;
    const Job* base = FindBaseJob(id);
    return base == nullptr ? nullptr : &jobs.emplace(id, *base).first->second;
  }
  const Job* FindJob(JobId id) const {
    auto it = jobs.find(id);
    return it == jobs.end() ? FindBaseJob(id) : &it->second;
  }
  const Job* FindBaseJob(JobId id) const {
    if (base_jobs == nullptr || erased_base_jobs.count(id) > 0) return nullptr;
    auto it = base_jobs->find(id);
    return it == base_jobs->end() ? nullptr : &it->second;
  }
  void EraseJob(JobId id) {
    jobs.erase(id);
    if (base_jobs != nullptr) erased_base_jobs.insert(id);
  }
  // Every live job, for the few handlers that walk them all (in no useful order).
  template <typename F>
  void ForEachJob(F f) const {
    for (const auto& [id, job] : jobs) f(job);
    if (base_jobs == nullptr) return;
    for (const auto& [id, job] : *base_jobs) {
      if (jobs.count(id) == 0 && erased_base_jobs.count(id) == 0) f(job);
    }
  }
  bool StillStopping(const StoppedAttempt& a) const {
    const Job* victim = FindJob(a.job);
    return victim != nullptr && victim->stopping && victim->attempt == a.attempt;
  }
  QueueState& QueueOf(const Job& j) { return *queues[j.queue]; }
  ShareState& ShareOf(const Job& j) { return *queues[j.queue]->shares[j.share]; }
  const Shape& ShapeOf(const Job& j) const { return queues[j.queue]->shapes[j.shape]; }
};

// A deep copy of the whole state (Engine::WhatIf); with `share_jobs` the copy reads `st`'s jobs
// in place (EngineState::base_jobs) and must not outlive it nor see it change.
std::unique_ptr<EngineState> CopyState(const EngineState& st, bool share_jobs);

}  // namespace allot::engine::internal
