#include "server/wire_call.h"

#include "api/decode.h"
#include "api/encode.h"
#include "api/routes.h"
#include "server/api_error.h"

namespace allot::server {

// Encoding allocates only; should it throw anyway, the caller gets a fault (logged as
// api.fault), not an exception.
Result<WireReply> EncodeReply(const Result<Controller::Reply>& reply) {
  if (!reply.ok()) return reply.status();
  return Guarded([&reply] { return WireReply{api::EncodeResponse(reply->body), reply->durable}; });
}

Result<WireReply> CallAction(Controller& controller, std::string_view route_name, const Json& body,
                             const Caller& caller) {
  Result<api::Request> request = api::DecodeRequest(route_name, body);
  if (!request.ok()) {
    controller.AuditRefusal(caller, api::AuditedAction(route_name), request.status().message(),
                            api::TargetOf(route_name, body));
    return request.status();
  }
  return EncodeReply(controller.Call(request.value(), caller));
}

namespace {

// A refused CreateUser's audit record names the user to be, as an allowed one does.
api::RefusalTarget UserTarget(const Controller& controller, std::string_view method,
                              const std::string& path, const Json& body) {
  if (method != "POST" || !(path.empty() || path == "/")) return {};
  const auto name = body.is_object() ? body.find("userName") : body.end();
  const bool named = name != body.end() && name->is_string();
  return {.sent = UserArn(controller.options().account, named ? name->get<std::string>() : "")};
}

}  // namespace

Result<WireReply> CallUsers(Controller& controller, std::string_view method,
                            const std::string& path, const Json& body, const Caller& caller) {
  Result<api::UserRequest> request = api::DecodeUserRequest(method, path, body);
  if (!request.ok()) {
    // An operation the endpoint does not have is no call at all: nothing to audit.
    if (request.status().code() != StatusCode::kNotFound) {
      controller.AuditRefusal(caller, api::AuditedActionOf(method, {api::Route::kUsers, path}),
                              request.status().message(),
                              UserTarget(controller, method, path, body));
    }
    return request.status();
  }
  return EncodeReply(controller.Users(caller, request.value()));
}

Result<WireReply> CallTags(Controller& controller, const api::TagsRequest& request,
                           const Caller& caller) {
  return EncodeReply(controller.Tags(request, caller));
}

}  // namespace allot::server
