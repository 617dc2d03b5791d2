#pragma once

// Errors of the AWS wire contract. While a request is decoded, a refusal is a ClientError
// exception (Refuse), thrown where the mistake is found; Decoded turns it into a Status
// (kInvalidArgument) at the decoder's boundary, so Status/Result is what leaves this layer, and
// ApiErrorFor maps each status code to exactly one AWS error.

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "common/status.h"

namespace allot::api {

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

// Runs `decode` (which may Refuse) and returns its value, or its refusal as kInvalidArgument.
// Decoding only reads the request, so nothing else can fail in it.
template <typename F>
auto Decoded(F&& decode) -> Result<decltype(decode())> {
  try {
    return decode();
  } catch (const ClientError& e) {
    return InvalidArgument(e.what());
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("malformed request: ") + e.what());
  }
}

}  // namespace allot::api
