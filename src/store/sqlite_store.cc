#include "store/sqlite_store.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

#include "store/sqlite_handle.h"
#include "store/wal_gather_vfs.h"

namespace allot::store {

namespace {

constexpr int kBusyTimeoutMs = 5000;
// WAL frames (pages) after which the checkpointer copies the WAL back into the database
// (SQLite's own automatic checkpoint, in the commit, waits for 1,000), and after which the writer
// does it itself because the checkpointer fell behind.
constexpr int kCheckpointFrames = 2000;
constexpr int kWriterCheckpointFrames = 20000;
// The checkpointer copies again until fewer frames than this are left to the writer.
constexpr int kCatchUpFrames = 64;

// The store (its Impl) whose writer runs on this thread, so that Close() from a done callback
// does not join itself.
thread_local const void* t_writer_of = nullptr;

Status Unavailable(std::string message) { return {StatusCode::kUnavailable, std::move(message)}; }

struct Pending {
  Batch batch;
  std::function<void(const Status&)> done;
};

}  // namespace

struct SqliteStore::Impl {
  SqliteOptions options;

  // Owned by the writer thread while it runs (and by Open/Close before and after).
  sqlite::Connection write_db;
  sqlite::Statement begin, commit, rollback, upsert, erase;

  std::mutex read_mu;
  sqlite::Connection read_db;                                // guarded by read_mu
  sqlite::Statement load, scan, get, range_asc, range_desc;  // guarded by read_mu

  std::mutex mu;
  std::condition_variable wake;
  std::deque<Pending> queue;  // guarded by mu
  bool closing = false;       // guarded by mu
  Status sticky;              // guarded by mu: the failure every batch gets until Resume()

  std::mutex close_mu;
  bool closed = false;  // guarded by close_mu
  std::thread writer;

  std::atomic<std::uint64_t> transactions{0};
  std::atomic<std::uint64_t> batches{0};
  std::atomic<std::uint64_t> failed{0};

  // The checkpointer: a connection and a thread of its own, woken by the writer's WAL hook.
  sqlite::Connection checkpoint_db;  // the checkpointer thread's
  std::thread checkpointer;
  std::mutex checkpoint_mu;
  std::condition_variable checkpoint_wake;
  bool checkpoint_wanted = false;   // guarded by checkpoint_mu
  bool checkpoint_closing = false;  // guarded by checkpoint_mu
  std::atomic<bool> checkpoint_running{false};
  std::atomic<bool> catch_up{false};  // the checkpointer is done: the writer copies the rest
  std::atomic<std::uint64_t> checkpoints{0};
  std::atomic<std::uint64_t> failed_checkpoints{0};

  ~Impl() { CloseConnections(); }

