#pragma once

// Small RAII wrappers over the sqlite3 C API, internal to store/. A Connection owns a sqlite3*,
// a Statement owns a prepared sqlite3_stmt*. Neither is thread-safe: each is used by one thread at
// a time (the writer thread, or a reader holding the read mutex).

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace allot::store::sqlite {

// A Status for the failure `rc` of `what` on `db` (db may be null): BUSY/LOCKED map to
// kUnavailable, FULL to kResourceExhausted, everything else to kInternal.
Status Error(sqlite3* db, int rc, std::string_view what);

class Statement {
 public:
  Statement() = default;
  ~Statement() { Finalize(); }
  Statement(Statement&& other) noexcept : stmt_(other.stmt_) { other.stmt_ = nullptr; }
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Prepared once and reused (SQLITE_PREPARE_PERSISTENT).
  static Result<Statement> Prepare(sqlite3* db, std::string_view sql);

  bool valid() const { return stmt_ != nullptr; }
  sqlite3_stmt* get() const { return stmt_; }

  // Parameters are 1-based. Text is bound without a copy: it must outlive the next Reset().
  int BindInt(int index, std::int64_t value);
  int BindText(int index, std::string_view value);

  int Step() { return sqlite3_step(stmt_); }
  // The column as bytes (embedded NULs kept).
  std::string ColumnText(int column) const;

  // Ends the statement's use (and so its read transaction) and drops the bindings.
  void Reset();
  void Finalize();

 private:
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  sqlite3_stmt* stmt_ = nullptr;
};

// Resets a statement when the scope ends, so no statement keeps a read snapshot open.
class ResetOnExit {
 public:
  explicit ResetOnExit(Statement& stmt) : stmt_(stmt) {}
  ~ResetOnExit() { stmt_.Reset(); }
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;

 private:
  Statement& stmt_;
};

class Connection {
 public:
  Connection() = default;
  ~Connection() { Close(); }
  Connection(Connection&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Connection& operator=(Connection&& other) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // `flags` and `vfs` (null: the default) as for sqlite3_open_v2; extended result codes are
  // turned on.
  static Result<Connection> Open(const std::string& path, int flags, const char* vfs = nullptr);

  bool valid() const { return db_ != nullptr; }
  sqlite3* get() const { return db_; }

  // Runs one or more SQL statements that return no rows the caller needs.
  Status Exec(std::string_view sql);
  // Runs a statement (e.g. a PRAGMA) and returns the first column of its first row ("" if none).
  Result<std::string> QueryText(std::string_view sql);

  // Every Statement prepared on this connection must be finalized first.
  void Close();

 private:
  explicit Connection(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

}  // namespace allot::store::sqlite
