#pragma once

// The configuration records as AWS's typed responses (api/responses.h), and their stored form.
// The stored form of each record (store kinds kServiceEnvironment, kSchedulingPolicy, kJobQueue,
// kQuotaShare) is its Describe document, as it has been since the first release, so every data
// directory reads.

#include <string>
#include <string_view>

#include "api/responses.h"
#include "common/status.h"
#include "server/config_records.h"
#include "server/json.h"

namespace allot::server {

// From an object ReadTags checked.
TagList TagsFrom(const Json& tags);

// Each record as AWS describes it (api/encode.h writes the document); a share without its tags
// is a ListQuotaShares entry.
api::ServiceEnvironmentDetail ToWire(const ServiceEnvironmentRecord& env);
api::SchedulingPolicyDetail ToWire(const SchedulingPolicyRecord& policy);
api::JobQueueDetail ToWire(const JobQueueRecord& queue);
api::QuotaShareDetail ToWire(const QuotaShareRecord& share, bool with_tags = true);

// The Describe document of each: the stored form, and the old values of an update's audit
// record.
Json DescribeEnvironment(const ServiceEnvironmentRecord& env);
Json DescribePolicy(const SchedulingPolicyRecord& policy);
Json DescribeQueue(const JobQueueRecord& queue);
Json DescribeShare(const QuotaShareRecord& share);

// The stored form: the Describe document.
std::string Encode(const ServiceEnvironmentRecord& env);
std::string Encode(const SchedulingPolicyRecord& policy);
std::string Encode(const JobQueueRecord& queue);
std::string Encode(const QuotaShareRecord& share);

// Corruption (not JSON, a field missing or of the wrong type, a value outside the API's) is an
// Internal error naming the record by its store key.
Result<ServiceEnvironmentRecord> DecodeEnvironment(std::string_view key, std::string_view value);
Result<SchedulingPolicyRecord> DecodePolicy(std::string_view key, std::string_view value);
Result<JobQueueRecord> DecodeQueue(std::string_view key, std::string_view value);
Result<QuotaShareRecord> DecodeShare(std::string_view key, std::string_view value);

}  // namespace allot::server
