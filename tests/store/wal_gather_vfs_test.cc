#include "store/wal_gather_vfs.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <string>

#include "store/support/raw_sql.h"
#include "store/support/scratch_dir.h"

namespace allot::store::sqlite {
namespace {

using testing::ScratchDir;

// One connection through the gathering VFS, in WAL mode.
class Db {
 public:
  Db(const std::string& path, const std::string& synchronous) {
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db_,
                              SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
                              WalGatherVfsName()),
              SQLITE_OK);
    sqlite3_busy_timeout(db_, 5000);
    Exec("PRAGMA journal_mode=WAL");
    Exec("PRAGMA synchronous=" + synchronous);
  }
  ~Db() { sqlite3_close_v2(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  int Run(const std::string& sql) {
    return sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  }
  void Exec(const std::string& sql) {
    EXPECT_EQ(Run(sql), SQLITE_OK) << sql << ": " << sqlite3_errmsg(db_);
  }
  std::string Text(const std::string& sql) { return testing::QueryText(db_, sql); }

 private:
  sqlite3* db_ = nullptr;
};

// `rows` rows of 1,000 bytes each, in one transaction.
std::string InsertRows(int first, int rows) {
  return "WITH RECURSIVE n(k) AS (SELECT " + std::to_string(first) +
         " UNION ALL SELECT k + 1 FROM n WHERE k < " + std::to_string(first + rows - 1) +
         ") INSERT INTO t SELECT k, zeroblob(1000) FROM n";
}

TEST(WalGatherVfs, ATransactionsFramesReachTheKernelAsOneWrite) {
  ScratchDir dir;
  Db db(dir.File("a.db"), "FULL");
  db.Exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)");
  const WalGatherCounters before = WalGatherCountersNow();
  db.Exec(InsertRows(1, 40));  // about 10 pages with their B-tree pages: 20 writes or more
  const WalGatherCounters after = WalGatherCountersNow();
  EXPECT_GE(after.wal_writes - before.wal_writes, 20U);
  EXPECT_EQ(after.flushes - before.flushes, 1U);
}

// The VFS configures SQLite before it initializes: without memory statistics, whose global mutex
// every allocation of the store's writer took (docs/benchmarks.md). SQLite counts no memory then.
TEST(WalGatherVfs, SqliteKeepsNoMemoryStatistics) {
  ScratchDir dir;
  Db db(dir.File("a.db"), "FULL");
  db.Exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)");
  db.Exec(InsertRows(1, 40));
  EXPECT_EQ(sqlite3_memory_used(), 0);
}

// The unix VFS writes at most 128 KiB - 1 bytes at once: larger gathers go in several writes.
TEST(WalGatherVfs, ATransactionOfMegabytesIsWrittenWhole) {
  ScratchDir dir;
  {
    Db db(dir.File("a.db"), "FULL");
    db.Exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)");
    const WalGatherCounters before = WalGatherCountersNow();
    db.Exec(InsertRows(1, 3000));  // 3 MB, well within the page cache
    EXPECT_GE(WalGatherCountersNow().flushes - before.flushes, 24U);
  }
  Db again(dir.File("a.db"), "FULL");
  EXPECT_EQ(again.Text("SELECT count(*) FROM t"), "3000");
  EXPECT_EQ(again.Text("PRAGMA integrity_check"), "ok");
}

// Ordinary commits in every sync mode: in NORMAL and OFF no sync follows the commit, so what was
// gathered must be written when the commit frame is complete, before the WAL index shows the
// commit to others.
TEST(WalGatherVfs, AnotherConnectionSeesAnOrdinaryCommitAtOnceInEverySyncMode) {
  for (const char* mode : {"FULL", "NORMAL", "OFF"}) {
    SCOPED_TRACE(mode);
    ScratchDir dir;
    Db writer(dir.File("a.db"), mode);
    writer.Exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)");
    Db reader(dir.File("a.db"), mode);
    for (int i = 0; i < 5; ++i) {
      writer.Exec(InsertRows(i * 10 + 1, 10));
      EXPECT_EQ(reader.Text("SELECT count(*) FROM t"), std::to_string((i + 1) * 10));
    }
  }
}

