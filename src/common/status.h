#pragma once

// Status and Result<T>: every runtime failure is a value, never an exception across a module
// boundary. The code says what the caller should do next; api/ maps each code to one HTTP status.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "common/check.h"

namespace allot {

enum class StatusCode : std::uint8_t {
  kOk,
  kInvalidArgument,     // the caller sent something wrong: fix the request
  kNotFound,            // the named thing does not exist
  kAlreadyExists,       // it exists already (or a clientToken was reused with another request)
  kFailedPrecondition,  // the request is valid but the state forbids it now (e.g. delete ENABLED)
  kResourceExhausted,   // a documented limit was reached
  kPermissionDenied,    // the caller's policy does not allow the action on the resource
  kUnavailable,         // try again later
  kInternal,            // a bug or a real fault
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status ResourceExhausted(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status PermissionDenied(std::string m) {
  return {StatusCode::kPermissionDenied, std::move(m)};
}
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  // NOLINTNEXTLINE(google-explicit-constructor): implicit: `return value;`
  Result(T value) : rep_(std::move(value)) {}
  // NOLINTNEXTLINE(google-explicit-constructor): implicit: `return NotFound(m);`
  Result(Status status) : rep_(std::move(status)) { ALLOT_CHECK(!std::get<Status>(rep_).ok()); }

  bool ok() const { return std::holds_alternative<T>(rep_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(rep_);
  }
  const T& value() const& {
    ALLOT_CHECK(ok());
    return std::get<T>(rep_);
  }
  T& value() & {
    ALLOT_CHECK(ok());
    return std::get<T>(rep_);
  }
  T&& value() && {
    ALLOT_CHECK(ok());
    return std::get<T>(std::move(rep_));
  }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> rep_;
};

}  // namespace allot

#define ALLOT_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::allot::Status allot_status_ = (expr);        \
    if (!allot_status_.ok()) return allot_status_; \
  } while (false)

// `lhs = value of expr`, or return its status: ALLOT_ASSIGN_OR_RETURN(Queue* q, FindQueue(name));
// `lhs` may declare a variable and `result` is a name made here, so neither can be in
// parentheses.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define ALLOT_ASSIGN_OR_RETURN(lhs, expr) \
  ALLOT_ASSIGN_OR_RETURN_IMPL(ALLOT_STATUS_CONCAT(allot_result_, __LINE__), lhs, expr)
#define ALLOT_ASSIGN_OR_RETURN_IMPL(result, lhs, expr) \
  auto result = (expr);                                \
  if (!result.ok()) return result.status();            \
  lhs = std::move(result).value()
// NOLINTEND(bugprone-macro-parentheses)
#define ALLOT_STATUS_CONCAT(a, b) ALLOT_STATUS_CONCAT_INNER(a, b)
#define ALLOT_STATUS_CONCAT_INNER(a, b) a##b
