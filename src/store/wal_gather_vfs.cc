#include "store/wal_gather_vfs.h"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

namespace allot::store::sqlite {

namespace {

constexpr char kName[] = "allot-wal-gather";
constexpr std::size_t kFrameHeader = 24;  // SQLite's WAL frame header
// Gathered bytes after which they are written anyway (a transaction of thousands of pages).
constexpr std::size_t kMaxGathered = 4 << 20;
// The most one write hands to the default VFS: the unix VFS keeps only the low 17 bits of a
// write's size (SQLite's own writes are pages, at most 64 KiB), so a write of 128 KiB would
// write nothing and report a full disk.
constexpr std::size_t kMaxWrite = 124 << 10;

std::atomic<std::uint64_t> g_wal_writes{0};
std::atomic<std::uint64_t> g_flushes{0};

sqlite3_vfs* Root(sqlite3_vfs* vfs) { return static_cast<sqlite3_vfs*>(vfs->pAppData); }

// Our file object, in the memory SQLite allocates for one (szOsFile), followed by the default
// VFS's own file object, which does the real work.
struct GatherFile {
  sqlite3_file base;  // first: SQLite sees a GatherFile as an sqlite3_file
  sqlite3_file* real = nullptr;
  bool wal = false;  // a WAL whose writes are gathered
  // WAL writes not yet handed to the kernel: `gathered` belongs at `gathered_at`.
  std::string gathered;
  sqlite3_int64 gathered_at = 0;
  bool commit_frame_next = false;  // the last write was a commit frame's header
};

constexpr std::size_t kRealOffset = (sizeof(GatherFile) + 15) & ~std::size_t{15};

GatherFile* Of(sqlite3_file* file) { return reinterpret_cast<GatherFile*>(file); }
const sqlite3_io_methods* Real(GatherFile* f) { return f->real->pMethods; }

// Hands what was gathered to the kernel. What a failed write left unwritten stays gathered, to be
// written by the next flush: SQLite believes those bytes written (it was told so by an xWrite
// that succeeded), so the file must never lose them while SQLite goes on.
int Flush(GatherFile* f) {
  f->commit_frame_next = false;
  std::size_t done = 0;
  int rc = SQLITE_OK;
  while (done < f->gathered.size() && rc == SQLITE_OK) {
    const std::size_t n = std::min(kMaxWrite, f->gathered.size() - done);
    g_flushes.fetch_add(1, std::memory_order_relaxed);
    rc = Real(f)->xWrite(f->real, f->gathered.data() + done, static_cast<int>(n),
                         f->gathered_at + static_cast<sqlite3_int64>(done));
    if (rc == SQLITE_OK) done += n;
  }
  f->gathered.erase(0, done);
  f->gathered_at += static_cast<sqlite3_int64>(done);
  if (f->gathered.empty() && f->gathered.capacity() > kMaxGathered) f->gathered.shrink_to_fit();
  return rc;
}

// A frame header whose second field (the database size after a commit) is not zero marks the
// last frame of a transaction.
bool IsCommitFrameHeader(const void* data, int amount) {
  if (amount != static_cast<int>(kFrameHeader)) return false;
  const auto* b = static_cast<const unsigned char*>(data);
  return (b[4] | b[5] | b[6] | b[7]) != 0;
}

int Close(sqlite3_file* file) {
  GatherFile* f = Of(file);
  int rc = Flush(f);
  const int closed = Real(f)->xClose(f->real);
  if (rc == SQLITE_OK) rc = closed;
  f->~GatherFile();
  return rc;
}

int Read(sqlite3_file* file, void* data, int amount, sqlite3_int64 offset) {
  GatherFile* f = Of(file);
  const int rc = Flush(f);
  if (rc != SQLITE_OK) return rc;
  return Real(f)->xRead(f->real, data, amount, offset);
}

int Write(sqlite3_file* file, const void* data, int amount, sqlite3_int64 offset) {
  GatherFile* f = Of(file);
  if (!f->wal) return Real(f)->xWrite(f->real, data, amount, offset);
  g_wal_writes.fetch_add(1, std::memory_order_relaxed);
  const bool follows = offset == f->gathered_at + static_cast<sqlite3_int64>(f->gathered.size());
  if (!f->gathered.empty() && (!follows || f->gathered.size() >= kMaxGathered)) {
    const int rc = Flush(f);
    if (rc != SQLITE_OK) return rc;  // this write failed too: nothing of it is kept
  }
  if (f->gathered.empty()) f->gathered_at = offset;
  f->gathered.append(static_cast<const char*>(data), static_cast<std::size_t>(amount));
  const bool commit_page = f->commit_frame_next;
  f->commit_frame_next = IsCommitFrameHeader(data, amount);
  return commit_page ? Flush(f) : SQLITE_OK;
}

int Truncate(sqlite3_file* file, sqlite3_int64 size) {
  GatherFile* f = Of(file);
  const int rc = Flush(f);
  return rc != SQLITE_OK ? rc : Real(f)->xTruncate(f->real, size);
}

int Sync(sqlite3_file* file, int flags) {
  GatherFile* f = Of(file);
  const int rc = Flush(f);
  return rc != SQLITE_OK ? rc : Real(f)->xSync(f->real, flags);
}

int FileSize(sqlite3_file* file, sqlite3_int64* size) {
  GatherFile* f = Of(file);
  const int rc = Flush(f);
  return rc != SQLITE_OK ? rc : Real(f)->xFileSize(f->real, size);
}

int Lock(sqlite3_file* file, int level) { return Real(Of(file))->xLock(Of(file)->real, level); }
int Unlock(sqlite3_file* file, int level) { return Real(Of(file))->xUnlock(Of(file)->real, level); }
int CheckReservedLock(sqlite3_file* file, int* out) {
  return Real(Of(file))->xCheckReservedLock(Of(file)->real, out);
}

int FileControl(sqlite3_file* file, int op, void* arg) {
  GatherFile* f = Of(file);
  const int rc = Flush(f);  // some controls (size hints, chunk sizes) act on the file as written
  return rc != SQLITE_OK ? rc : Real(f)->xFileControl(f->real, op, arg);
}

int SectorSize(sqlite3_file* file) { return Real(Of(file))->xSectorSize(Of(file)->real); }
int DeviceCharacteristics(sqlite3_file* file) {
  return Real(Of(file))->xDeviceCharacteristics(Of(file)->real);
}

// Shared memory and memory mapping are the main database file's, passed through. SQLite calls
// them only when the real file's methods are of a version that has them (checked at open).
int ShmMap(sqlite3_file* file, int region, int size, int extend, void volatile** out) {
  return Real(Of(file))->xShmMap(Of(file)->real, region, size, extend, out);
}
int ShmLock(sqlite3_file* file, int offset, int n, int flags) {
  return Real(Of(file))->xShmLock(Of(file)->real, offset, n, flags);
}
void ShmBarrier(sqlite3_file* file) { Real(Of(file))->xShmBarrier(Of(file)->real); }
int ShmUnmap(sqlite3_file* file, int remove) {
  return Real(Of(file))->xShmUnmap(Of(file)->real, remove);
}
int Fetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
  return Real(Of(file))->xFetch(Of(file)->real, offset, amount, out);
}
int Unfetch(sqlite3_file* file, sqlite3_int64 offset, void* page) {
  return Real(Of(file))->xUnfetch(Of(file)->real, offset, page);
}

const sqlite3_io_methods kMethods = {
    3,
    Close,
    Read,
    Write,
    Truncate,
    Sync,
    FileSize,
    Lock,
    Unlock,
    CheckReservedLock,
    FileControl,
    SectorSize,
    DeviceCharacteristics,
    ShmMap,
    ShmLock,
    ShmBarrier,
    ShmUnmap,
    Fetch,
    Unfetch,
};

int Open(sqlite3_vfs* vfs, const char* name, sqlite3_file* file, int flags, int* out_flags) {
  auto* f = new (file) GatherFile();
  f->real = reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(file) + kRealOffset);
  std::memset(f->real, 0, static_cast<std::size_t>(Root(vfs)->szOsFile));
  const int rc = Root(vfs)->xOpen(Root(vfs), name, f->real, flags, out_flags);
  // Our methods need the real file's of version 3 (all the unix VFS's are); SQLite calls xClose
  // after a failed open only when pMethods is set, so it is set only on success.
  if (rc != SQLITE_OK || f->real->pMethods == nullptr || f->real->pMethods->iVersion < 3) {
    if (rc == SQLITE_OK && f->real->pMethods != nullptr) f->real->pMethods->xClose(f->real);
    f->~GatherFile();
    file->pMethods = nullptr;
    return rc != SQLITE_OK ? rc : SQLITE_CANTOPEN;
  }
  // A WAL is gathered only under power-safe overwrite (the unix VFS's default; a `psow=0` URI
  // or build turns it off). Without it SQLite pads a commit to a sector boundary and writes the
  // last piece of the padding after the commit's sync, where nothing of ours writes it before the
  // commit is published.
  const bool psow = sqlite3_uri_boolean(
      name, "psow",
      (f->real->pMethods->xDeviceCharacteristics(f->real) & SQLITE_IOCAP_POWERSAFE_OVERWRITE) != 0);
  f->wal = (flags & SQLITE_OPEN_WAL) != 0 && psow;
  f->base.pMethods = &kMethods;
  return SQLITE_OK;
}

