#pragma once

// Errors of the AWS wire contract. Inside a request's handler a refusal is a ClientError
// exception (Refuse), thrown where the mistake is found; the controller's entry points turn it
// into a Status (kInvalidArgument), so Status/Result is what crosses every boundary, and
// ApiErrorFor maps each status code to exactly one AWS error at the wire.

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "common/status.h"
#include "server/log.h"

namespace allot::server {

struct ApiError {
  int http_status = 400;
  std::string type = "ClientException";
  std::string message;
};

// The caller's mistakes (invalid argument, not found, already exists, failed precondition) are
// 400 ClientException; a denial by the caller's policy is 403 AccessDeniedException; everything
// else is a fault of the server: 500 ServerException.
inline ApiError ApiErrorFor(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:
      return {400, "ClientException", s.message()};
    case StatusCode::kPermissionDenied:
      return {403, "AccessDeniedException", s.message()};
    case StatusCode::kOk:
    case StatusCode::kResourceExhausted:
    case StatusCode::kUnavailable:
    case StatusCode::kInternal:
      break;
  }
  return {500, "ServerException", s.message()};
}

class ClientError : public std::runtime_error {
 public:
  explicit ClientError(const std::string& message) : std::runtime_error(message) {}
};

[[noreturn]] inline void Refuse(const std::string& message) { throw ClientError(message); }

// The caller's policy does not allow the call; the message is AWS's (auth::DeniedMessage).
class AccessDenied : public std::runtime_error {
 public:
  explicit AccessDenied(const std::string& message) : std::runtime_error(message) {}
};

// Runs `body` (a handler that may Refuse) and returns its value, or its refusal as
// kInvalidArgument. Any other exception is a fault: logged, and kInternal without its text.
template <typename F>
auto Guarded(F&& body) -> Result<decltype(body())> {
  try {
    return body();
  } catch (const AccessDenied& e) {
    return PermissionDenied(e.what());
  } catch (const ClientError& e) {
    return InvalidArgument(e.what());
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("malformed request: ") + e.what());
  } catch (const std::exception& e) {
    log::Error("api.fault", {{"error", e.what()}});
    return Internal("internal server error");
  }
}

}  // namespace allot::server
