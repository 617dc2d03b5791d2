#pragma once

// The SQLite implementation of Store. OpenSqliteStore() (store.h) is all most code needs; this
// header is for code that wants the concrete type, e.g. to read the writer's counters.
//
// Layout: one file, WAL mode, synchronous=FULL, busy_timeout 5 s. Three connections: the write
// connection belongs to the writer thread; the read connection serves Load/Get under a mutex and
// sees every batch whose `done` has run (done runs only after COMMIT returned); the checkpoint
// connection belongs to the checkpointer thread, which copies the WAL back into the database
// (PASSIVE checkpoints) once the writer's commits left 2,000 pages in it, so that copying is
// mostly not part of any commit; the writer copies the last few pages itself, after its next
// commit, so that the WAL starts over. Should the checkpointer fall 20,000 pages behind, the
// writer checkpoints itself.
//
// Writer: it takes every batch queued so far (at most max_batches_per_commit), applies them in
// submission order inside one BEGIN IMMEDIATE ... COMMIT, then runs each batch's `done` in order
// with the transaction's result. If the transaction fails it is rolled back and every batch in it
// gets the same error; so does every later batch (the sticky error, store.h) until Resume().
//
// Load() orders by key bytes (SQLite's BINARY collation, i.e. memcmp order). Keys and values are
// stored as given, byte for byte (embedded NULs included).
//
// Rules for `done` callbacks (they run on the writer thread, which waits for them):
//  - keep them short; they may call Submit(), Load(), Get() and Close();
//  - never call Commit() from one (it would wait for the writer that is running it: deadlock);
//  - never destroy the store from one.
// After Close() (or when Submit races it and loses), Submit runs `done` at once on the calling
// thread with kUnavailable, and Load/Get return kUnavailable. The queue is unbounded: Submit never
// blocks on disk, so back-pressure, if needed, is the caller's (e.g. Commit waits).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/store.h"

namespace allot::store {

namespace sqlite {
class Statement;
}  // namespace sqlite

class SqliteStore final : public Store {
 public:
  // Opens (creating if absent) the database at options.path; fails if the path is empty,
  // max_batches_per_commit is 0, the file is not a database, WAL cannot be enabled, or its
  // schema_version is not one this code knows.
  static Result<std::unique_ptr<SqliteStore>> Open(const SqliteOptions& options);

  ~SqliteStore() override;  // Close()
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  void Submit(Batch batch, std::function<void(const Status&)> done) override;
  void Resume() override;
  Result<std::vector<Record>> Load(Kind kind) override;
  Result<std::vector<Record>> Scan(Kind kind) override;
  Result<std::optional<std::string>> Get(Kind kind, std::string_view key) override;
  Result<std::vector<Record>> Range(Kind kind, const KeyRange& range) override;
  void Close() override;

  // Counters of the writer, readable from any thread.
  std::uint64_t transactions() const;       // transactions committed
  std::uint64_t batches_committed() const;  // batches in them (empty batches included)
  std::uint64_t failed_transactions() const;
  std::uint64_t checkpoints() const;  // by the checkpointer, completed

  static constexpr int kSchemaVersion = 1;  // meta.schema_version written and accepted

 private:
  struct Impl;
  explicit SqliteStore(std::unique_ptr<Impl> impl);
  Result<std::vector<Record>> Read(sqlite::Statement& stmt, Kind kind);  // Load and Scan
  std::unique_ptr<Impl> impl_;
};

}  // namespace allot::store
