#pragma once

// The controller's side of the wire's errors (api/wire_error.h). Handlers refuse by returning a
// Status (kInvalidArgument for the caller's mistake, kPermissionDenied for its policy, kInternal
// for a fault). The entry points still run them under GuardedResult, so that an exception from
// a library (nlohmann, the standard library) or a ClientError from inside the payload decoder
// becomes a Status too, and a fault's text reaches the log, never the caller.

#include <nlohmann/json.hpp>
#include <string>

#include "api/wire_error.h"
#include "common/status.h"
#include "server/log.h"

namespace allot::server {

using api::ApiError;
using api::ApiErrorFor;
using api::ClientError;
using api::Refuse;

// What a caller reads of a fault: its detail goes to the log (api.fault).
inline constexpr std::string_view kInternalError = "internal server error";

// Runs `body`, which returns a Result, and returns its result; a ClientError it throws is
// kInvalidArgument. Any other exception is a fault: logged, and kInternal without its
// text.
template <typename F>
auto GuardedResult(F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const ClientError& e) {
    return InvalidArgument(e.what());
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("malformed request: ") + e.what());
  } catch (const std::exception& e) {
    log::Error("api.fault", {{"error", e.what()}});
    return Internal(std::string(kInternalError));
  }
}

// The same for a `body` that returns a plain value.
template <typename F>
auto Guarded(F&& body) -> Result<decltype(body())> {
  return GuardedResult([&]() -> Result<decltype(body())> { return body(); });
}

}  // namespace allot::server
