#pragma once

// What the controller keeps to write the usage history and the job events (history.cc):
// the next event's sequence number and the running averages of the coarse resolutions.
// Guarded by the controller's mu_.

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "common/time.h"
#include "server/history_codec.h"

namespace allot::server {

// Each resolution's step and how long its points are kept (the coarsest: the retention).
inline constexpr Duration kFiveMinutes = Seconds(300);
inline constexpr Duration kHour = Seconds(3600);
inline constexpr Duration kFineKept = Seconds(24LL * 3600);
inline constexpr Duration kFiveMinutesKept = Seconds(30LL * 24 * 3600);

// The sum of the fine samples of one coarse step, per queue, share and unit.
struct UsageAverage {
  Timestamp step_start = -1;
  std::int64_t samples = 0;
  std::map<std::tuple<std::string, std::string, std::string>, UsagePoint> sums;
};

struct HistoryState {
  bool live = false;  // false during recovery: a restore is not a lifecycle event
  std::uint64_t next_event = 1;
  Timestamp next_sample = 0;
  Timestamp next_prune = 0;
  std::map<std::string, UsageAverage> five_minutes;  // by queue
  std::map<std::string, UsageAverage> hours;
};

}  // namespace allot::server