  Status OpenWriter();
  Status OpenReader();
  Status OpenCheckpointer();
  void CheckpointLoop();
  void StopCheckpointer();
  static int OnWalCommit(void* impl, sqlite3* db, const char* name, int frames);
  void CloseConnections();
  void WriterLoop();
  Status Apply(const std::vector<Pending>& group, bool* wrote);
  Status ApplyOps(const std::vector<Pending>& group);
  Status StepDone(sqlite::Statement& stmt, std::string_view what);
};

Status SqliteStore::Impl::StepDone(sqlite::Statement& stmt, std::string_view what) {
  const int rc = stmt.Step();
  Status status = rc == SQLITE_DONE ? Status::Ok() : sqlite::Error(write_db.get(), rc, what);
  stmt.Reset();
  return status;
}

Status SqliteStore::Impl::OpenWriter() {
  Result<sqlite::Connection> db = sqlite::Connection::Open(
      options.path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
      sqlite::WalGatherVfsName());
  if (!db.ok()) return db.status();
  write_db = std::move(db).value();
  sqlite3_busy_timeout(write_db.get(), kBusyTimeoutMs);

  Result<std::string> mode = write_db.QueryText("PRAGMA journal_mode=WAL");
  if (!mode.ok()) return mode.status();
  if (mode.value() != "wal") {
    return FailedPrecondition("sqlite: " + options.path +
                              ": WAL mode unavailable (journal_mode=" + mode.value() + ")");
  }
  ALLOT_RETURN_IF_ERROR(write_db.Exec("PRAGMA synchronous=FULL"));
  // The WAL-gathering VFS keeps its promise only with a sync before each commit is published.
  Result<std::string> synchronous = write_db.QueryText("PRAGMA synchronous");
  if (!synchronous.ok()) return synchronous.status();
  if (synchronous.value() != "2") {
    return FailedPrecondition("sqlite: " + options.path + ": synchronous=FULL did not take (" +
                              synchronous.value() + ")");
  }
  // Checkpoints run on the checkpointer's thread, not in the writer's commits (this hook
  // replaces SQLite's automatic checkpoint).
  sqlite3_wal_hook(write_db.get(), &Impl::OnWalCommit, this);
  // The writer reads the B-tree's pages through mmap; its page cache holds what it wrote since
  // the last checkpoint (those pages are read from the WAL otherwise: about 1,000 pages between
  // checkpoints, so 8 MiB). Not more: SQLite walks the cache's hash table at every commit, and
  // with 64 MiB that walk was 15 % of the writer's time (docs/benchmarks.md).
  ALLOT_RETURN_IF_ERROR(write_db.Exec("PRAGMA cache_size=-8192"));
  ALLOT_RETURN_IF_ERROR(write_db.Exec("PRAGMA mmap_size=1073741824"));
  // The schema is created in one transaction, so a crash during the first open leaves either no
  // schema or all of it. `records` is a rowid table: a job's document is kilobytes, and SQLite
  // meant WITHOUT ROWID for small rows (measured: 20% more submissions/s at 80k jobs).
  const std::string version_text = std::to_string(kSchemaVersion);
  ALLOT_RETURN_IF_ERROR(write_db.Exec(
      "BEGIN IMMEDIATE;"
      "CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"
      "CREATE TABLE IF NOT EXISTS records(kind INTEGER, key TEXT, value TEXT NOT NULL,"
      " PRIMARY KEY(kind, key));"
      "INSERT OR IGNORE INTO meta(name, value) VALUES('schema_version', '" +
      version_text +
      "');"
      "COMMIT;"));
  Result<std::string> version =
      write_db.QueryText("SELECT value FROM meta WHERE name = 'schema_version'");
  if (!version.ok()) return version.status();
  if (version.value() != version_text) {
    return FailedPrecondition("sqlite: " + options.path + ": schema_version " + version.value() +
                              ", this build knows " + std::to_string(kSchemaVersion));
  }

  struct {
    sqlite::Statement* stmt;
    const char* sql;
  } const statements[] = {
      {&begin, "BEGIN IMMEDIATE"},
      {&commit, "COMMIT"},
      {&rollback, "ROLLBACK"},
      {&upsert,
       "INSERT INTO records(kind, key, value) VALUES(?1, ?2, ?3)"
       " ON CONFLICT(kind, key) DO UPDATE SET value = excluded.value"},
      {&erase, "DELETE FROM records WHERE kind = ?1 AND key = ?2"},
  };
  for (const auto& s : statements) {
    Result<sqlite::Statement> stmt = sqlite::Statement::Prepare(write_db.get(), s.sql);
    if (!stmt.ok()) return stmt.status();
    *s.stmt = std::move(stmt).value();
  }
  return Status::Ok();
}

Status SqliteStore::Impl::OpenReader() {
  Result<sqlite::Connection> db = sqlite::Connection::Open(
      options.path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, sqlite::WalGatherVfsName());
  if (!db.ok()) return db.status();
  read_db = std::move(db).value();
  sqlite3_busy_timeout(read_db.get(), kBusyTimeoutMs);
  Result<sqlite::Statement> l = sqlite::Statement::Prepare(
      read_db.get(), "SELECT key, value FROM records WHERE kind = ?1 ORDER BY key");
  if (!l.ok()) return l.status();
  load = std::move(l).value();
  // In rowid order, reading the table front to back: in key order each row of a large kind is a
  // seek through the key index to a random page (3.4 s against 0.8 s for 1M jobs, measured).
  Result<sqlite::Statement> sc = sqlite::Statement::Prepare(
      read_db.get(), "SELECT key, value FROM records NOT INDEXED WHERE kind = ?1");
  if (!sc.ok()) return sc.status();
  scan = std::move(sc).value();
  Result<sqlite::Statement> g = sqlite::Statement::Prepare(
      read_db.get(), "SELECT value FROM records WHERE kind = ?1 AND key = ?2");
  if (!g.ok()) return g.status();
  get = std::move(g).value();
  // The key index serves both directions; an empty upper bound is none.
  for (const bool descending : {false, true}) {
    Result<sqlite::Statement> r = sqlite::Statement::Prepare(
        read_db.get(), std::string("SELECT key, value FROM records WHERE kind = ?1 AND key >= ?2 "
                                   "AND (?3 = '' OR key < ?3) ORDER BY key ") +
                           (descending ? "DESC" : "ASC") + " LIMIT ?4");
    if (!r.ok()) return r.status();
    (descending ? range_desc : range_asc) = std::move(r).value();
  }
  return Status::Ok();
}

Status SqliteStore::Impl::OpenCheckpointer() {
  Result<sqlite::Connection> db = sqlite::Connection::Open(
      options.path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, sqlite::WalGatherVfsName());
  if (!db.ok()) return db.status();
  checkpoint_db = std::move(db).value();
  sqlite3_busy_timeout(checkpoint_db.get(), kBusyTimeoutMs);
  return checkpoint_db.Exec("PRAGMA synchronous=FULL");
}

// Runs on the writer thread after each commit, with the number of frames in the WAL. A
// checkpoint is never needed for durability (a commit is durable once the WAL is synced); it
// bounds the WAL. The WAL starts over only when the writer begins a transaction with the WAL
// wholly copied, which a checkpointer running beside a busy writer never sees: so the
// checkpointer copies the bulk, and the writer then copies the little the last transactions
// added, on its own thread, where nothing is appended meanwhile.
int SqliteStore::Impl::OnWalCommit(void* impl, sqlite3* db, const char* name, int frames) {
  auto* self = static_cast<Impl*>(impl);
  if (frames >= kWriterCheckpointFrames || self->catch_up.exchange(false)) {
    (void)sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  } else if (frames >= kCheckpointFrames && !self->checkpoint_running.load()) {
    {
      std::lock_guard<std::mutex> lock(self->checkpoint_mu);
      self->checkpoint_wanted = true;
    }
    self->checkpoint_wake.notify_one();
  }
  return SQLITE_OK;
}

// PASSIVE checkpoints: they copy what no reader still needs, never wait for the writer and never
// block it; again while the last round still found kCatchUpFrames new frames or more.
void SqliteStore::Impl::CheckpointLoop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(checkpoint_mu);
      checkpoint_wake.wait(lock, [this] { return checkpoint_wanted || checkpoint_closing; });
      if (checkpoint_closing) return;
      checkpoint_wanted = false;
      checkpoint_running = true;
    }
    int before = 0;  // frames copied before this round
    for (int round = 0; round < 8; ++round) {
      int in_wal = 0;
      int copied = 0;
      const int rc = sqlite3_wal_checkpoint_v2(checkpoint_db.get(), nullptr,
                                               SQLITE_CHECKPOINT_PASSIVE, &in_wal, &copied);
      (rc == SQLITE_OK ? checkpoints : failed_checkpoints).fetch_add(1, std::memory_order_relaxed);
      if (rc != SQLITE_OK || copied - before < kCatchUpFrames) break;
      before = copied;
    }
    catch_up = true;
    checkpoint_running = false;
  }
}

