#pragma once

// The executors' periodic scan of their attempts' checkpoint directories for the newest
// checkpoint's time (both executors; docs/design/execution.md). Each attempt is scanned on its
// own pace: a job whose directory holds a million files makes its own scans rarer, not its
// neighbours' (which wait at most for one of its walks, on the same thread).

#include <chrono>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/time.h"
#include "exec/attempt_end.h"
#include "exec/pacing.h"

namespace allot::exec {

// Scans, with `lock` (held on entry and on return) released while walking, the checkpoint
// directory of each attempt in `attempts` (a map from a key to an attempt with `job_dir`,
// `checkpoint` and `next_scan`) that `eligible` takes and whose next scan is due. An attempt's
// next scan then waits CheckpointScanInterval of its own walk times the number of attempts
// scanned: so the walks of N slow attempts together take a twentieth of the thread, as one's
// does alone (until the interval's ceiling). `newer(key, time)` is called, under
// the lock, for each attempt whose newest checkpoint is later than the one it had. Returns when
// the next scan is due (time_point::max() with nothing to scan).
template <typename Attempts, typename Eligible, typename Newer>
std::chrono::steady_clock::time_point ScanDueCheckpoints(Attempts& attempts,
                                                         std::unique_lock<std::mutex>& lock,
                                                         Eligible eligible, Newer newer) {
  using Clock = std::chrono::steady_clock;
  using Key = typename Attempts::key_type;
  struct Due {
    Key key;
    std::string dir;
    Timestamp newest = 0;
    Clock::duration took{};
  };
  std::vector<Due> due;
  int scanned = 0;
  const Clock::time_point now = Clock::now();
  for (const auto& [key, attempt] : attempts) {
    if (!eligible(attempt) || attempt.job_dir.empty()) continue;
    ++scanned;
    if (attempt.next_scan <= now) due.push_back({key, attempt.job_dir});
  }
  if (!due.empty()) {
    lock.unlock();  // walking a directory tree may take a while
    for (Due& d : due) {
      const Clock::time_point began = Clock::now();
      d.newest = NewestCheckpoint(d.dir);
      d.took = Clock::now() - began;
    }
    lock.lock();
    const Clock::time_point ended = Clock::now();
    for (const Due& d : due) {
      const auto it = attempts.find(d.key);
      if (it == attempts.end()) continue;
      it->second.next_scan = ended + CheckpointScanInterval(d.took * scanned);
      if (d.newest <= it->second.checkpoint) continue;
      it->second.checkpoint = d.newest;
      newer(d.key, d.newest);
    }
  }
  Clock::time_point next = Clock::time_point::max();
  for (const auto& [key, attempt] : attempts) {
    if (eligible(attempt) && !attempt.job_dir.empty()) next = std::min(next, attempt.next_scan);
  }
  return next;
}

}  // namespace allot::exec
