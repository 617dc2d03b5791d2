#pragma once

// A SQLite VFS over the platform's default one that gathers a transaction's writes to its WAL
// and hands them to the kernel as one write. SQLite writes each WAL frame as two writes, a
// 24-byte header and a page, so a commit of 14 pages made 28 pwrite calls; in the VMs Allot is
// measured on, system calls were the store writer's main cost (docs/benchmarks.md, "The commit's
// system calls").
//
// What is gathered is written when the transaction's commit frame is complete, and before
// anything that needs the file as written (a sync, a read, its size, a truncation, a file control,
// closing). A write that fails leaves what it did not write gathered, to be written by the next
// flush, and fails the call that triggered it, so the transaction fails as it would have.
//
// The envelope in which nothing changes for SQLite or for a crash (reviewed against SQLite 3.40's
// wal.c; the store keeps to it):
//  - synchronous=FULL or EXTRA. The commit's sync then writes whatever is still gathered before
//    the WAL index publishes the commit. (NORMAL and OFF publish without a sync: the write at the
//    commit frame covers an ordinary commit, but not the frame headers SQLite rewrites after it
//    when a transaction spilled pages and wrote them again.)
//  - Power-safe overwrite, the unix VFS's default. A WAL opened without it (a `psow=0` URI, or a
//    build without it) is not gathered: SQLite then pads a commit to a sector boundary and writes
//    the last piece after the sync. SQLITE_FCNTL_POWERSAFE_OVERWRITE, which turns it off at run
//    time, is not used by the store.
#include <cstdint>

namespace allot::store::sqlite {

// The VFS's name for sqlite3_open_v2, registered (not as the default) on the first call. That
// call also turns SQLite's memory statistics off, when it comes before SQLite initializes (the
// store's first use of SQLite): none are read, and they cost a global mutex per allocation.
const char* WalGatherVfsName();

// What the VFS did since the process started, for tests and benchmarks.
struct WalGatherCounters {
  std::uint64_t wal_writes = 0;  // writes SQLite asked for on WAL files
  std::uint64_t flushes = 0;     // writes handed to the kernel for them
};
WalGatherCounters WalGatherCountersNow();

}  // namespace allot::store::sqlite
