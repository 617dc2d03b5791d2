#include "store/sqlite_handle.h"

#include <string>
#include <utility>

namespace allot::store::sqlite {

Status Error(sqlite3* db, int rc, std::string_view what) {
  std::string message = "sqlite: ";
  message += what;
  message += ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  message += " (";
  message += std::to_string(rc);
  message += ")";
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return {StatusCode::kUnavailable, std::move(message)};
    case SQLITE_FULL:
      return ResourceExhausted(std::move(message));
    default:
      return Internal(std::move(message));
  }
}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    Finalize();
    stmt_ = other.stmt_;
    other.stmt_ = nullptr;
  }
  return *this;
}

Result<Statement> Statement::Prepare(sqlite3* db, std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return Error(db, rc, "prepare " + std::string(sql));
  }
  return Statement(stmt);
}

int Statement::BindInt(int index, std::int64_t value) {
  return sqlite3_bind_int64(stmt_, index, value);
}

int Statement::BindText(int index, std::string_view value) {
  // A non-null pointer even for "", so the value binds as an empty string, not NULL.
  const char* data = value.data() != nullptr ? value.data() : "";
  return sqlite3_bind_text64(stmt_, index, data, value.size(), SQLITE_STATIC, SQLITE_UTF8);
}

std::string Statement::ColumnText(int column) const {
  const auto* text = sqlite3_column_text(stmt_, column);
  const int size = sqlite3_column_bytes(stmt_, column);
  if (text == nullptr || size <= 0) return {};
  return {reinterpret_cast<const char*>(text), static_cast<std::size_t>(size)};
}

void Statement::Reset() {
  if (stmt_ == nullptr) return;
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

void Statement::Finalize() {
  if (stmt_ != nullptr) {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
  }
}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    Close();
    db_ = other.db_;
    other.db_ = nullptr;
  }
  return *this;
}

Result<Connection> Connection::Open(const std::string& path, int flags, const char* vfs) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, vfs);
  if (rc != SQLITE_OK) {
    Status status = Error(db, rc, "open " + path);
    sqlite3_close_v2(db);
    return status;
  }
  sqlite3_extended_result_codes(db, 1);
  return Connection(db);
}

Status Connection::Exec(std::string_view sql) {
  const std::string text(sql);
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return Error(db_, rc, text);
  return Status::Ok();
}

Result<std::string> Connection::QueryText(std::string_view sql) {
  Result<Statement> stmt = Statement::Prepare(db_, sql);
  if (!stmt.ok()) return stmt.status();
  Statement& s = stmt.value();
  const int rc = s.Step();
  if (rc == SQLITE_DONE) return std::string();
  if (rc != SQLITE_ROW) return Error(db_, rc, sql);
  return s.ColumnText(0);
}

void Connection::Close() {
  if (db_ != nullptr) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
  }
}

}  // namespace allot::store::sqlite
