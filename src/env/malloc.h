#pragma once

// The allocator of `allot` and of the server benchmark. Release and debug builds link gperftools'
// tcmalloc (libtcmalloc-minimal4): the server's HTTP loop allocates about 370 times per
// submission, and glibc's malloc spent a fifth of the loop's instructions on it; with tcmalloc a
// submission cost 13-22% less server CPU time (docs/benchmarks.md, "The allocator"). Sanitizer
// builds keep glibc's malloc, which the sanitizers replace.

#include <cstdint>

#include "common/status.h"

namespace allot::env {

// Whether malloc is tcmalloc in this build.
bool TcmallocLinked();

// Sets the allocator up for a long-running server with many small records, first thing in
// main(). With tcmalloc: its memory comes from the system in 2 MiB-aligned pieces marked for
// transparent huge pages (a start with a million stored jobs touches about a gigabyte, and took
// 57-79% longer in 4 KiB pages without them). With glibc's malloc:
// RunAgainWithHugePageMalloc, then PadMallocHeap (env/process.h). An error only when a setting
// did not take: the server then runs with the allocator's defaults.
Status PrepareServerMalloc(char** argv);

// Bytes the program holds allocated (not counting the allocator's free lists).
std::int64_t HeapInUse();

// Gives the allocator's free memory back to the system (glibc: malloc_trim).
void ReleaseFreeMemory();

}  // namespace allot::env