void SqliteStore::Impl::StopCheckpointer() {
  {
    std::lock_guard<std::mutex> lock(checkpoint_mu);
    checkpoint_closing = true;
  }
  checkpoint_wake.notify_one();
  if (checkpointer.joinable()) checkpointer.join();
}

void SqliteStore::Impl::CloseConnections() {
  checkpoint_db.Close();
  {
    std::lock_guard<std::mutex> lock(read_mu);
    load.Finalize();
    scan.Finalize();
    get.Finalize();
    range_asc.Finalize();
    range_desc.Finalize();
    read_db.Close();
  }
  // The write connection closes last: as the last connection it checkpoints and removes the WAL.
  begin.Finalize();
  commit.Finalize();
  rollback.Finalize();
  upsert.Finalize();
  erase.Finalize();
  write_db.Close();
}

Status SqliteStore::Impl::ApplyOps(const std::vector<Pending>& group) {
  for (const Pending& p : group) {
    for (const Op& op : p.batch.ops) {
      sqlite::Statement& stmt = op.value.has_value() ? upsert : erase;
      int rc = stmt.BindInt(1, static_cast<std::int64_t>(op.kind));
      if (rc == SQLITE_OK) rc = stmt.BindText(2, op.key);
      if (rc == SQLITE_OK && op.value.has_value()) rc = stmt.BindText(3, *op.value);
      if (rc != SQLITE_OK) {
        stmt.Reset();
        return sqlite::Error(write_db.get(), rc, "bind");
      }
      ALLOT_RETURN_IF_ERROR(StepDone(stmt, op.value.has_value() ? "put" : "delete"));
    }
  }
  return Status::Ok();
}