int Delete(sqlite3_vfs* vfs, const char* name, int sync_dir) {
  return Root(vfs)->xDelete(Root(vfs), name, sync_dir);
}
int Access(sqlite3_vfs* vfs, const char* name, int flags, int* out) {
  return Root(vfs)->xAccess(Root(vfs), name, flags, out);
}
int FullPathname(sqlite3_vfs* vfs, const char* name, int size, char* out) {
  return Root(vfs)->xFullPathname(Root(vfs), name, size, out);
}
void* DlOpen(sqlite3_vfs* vfs, const char* name) { return Root(vfs)->xDlOpen(Root(vfs), name); }
void DlError(sqlite3_vfs* vfs, int size, char* out) { Root(vfs)->xDlError(Root(vfs), size, out); }
void (*DlSym(sqlite3_vfs* vfs, void* handle, const char* symbol))() {
  return Root(vfs)->xDlSym(Root(vfs), handle, symbol);
}
void DlClose(sqlite3_vfs* vfs, void* handle) { Root(vfs)->xDlClose(Root(vfs), handle); }
int Randomness(sqlite3_vfs* vfs, int size, char* out) {
  return Root(vfs)->xRandomness(Root(vfs), size, out);
}
int Sleep(sqlite3_vfs* vfs, int micros) { return Root(vfs)->xSleep(Root(vfs), micros); }
int CurrentTime(sqlite3_vfs* vfs, double* out) { return Root(vfs)->xCurrentTime(Root(vfs), out); }
int GetLastError(sqlite3_vfs* vfs, int size, char* out) {
  return Root(vfs)->xGetLastError(Root(vfs), size, out);
}
int CurrentTimeInt64(sqlite3_vfs* vfs, sqlite3_int64* out) {
  return Root(vfs)->xCurrentTimeInt64(Root(vfs), out);
}

}  // namespace

