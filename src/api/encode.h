#pragma once

// Typed responses (api/responses.h) into the JSON documents AWS documents for them: the only
// place an answer of an AWS action becomes JSON. Keys are written as botocore names them; a
// field the response leaves unset (an empty optional, a zero time where noted) is left out.

#include <nlohmann/json.hpp>

#include "api/responses.h"

namespace allot::api {

// The answer's document, by the response's type.
nlohmann::json EncodeResponse(const Response& response);

// Each entry alone. A configuration record is stored as its Describe document, so the server's
// store codec writes these too.
nlohmann::json EncodeTags(const TagList& tags);
nlohmann::json Encode(const ServiceEnvironmentDetail& env);
nlohmann::json Encode(const SchedulingPolicyDetail& policy);
nlohmann::json Encode(const JobQueueDetail& queue);
nlohmann::json Encode(const QuotaShareDetail& share);
nlohmann::json Encode(const ServiceJobSummary& job);
nlohmann::json Encode(const ServiceJobDetail& job);
// capacityUsage: [{capacityUnit, quantity}] (quantity a number, as AWS's Double).
nlohmann::json EncodeCapacity(const model::Demand& demand);

}  // namespace allot::api