Status SqliteStore::Impl::Apply(const std::vector<Pending>& group, bool* wrote) {
  *wrote =
      std::any_of(group.begin(), group.end(), [](const Pending& p) { return !p.batch.empty(); });
  if (!*wrote) return Status::Ok();  // nothing to write; order is kept by the queue alone
  ALLOT_RETURN_IF_ERROR(StepDone(begin, "BEGIN IMMEDIATE"));
  Status status = ApplyOps(group);
  if (status.ok()) status = StepDone(commit, "COMMIT");
  if (!status.ok() && sqlite3_get_autocommit(write_db.get()) == 0) {
    // Still inside the transaction: undo all of it. (A failed ROLLBACK leaves nothing better to do;
    // SQLite rolls back by itself on the next BEGIN or on close.)
    (void)StepDone(rollback, "ROLLBACK");
  }
  return status;
}

void SqliteStore::Impl::WriterLoop() {
  t_writer_of = this;
  std::vector<Pending> group;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu);
      wake.wait(lock, [this] { return !queue.empty() || closing; });
      if (queue.empty()) break;  // closing, and everything submitted is done
      const std::size_t n = std::min(queue.size(), options.max_batches_per_commit);
      for (std::size_t i = 0; i < n; ++i) {
        group.push_back(std::move(queue.front()));
        queue.pop_front();
      }
    }
    Status status;
    {
      std::lock_guard<std::mutex> lock(mu);
      status = sticky;
    }
    if (status.ok()) {
      bool wrote = false;
      const auto began = std::chrono::steady_clock::now();
      status = Apply(group, &wrote);
      if (status.ok() && wrote && options.on_commit) {
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - began;
        options.on_commit({.seconds = took.count(), .batches = group.size()});
      }
      if (status.ok()) {
        if (wrote) transactions.fetch_add(1, std::memory_order_relaxed);
        batches.fetch_add(group.size(), std::memory_order_relaxed);
      } else {
        failed.fetch_add(1, std::memory_order_relaxed);
        status = Status(status.code(), "store: transaction of " + std::to_string(group.size()) +
                                           " batches rolled back: " + status.message());
        std::lock_guard<std::mutex> lock(mu);
        sticky = status;
      }
    }
    for (Pending& p : group) {
      if (p.done) p.done(status);
    }
    group.clear();
  }
  t_writer_of = nullptr;
}

SqliteStore::SqliteStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const SqliteOptions& options) {
  if (options.path.empty()) return InvalidArgument("store: empty database path");
  if (options.max_batches_per_commit == 0) {
    return InvalidArgument("store: max_batches_per_commit must be at least 1");
  }
  // The store holds every team's jobs and the users' sealed keys: only the server's user reads
  // it. SQLite makes the -wal and -shm files with the database file's mode.
  for (const char* suffix : {"", "-wal", "-shm"}) {
    if (options.path == ":memory:") break;  // SQLite's name for no file at all
    const std::string file = options.path + suffix;
    const int fd =
        ::open(file.c_str(), O_RDONLY | O_CLOEXEC | (*suffix == '\0' ? O_CREAT : 0), 0600);
    if (fd >= 0) {
      (void)::fchmod(fd, 0600);
      ::close(fd);
    }
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  Status status = impl->OpenWriter();
  if (status.ok()) status = impl->OpenReader();
  if (status.ok()) status = impl->OpenCheckpointer();
  if (!status.ok()) {
    return Status(status.code(), "store: open " + options.path + ": " + status.message());
  }
  Impl* raw = impl.get();
  raw->writer = std::thread([raw] {
    pthread_setname_np(pthread_self(), "allot-store");  // for top -H and perf
    raw->WriterLoop();
  });
  raw->checkpointer = std::thread([raw] {
    pthread_setname_np(pthread_self(), "allot-checkpt");
    raw->CheckpointLoop();
  });
  return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(impl)));
}

SqliteStore::~SqliteStore() { Close(); }

void SqliteStore::Submit(Batch batch, std::function<void(const Status&)> done) {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (!impl_->closing) {
      impl_->queue.push_back({std::move(batch), std::move(done)});
      impl_->wake.notify_one();
      return;
    }
  }
  if (done) done(Unavailable("store: closed"));
}

void SqliteStore::Resume() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->sticky = Status::Ok();
}

Result<std::vector<Record>> SqliteStore::Load(Kind kind) { return Read(impl_->load, kind); }

