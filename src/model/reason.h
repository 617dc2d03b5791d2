#pragma once

// Why a job waits and why a job was preempted: machine-readable records, plus the AWS status
// reason strings the wire shows.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/time.h"
#include "model/job.h"

namespace allot::model {

// AWS status-reason codes (reference/aws-batch-quota-management.md section 3.6).
inline constexpr std::string_view kReasonServiceEnvironmentMax =
    "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE";
inline constexpr std::string_view kReasonQuotaLimitExceeded =
    "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED";
inline constexpr std::string_view kReasonInsufficientCapacity =
    "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY";
inline constexpr std::string_view kPreemptionInProgress = "PREEMPTION_IN_PROGRESS: ";

// A job that can never fit its queue.
enum class Misconfiguration : std::uint8_t {
  kNone,
  kServiceEnvironmentMax,  // needs more of a unit than the service environment has
  kShareLimit,             // RESERVE / LEND share: more than the share's limit
  kShareAndBorrowLimit,    // LEND_AND_BORROW: more than limit + borrow cap
  kBorrowableCapacity,     // more borrowing than all other lenders' configured limits
};

// The full AWS statusReason for a misconfiguration ("CODE - text"), empty for kNone.
std::string MisconfigurationReason(Misconfiguration m);

enum class PreemptionRule : std::uint8_t {
  kReclaim,       // cross-share: a share at or below its limit takes back lent capacity
  kInShare,       // a higher-priority job of the same share
  kLimitLowered,  // the victim's share is over a limit an admin lowered
};

std::string_view ToString(PreemptionRule r);
// The statusReason of a preempted attempt, e.g. "Cross-share preemption triggered to reclaim
// borrowed capacity" (AWS's wording for reclaim).
std::string PreemptionReason(PreemptionRule r);

// The ordering key that put this victim where it was in the victim order.
struct VictimKey {
  std::int32_t priority = 0;
  std::int64_t work_lost = 0;  // instance-milliseconds since the last checkpoint
  Timestamp started_at = 0;    // start of the preempted attempt
  JobId id = 0;
};

struct VictimRecord {
  JobId victim = 0;
  std::string share;
  PreemptionRule rule = PreemptionRule::kReclaim;
  VictimKey key;
};

// The candidate the victim order would have taken next (Preemption::runner_up): either one that
// comes after the chosen victims in victim order, or one that came before but was put back
// because the victims after it free enough alone (`put_back`, the minimal set).
struct RunnerUp {
  VictimRecord candidate;
  bool put_back = false;
};

// Which rule keeps a waiting job waiting (Engine::Explain).
enum class WaitRule : std::uint8_t {
  kNotWaiting,            // the job is not RUNNABLE
  kMisconfigured,         // it can never fit; see `misconfiguration`
  kNominated,             // it preempted; waiting for its victims to stop
  kShareLimit,            // its share's own limit is used up (in-share preemption off or no victim)
  kBorrowLimit,           // LEND_AND_BORROW share at its borrow cap
  kNoLendableCapacity,    // nothing idle to borrow (or its share cannot borrow)
  kPoolFull,              // the service environment's capacity is in use
  kReservedForPreemptor,  // capacity is reserved for a nominated preemptor
  kCapacityStopping,      // the capacity it needs is held by jobs that are stopping
  kServiceEnvironmentDisabled,
  kDispatchesHeld,  // the driver holds every dispatch (model::HoldDispatches); see `held_for`
  kFitsNextPass,    // nothing blocks it: the next pass dispatches it
};

std::string_view ToString(WaitRule r);

// A running job that holds the blocking unit. `ends_by`: when its attempt's time limit stops it
// at the latest; 0 = it has none.
struct HolderJob {
  JobId id = 0;
  std::int64_t held = 0;
  Timestamp ends_by = 0;
};

struct Holder {
  std::string share;
  std::int64_t held = 0;
  std::int64_t borrowed = 0;
  std::vector<HolderJob> jobs;  // dispatched victim candidates holding the unit, most first
  std::int64_t more_jobs = 0;   // holders left out of `jobs` (kMaxHolderJobs)
};

inline constexpr std::size_t kMaxHolderJobs = 10;

struct WaitReason {
  WaitRule rule = WaitRule::kNotWaiting;
  Misconfiguration misconfiguration = Misconfiguration::kNone;
  std::string unit;                    // the first unit that blocks it
  std::int64_t needed = 0;             // what the job needs of `unit`
  std::int64_t available = 0;          // what is available to it under `rule`
  std::int64_t missing = 0;            // needed - available
  std::vector<Holder> holders;         // who holds `unit`, by share, most first
  std::vector<JobId> waiting_for;      // nominated: the victims still stopping
  std::int64_t position_in_share = 0;  // 0 = front of its share
  std::int64_t position_in_queue = 0;  // 0 = front of the queue
  // When the capacity it misses is free at the latest, from the time limits of the running jobs
  // that hold it (no job ahead of it taking it first); unset when unknown, `start_unknown` says
  // why.
  std::optional<Timestamp> start_bound;
  std::string start_unknown;
  // Why in-share preemption does not start it now (empty when it does not apply: the share's
  // quota is not what blocks it).
  std::string in_share_why_not;
  std::string would_start;  // what would let it start, one sentence
  // When nothing of `unit` is available to it but the pool has free capacity: whose it is
  // ("2 free in share b's RESERVE"), comma-separated; empty otherwise.
  std::string free_elsewhere;
  std::string held_for;  // kDispatchesHeld: why the driver holds them
  std::string message;   // the rule, as one English sentence
};

}  // namespace allot::model
