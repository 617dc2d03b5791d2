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

// Runs this program again (the same pid, argv and environment) with glibc's malloc on transparent
// huge pages (GLIBC_TUNABLES=glibc.malloc.hugetlb=1), which glibc reads only at start: a server's
// start with a million stored jobs spends a large part of its time in page faults, and huge pages
// take one fault per 2 MiB instead of per 4 KiB (docs/benchmarks.md). In the program run again,
// it puts GLIBC_TUNABLES back as it was, so that the processes it starts (jobs) do not inherit
// it. Returns without running again when the caller set glibc.malloc.hugetlb itself, or when the
// exec fails (the program then runs with glibc's defaults).
void RunAgainWithHugePageMalloc(char** argv);

}  // namespace allot::env