TEST(WalGatherVfs, ATransactionLargerThanThePageCacheReadsBackWhatItSpilled) {
  ScratchDir dir;
  {
    Db db(dir.File("a.db"), "FULL");
    db.Exec("PRAGMA cache_size=10");  // pages: the transaction spills frames and reads them back
    db.Exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)");
    db.Exec("BEGIN");
    db.Exec(InsertRows(1, 3000));
    db.Exec("UPDATE t SET v = zeroblob(900) WHERE k % 7 = 0");
    db.Exec("COMMIT");
    EXPECT_EQ(db.Text("PRAGMA integrity_check"), "ok");
  }
  Db again(dir.File("a.db"), "FULL");
  EXPECT_EQ(again.Text("SELECT count(*) FROM t WHERE length(v) = 900"), "428");
  EXPECT_EQ(again.Text("SELECT count(*) FROM t"), "3000");
}

// Without power-safe overwrite SQLite pads each commit to a sector boundary and writes the last
// piece of the padding after the commit's sync: such a WAL is not gathered. Gathered, another
// connection read that piece's old bytes once the WAL had started over, and its checkpoint
// copied them into the database (a row 820 bytes long instead of 900; found in review).
TEST(WalGatherVfs, AWalWithoutPowersafeOverwriteIsWrittenAsSqliteWritesIt) {
  ScratchDir dir;
  const std::string uri = "file:" + dir.File("a.db") + "?psow=0";
  {
    Db writer(uri, "FULL");
    writer.Exec("PRAGMA wal_autocheckpoint=0");
    writer.Exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)");
    writer.Exec(
        "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 400) "
        "INSERT INTO t SELECT k, printf('%.900c', 'o') FROM n");
    writer.Exec("UPDATE t SET v = printf('%.900c', 'p')");  // a WAL full of older frames
    writer.Text("PRAGMA wal_checkpoint(PASSIVE)");          // so the next commit starts it over
    Db reader(uri, "FULL");
    Db checkpointer(uri, "FULL");
    const WalGatherCounters before = WalGatherCountersNow();
    writer.Exec("UPDATE t SET v = printf('%.900c', 'N') WHERE k = 400");
    EXPECT_EQ(WalGatherCountersNow().wal_writes, before.wal_writes);  // passed through
    EXPECT_EQ(reader.Text("SELECT count(*) FROM t WHERE length(v) = 900 AND "
                          "v = printf('%.900c', CASE WHEN k = 400 THEN 'N' ELSE 'p' END)"),
              "400");
    checkpointer.Text("PRAGMA wal_checkpoint(PASSIVE)");
  }
  Db again(dir.File("a.db"), "FULL");
  EXPECT_EQ(again.Text("SELECT count(*) FROM t WHERE length(v) = 900 AND "
                       "v = printf('%.900c', CASE WHEN k = 400 THEN 'N' ELSE 'p' END)"),
            "400");
  EXPECT_EQ(again.Text("PRAGMA integrity_check"), "ok");
}

// Restores the file size limit (and SIGXFSZ) at scope end.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = SIG_DFL;
};

// A write that fails when the gathered frames reach the kernel fails the commit, and the
// database keeps every earlier commit and nothing of the failed one.
TEST(WalGatherVfs, AWriteThatFailsLateFailsItsCommitAndLosesNothingEarlier) {
  ScratchDir dir;
  const std::string path = dir.File("a.db");
  {
    Db db(path, "FULL");
    db.Exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)");
    db.Exec(InsertRows(1, 10));
    const auto wal = std::filesystem::file_size(path + "-wal");
    {
      FileSizeLimit limit(static_cast<rlim_t>(wal + 8192));
      EXPECT_NE(db.Run(InsertRows(11, 200)), SQLITE_OK);
    }
    EXPECT_EQ(db.Text("SELECT count(*) FROM t"), "10");
    db.Exec(InsertRows(11, 5));  // the connection goes on once writes succeed again
  }
  Db again(path, "FULL");
  EXPECT_EQ(again.Text("SELECT count(*) FROM t"), "15");
  EXPECT_EQ(again.Text("PRAGMA integrity_check"), "ok");
}

}  // namespace
}  // namespace allot::store::sqlite
