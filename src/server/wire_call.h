#pragma once

// The JSON edge of an AWS action: the request body decoded into its typed request
// (api/decode.h), run by the controller, and its typed response written as AWS documents it
// (api/encode.h). A request refused while it is decoded is audited as the controller audits the
// refusals it makes itself. The HTTP server calls this for every /v1/<action> route; tests and
// benchmarks call it to drive the controller as the wire does.

#include <string_view>

#include "server/controller.h"
#include "server/json.h"

namespace allot::server {

Result<Controller::Reply> CallAction(Controller& controller, std::string_view route_name,
                                     const Json& body, const Caller& caller = Caller::System());

// A typed answer as its document (api::EncodeResponse); a fault while encoding is a logged fault.
Result<Controller::Reply> EncodeReply(const Result<Controller::ActionReply>& reply);

// /allot/v1/users[/NAME[/policy|/keys/rotate]]: `path` what follows /allot/v1/users, `body` the
// request body read (api::ReadBody). A change refused while it is decoded is audited.
Result<Controller::Reply> CallUsers(Controller& controller, std::string_view method,
                                    const std::string& path, const Json& body,
                                    const Caller& caller = Caller::System());

// TagResource, UntagResource, ListTagsForResource, decoded (api::DecodeTags).
Result<Controller::Reply> CallTags(Controller& controller, const api::TagsRequest& request,
                                   const Caller& caller);

}  // namespace allot::server
