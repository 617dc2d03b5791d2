#pragma once

// The JSON edge of the controller's calls: a request body decoded into its typed request
// (api/decode.h, api/tenancy_requests.h), run by the controller, and its typed answer written as
// AWS, or Allot's documentation, documents it (api/encode.h). A request refused while it is
// decoded is audited as the controller audits the refusals it makes itself. The HTTP server calls
// these for its routes; tests and benchmarks call them to drive the controller as the wire does.

#include <string_view>

#include "server/controller.h"
#include "server/json.h"

namespace allot::server {

// An answer as its document, and when it may be given (Controller::Reply's `durable`).
struct WireReply {
  Json body = Json::object();
  Durable durable;
};

Result<WireReply> CallAction(Controller& controller, std::string_view route_name, const Json& body,
                             const Caller& caller = Caller::System());

// A typed answer as its document (api::EncodeResponse); a fault while encoding is a logged fault.
Result<WireReply> EncodeReply(const Result<Controller::Reply>& reply);

// /allot/v1/users[/NAME[/policy|/keys/rotate]]: `path` what follows /allot/v1/users, `body` the
// request body read (api::ReadBody). A change refused while it is decoded is audited.
Result<WireReply> CallUsers(Controller& controller, std::string_view method,
                            const std::string& path, const Json& body,
                            const Caller& caller = Caller::System());

// TagResource, UntagResource, ListTagsForResource, decoded (api::DecodeTags).
Result<WireReply> CallTags(Controller& controller, const api::TagsRequest& request,
                           const Caller& caller);

}  // namespace allot::server
