#pragma once

// The controller's side of the wire's errors (api/wire_error.h). Inside a request's handler a
// refusal that depends on the server's state (a name that does not exist, a share that is full)
// is a ClientError thrown where it is found; the controller's entry points turn it into a Status
// (Guarded), so Status/Result is what crosses every boundary.

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "api/wire_error.h"
#include "common/status.h"
#include "server/log.h"

namespace allot::server {

using api::ApiError;
using api::ApiErrorFor;
using api::ClientError;
using api::Refuse;

// The caller's policy does not allow the call; the message is AWS's (auth::DeniedMessage).
class AccessDenied : public std::runtime_error {
 public:
  explicit AccessDenied(const std::string& message) : std::runtime_error(message) {}
};

// What a caller reads of a fault: its detail goes to the log (api.fault).
inline constexpr std::string_view kInternalError = "internal server error";

// Runs `body`, which returns a Result and may also Refuse, and returns its result, or its
// refusal as kInvalidArgument. Any other exception is a fault: logged, and kInternal without its
// text.
template <typename F>
auto GuardedResult(F&& body) -> decltype(body()) {
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
    return Internal(std::string(kInternalError));
  }
}

// The same for a `body` that returns a plain value.
template <typename F>
auto Guarded(F&& body) -> Result<decltype(body())> {
  return GuardedResult([&]() -> Result<decltype(body())> { return body(); });
}

}  // namespace allot::server
