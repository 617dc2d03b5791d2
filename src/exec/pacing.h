#pragma once

// The pace of the periodic walks over a job's files (the disk check, the checkpoint scan): a
// job decides how many files there are, and so what each walk costs someone else's CPU.

#include <algorithm>
#include <chrono>

namespace allot::exec {

// How many times its own length the wait after a walk is, at least: a walk then takes at most a
// twentieth of a CPU, however many files a job makes.
inline constexpr int kWalkShare = 20;

// The wait before the next walk: `base`, or kWalkShare times what the last walk `took` when that
// is longer, at most `longest`.
inline std::chrono::steady_clock::duration PacedInterval(
    std::chrono::steady_clock::duration took, std::chrono::steady_clock::duration base,
    std::chrono::steady_clock::duration longest) {
  return std::clamp(took * kWalkShare, base, std::max(base, longest));
}

// Both executors scan the jobs' checkpoint directories for the newest checkpoint's time every
// 500 ms, or less often while a scan takes long, at least every 30 s.
inline constexpr std::chrono::milliseconds kCheckpointScan{500};
inline std::chrono::steady_clock::duration CheckpointScanInterval(
    std::chrono::steady_clock::duration took) {
  return PacedInterval(took, kCheckpointScan, std::chrono::seconds(30));
}

}  // namespace allot::exec
