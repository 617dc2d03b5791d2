#pragma once

// Process identity. A pid alone does not name a process: the kernel recycles it. A pid together
// with the process's start time (field 22 of /proc/<pid>/stat, clock ticks since boot) does, so a
// process is signalled only once both match what was recorded when it started.

#include <sys/types.h>

#include <cstdint>
#include <optional>

namespace allot::env {

// The start time of `pid`; nullopt if there is no such process or it already exited (a zombie).
std::optional<std::uint64_t> RunningStartTime(pid_t pid);

// The same, zombies included.
std::optional<std::uint64_t> StartTime(pid_t pid);

// The process `pid` runs and is the one that started at `start_time`.
bool SameProcessRunning(pid_t pid, std::uint64_t start_time);

}  // namespace allot::env