const char* WalGatherVfsName() {
  static std::once_flag once;
  static sqlite3_vfs vfs;
  std::call_once(once, [] {
    // Before SQLite initializes (sqlite3_vfs_find does): without memory statistics, which no
    // one reads here, SQLite's allocations take no global mutex.
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3_vfs* root = sqlite3_vfs_find(nullptr);
    vfs = sqlite3_vfs{};
    vfs.iVersion = 2;
    vfs.szOsFile = static_cast<int>(kRealOffset) + root->szOsFile;
    vfs.mxPathname = root->mxPathname;
    vfs.zName = kName;
    vfs.pAppData = root;
    vfs.xOpen = Open;
    vfs.xDelete = Delete;
    vfs.xAccess = Access;
    vfs.xFullPathname = FullPathname;
    vfs.xDlOpen = DlOpen;
    vfs.xDlError = DlError;
    vfs.xDlSym = DlSym;
    vfs.xDlClose = DlClose;
    vfs.xRandomness = Randomness;
    vfs.xSleep = Sleep;
    vfs.xCurrentTime = CurrentTime;
    vfs.xGetLastError = GetLastError;
    vfs.xCurrentTimeInt64 = CurrentTimeInt64;
    // Not checked here: had it failed, opening a database with this VFS fails, and says so.
    (void)sqlite3_vfs_register(&vfs, /*makeDflt=*/0);
  });
  return kName;
}

WalGatherCounters WalGatherCountersNow() {
  return {.wal_writes = g_wal_writes.load(std::memory_order_relaxed),
          .flushes = g_flushes.load(std::memory_order_relaxed)};
}

}  // namespace allot::store::sqlite
