#pragma once

// Request bodies into typed requests (api/requests.h). Each action's decoder checks every field
// the request itself decides and refuses the first mistake with InvalidArgument, naming the
// field as the caller sent it, the value and what is allowed. Actions are named as the routes
// carry them: "/v1/submitservicejob" is "submitservicejob".

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/requests.h"
#include "common/status.h"

namespace allot::api {

struct ActionInfo {
  std::string_view name;  // AWS's ("SubmitServiceJob"), without the batch: prefix
  bool mutating = false;  // a change: audited
};

// The action a route names; nullopt for a name that is not an action of this server.
std::optional<ActionInfo> FindAction(std::string_view route_name);

// `body` (a JSON object) as the request of `route_name`'s action.
Result<Request> DecodeRequest(std::string_view route_name, const nlohmann::json& body);

// Where a request that failed to decode was aimed, read leniently (a field missing or of the
// wrong type is left out), for its audit record: a refused call's record names the resource it
// aimed at, and a submission's the priority it asked for.
struct RefusalTarget {
  std::string sent;   // the resource's name, id or ARN as sent; "" when none was read
  std::string type;   // "job-queue", "service-environment", "scheduling-policy", "service-job"
  std::string share;  // CreateQuotaShare's and a submission's quota share
  std::optional<std::int64_t> priority;  // a submission's or update's schedulingPriority
};
RefusalTarget TargetOf(std::string_view route_name, const nlohmann::json& body);

// A what-if body: exactly one of {"submit": ...}, {"updatePriority": ...} and
// {"updateQuotaShare": ...}, holding the request of SubmitServiceJob, UpdateServiceJob or
// UpdateQuotaShare.
Result<WhatIfRequest> DecodeWhatIf(const nlohmann::json& body);

// /v1/tags/{resourceArn}: POST (TagResource, `body` holds tags), DELETE (UntagResource, the
// tagKeys of the query in `keys`) or GET (ListTagsForResource).
Result<TagsRequest> DecodeTags(std::string_view method, const std::string& resource_arn,
                               const nlohmann::json& body, const std::vector<std::string>& keys);

// The AWS action name of a decoded request ("SubmitServiceJob").
std::string_view ActionOf(const Request& request);

}  // namespace allot::api
