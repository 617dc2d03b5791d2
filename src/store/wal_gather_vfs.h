#pragma once

// A SQLite VFS over the platform's default one that gathers a transaction's writes to its WAL
// and hands them to the kernel as one write. SQLite writes each WAL frame as two writes, a
// 24-byte header and a page, so a commit of 14 pages made 28 pwrite calls; in the VMs Allot is
// measured on, system calls were the store writer's main cost (docs/benchmarks.md, "The commit's
// system calls").
//
// What is gathered is written when the transaction's commit frame is complete, and before
// anything that needs the file as written (a sync, a read, its size, a truncation, closing).
// So nothing changes for SQLite or for a crash: the commit's sync and the publication of its
// frames in the WAL index both come after its last write, which is when the gathered writes
// reach the kernel, and a write not yet synced is lost in a crash either way. A failed write
// fails the xWrite (or xSync, xRead...) that triggered it, so the transaction fails as it would
// have.

#include <cstdint>

namespace allot::store::sqlite {

// The VFS's name for sqlite3_open_v2, registered (not as the default) on the first call.
const char* WalGatherVfsName();

// What the VFS did since the process started, for tests and benchmarks.
struct WalGatherCounters {
  std::uint64_t wal_writes = 0;  // writes SQLite asked for on WAL files
  std::uint64_t flushes = 0;     // writes handed to the kernel for them
};
WalGatherCounters WalGatherCountersNow();

}  // namespace allot::store::sqlite
