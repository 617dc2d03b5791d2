#include "server/wire_call.h"

#include "api/decode.h"

namespace allot::server {

Result<Controller::Reply> CallAction(Controller& controller, std::string_view route_name,
                                     const Json& body, const Caller& caller) {
  Result<api::Request> request = api::DecodeRequest(route_name, body);
  if (!request.ok()) {
    controller.AuditRefusal(caller, Controller::AuditedAction(std::string(route_name)),
                            request.status().message(), api::TargetOf(route_name, body));
    return request.status();
  }
  return controller.Call(request.value(), caller);
}

}  // namespace allot::server
