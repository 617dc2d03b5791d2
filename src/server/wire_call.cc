#include "server/wire_call.h"

#include "api/decode.h"
#include "api/encode.h"
#include "server/api_error.h"

namespace allot::server {

// Encoding allocates only; should it throw anyway, the caller gets a fault (logged as
// api.fault), not an exception.
Result<Controller::Reply> EncodeReply(const Result<Controller::ActionReply>& reply) {
  if (!reply.ok()) return reply.status();
  return Guarded([&reply] {
    return Controller::Reply{api::EncodeResponse(reply->body), reply->durable};
  });
}

Result<Controller::Reply> CallAction(Controller& controller, std::string_view route_name,
                                     const Json& body, const Caller& caller) {
  Result<api::Request> request = api::DecodeRequest(route_name, body);
  if (!request.ok()) {
    controller.AuditRefusal(caller, Controller::AuditedAction(std::string(route_name)),
                            request.status().message(), api::TargetOf(route_name, body));
    return request.status();
  }
  return EncodeReply(controller.Call(request.value(), caller));
}

Result<Controller::Reply> CallTags(Controller& controller, const api::TagsRequest& request,
                                   const Caller& caller) {
  return EncodeReply(controller.Tags(request, caller));
}

}  // namespace allot::server