Result<std::vector<Record>> SqliteStore::Scan(Kind kind) { return Read(impl_->scan, kind); }

Result<std::vector<Record>> SqliteStore::Read(sqlite::Statement& stmt, Kind kind) {
  std::lock_guard<std::mutex> lock(impl_->read_mu);
  if (!impl_->read_db.valid()) return Unavailable("store: closed");
  const sqlite::ResetOnExit reset(stmt);
  int rc = stmt.BindInt(1, static_cast<std::int64_t>(kind));
  if (rc != SQLITE_OK) return sqlite::Error(impl_->read_db.get(), rc, "bind");
  std::vector<Record> records;
  while ((rc = stmt.Step()) == SQLITE_ROW) {
    records.push_back({stmt.ColumnText(0), stmt.ColumnText(1)});
  }
  if (rc != SQLITE_DONE) return sqlite::Error(impl_->read_db.get(), rc, "load");
  return records;
}

Result<std::optional<std::string>> SqliteStore::Get(Kind kind, std::string_view key) {
  std::lock_guard<std::mutex> lock(impl_->read_mu);
  if (!impl_->read_db.valid()) return Unavailable("store: closed");
  sqlite::Statement& stmt = impl_->get;
  const sqlite::ResetOnExit reset(stmt);
  int rc = stmt.BindInt(1, static_cast<std::int64_t>(kind));
  if (rc == SQLITE_OK) rc = stmt.BindText(2, key);
  if (rc != SQLITE_OK) return sqlite::Error(impl_->read_db.get(), rc, "bind");
  rc = stmt.Step();
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  if (rc != SQLITE_ROW) return sqlite::Error(impl_->read_db.get(), rc, "get");
  return std::optional<std::string>(stmt.ColumnText(0));
}

Result<std::vector<Record>> SqliteStore::Range(Kind kind, const KeyRange& range) {
  std::lock_guard<std::mutex> lock(impl_->read_mu);
  if (!impl_->read_db.valid()) return Unavailable("store: closed");
  sqlite::Statement& stmt = range.descending ? impl_->range_desc : impl_->range_asc;
  const sqlite::ResetOnExit reset(stmt);
  int rc = stmt.BindInt(1, static_cast<std::int64_t>(kind));
  if (rc == SQLITE_OK) rc = stmt.BindText(2, range.from);
  if (rc == SQLITE_OK) rc = stmt.BindText(3, range.to);
  if (rc == SQLITE_OK) {
    rc = stmt.BindInt(4, static_cast<std::int64_t>(
                             std::min<std::size_t>(range.limit, std::numeric_limits<int>::max())));
  }
  if (rc != SQLITE_OK) return sqlite::Error(impl_->read_db.get(), rc, "bind");
  std::vector<Record> records;
  while ((rc = stmt.Step()) == SQLITE_ROW) {
    records.push_back({stmt.ColumnText(0), stmt.ColumnText(1)});
  }
  if (rc != SQLITE_DONE) return sqlite::Error(impl_->read_db.get(), rc, "range");
  return records;
}

void SqliteStore::Close() {
  Impl& impl = *impl_;
  if (t_writer_of == &impl) {
    // Called from a done callback: stop taking batches; the writer drains and exits by itself,
    // and whoever calls Close() (or the destructor) next joins it.
    std::lock_guard<std::mutex> lock(impl.mu);
    impl.closing = true;
    return;
  }
  std::lock_guard<std::mutex> close_lock(impl.close_mu);
  if (impl.closed) return;
  {
    std::lock_guard<std::mutex> lock(impl.mu);
    impl.closing = true;
  }
  impl.wake.notify_all();
  if (impl.writer.joinable()) impl.writer.join();
  impl.StopCheckpointer();
  impl.CloseConnections();
  impl.closed = true;
}

std::uint64_t SqliteStore::transactions() const {
  return impl_->transactions.load(std::memory_order_relaxed);
}
std::uint64_t SqliteStore::batches_committed() const {
  return impl_->batches.load(std::memory_order_relaxed);
}
std::uint64_t SqliteStore::failed_transactions() const {
  return impl_->failed.load(std::memory_order_relaxed);
}
std::uint64_t SqliteStore::checkpoints() const {
  return impl_->checkpoints.load(std::memory_order_relaxed);
}

Result<std::unique_ptr<Store>> OpenSqliteStore(const SqliteOptions& options) {
  Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(options);
  if (!store.ok()) return store.status();
  return std::unique_ptr<Store>(std::move(store).value());
}

}  // namespace allot::store
