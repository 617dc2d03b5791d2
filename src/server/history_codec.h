#pragma once

// The stored forms of the usage history and of the job lifecycle events (docs/observability.md,
// History and reports). Both kinds are keyed so that the store's key order is time order, and
// a window of time is one range read (store::KeyRange):
//   kUsageSample  "<resolution>/<ms, 13 digits>/<queue>": every share and unit of the queue
//   kJobEvent     "<ms, 13 digits>/<sequence, 12 digits>": one event of one job
// Values are tab-separated text, not JSON: a day holds thousands of them and JSON is for the
// wire. Each event carries what the reports need of its job (share, demand, the attempt's
// dispatch time), so a window is read on its own, without the events before it.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace allot::server {

// The resolutions of the usage history; a coarser one holds averages of the finer.
enum class UsageResolution : std::uint8_t { kFine = 0, kFiveMinutes = 1, kHour = 2 };
inline constexpr UsageResolution kUsageResolutions[] = {
    UsageResolution::kFine, UsageResolution::kFiveMinutes, UsageResolution::kHour};

// One share's figures in one unit at one point (averages over the point's step, once coarse).
struct UsagePoint {
  std::string share;
  std::string unit;
  double limit = 0;
  double used = 0;
  double borrowed = 0;
  double lent = 0;
  double waiting = 0;  // instances RUNNABLE jobs of the share ask for

  bool operator==(const UsagePoint&) const = default;
};

struct UsageSample {
  UsageResolution resolution = UsageResolution::kFine;
  Timestamp at = 0;  // the start of the step it covers
  std::string queue;
  std::vector<UsagePoint> points;

  bool operator==(const UsageSample&) const = default;
};

std::string UsageSampleKey(UsageResolution resolution, Timestamp at, const std::string& queue);
// The first key of `resolution` at or after `at` (a range bound).
std::string UsageSampleBound(UsageResolution resolution, Timestamp at);
std::string EncodeUsageSample(const UsageSample& sample);
Result<UsageSample> DecodeUsageSample(const std::string& key, const std::string& value);

enum class JobEventType : std::uint8_t {
  kSubmitted,     // accepted (at = its creation)
  kDispatched,    // an attempt took capacity (SCHEDULED)
  kStarted,       // the attempt's processes run (RUNNING)
  kAttemptEnded,  // the attempt's capacity is free again
  kPreempted,     // a preempted attempt has ended: its preemption record
  kPriority,      // schedulingPriority changed
  kEnded,         // SUCCEEDED or FAILED
};
std::string_view ToString(JobEventType type);

struct JobEvent {
  Timestamp at = 0;
  JobEventType type = JobEventType::kSubmitted;
  std::string job;  // its id
  std::string name;
  std::string queue;
  std::string share;
  std::vector<std::pair<std::string, std::int64_t>> demand;  // unit, instances
  std::int32_t priority = 0;  // the job's (for kPriority: the new one)
  int attempt = 0;
  Timestamp created_at = 0;     // the job's submission (kDispatched: for its wait)
  Timestamp dispatched_at = 0;  // the attempt's dispatch (kStarted, kAttemptEnded, kPreempted)
  std::string reason;           // statusReason (kAttemptEnded, kEnded); kDispatched: its mode
  std::string status;           // kEnded: SUCCEEDED | FAILED
  std::string hosts;            // kStarted: "algo-1,algo-2"
  // kPriority
  std::int32_t old_priority = 0;
  std::string by;  // the user who changed it
  // kPreempted: the preemption record
  std::string preemptor;        // its job id
  std::string preemptor_share;  // its share
  std::string rule;             // reclaim | in-share | limit-lowered (model::ToString)
  std::int32_t victim_priority = 0;
  std::int64_t work_lost_when_chosen = 0;  // instance-ms, the victim key's estimate
  Timestamp chosen_at = 0;                 // when it was chosen (its stop began)
  std::int64_t work_lost = 0;              // instance-ms, measured at the attempt's end

  bool operator==(const JobEvent&) const = default;
  std::int64_t Instances() const;  // of every unit together
};

std::string JobEventKey(Timestamp at, std::uint64_t sequence);
// The first key at or after `at` (a range bound).
std::string JobEventBound(Timestamp at);
// The sequence number in a key JobEventKey made; nullopt for another key.
std::optional<std::uint64_t> JobEventSequence(const std::string& key);
std::string EncodeJobEvent(const JobEvent& event);
Result<JobEvent> DecodeJobEvent(const std::string& key, const std::string& value);

}  // namespace allot::server
