#pragma once

// Process identity. A pid alone does not name a process: the kernel recycles it. A pid together
// with the process's start time (field 22 of /proc/<pid>/stat, clock ticks since boot) does, so a
// process is signalled only once both match what was recorded when it started.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "common/status.h"

namespace allot::env {

// The start time of `pid`; nullopt if there is no such process or it already exited (a zombie).
std::optional<std::uint64_t> RunningStartTime(pid_t pid);

// The same, zombies included.
std::optional<std::uint64_t> StartTime(pid_t pid);

// The process `pid` runs and is the one that started at `start_time`.
bool SameProcessRunning(pid_t pid, std::uint64_t start_time);

// Every process /proc lists (in its PID namespace), in pid order.
std::vector<pid_t> AllProcesses();

// Every process whose /proc entry belongs to `uid` (its effective user), in pid order: a sandboxed
// share's processes, each share running as a uid of its own. A process that exits meanwhile is
// left out.
std::vector<pid_t> ProcessesOfUser(uid_t uid);

// Runs this program again (the same pid, argv and environment) with glibc's malloc on transparent
// huge pages (GLIBC_TUNABLES=glibc.malloc.hugetlb=1), which glibc reads only at start: a server's
// start with a million stored jobs spends a large part of its time in page faults, and huge pages
// take one fault per 2 MiB instead of per 4 KiB (docs/benchmarks.md). In the program run again,
// it puts GLIBC_TUNABLES back as it was, so that the processes it starts (jobs) do not inherit
// it. Returns without running again when the caller set glibc.malloc.hugetlb itself, or when the
// exec fails (the program then runs with glibc's defaults).
void RunAgainWithHugePageMalloc(char** argv);

// Has glibc's malloc grow its heap 64 MiB beyond what an allocation needs (M_TOP_PAD), and keep as
// much free at the top when it gives memory back. A server adds records all the time: with
// glibc's default pad (128 KiB) its heap grows by small steps, each new page faults in on its own
// and huge pages are rarely used; 20,000 submissions took 7,800 page faults and 11% more server
// CPU time on the 2-core VM of docs/benchmarks.md, 15 faults with the pad. The pad is address
// space: memory is used only when touched. Leaves a glibc.malloc.top_pad the caller set alone.
// An error when malloc refused the setting (the process then runs with glibc's pad).
Status PadMallocHeap();

}  // namespace allot::env
