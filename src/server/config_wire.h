#pragma once

// The configuration records in AWS's wire shapes, and their stored form. The stored form of each
// record (store kinds kServiceEnvironment, kSchedulingPolicy, kJobQueue, kQuotaShare) is its
// Describe document, as it has been since the first release, so every data directory reads.

#include <string>
#include <string_view>

#include "common/status.h"
#include "server/config_records.h"
#include "server/json.h"

namespace allot::server {

// tags: {key: value}
Json TagsJson(const TagList& tags);
// From an object ReadTags checked.
TagList TagsFrom(const Json& tags);

// DescribeServiceEnvironments' entry.
Json DescribeEnvironment(const ServiceEnvironmentRecord& env);
// DescribeSchedulingPolicies' entry; ListSchedulingPolicies' entry is only the ARN.
Json DescribePolicy(const SchedulingPolicyRecord& policy);
Json SummarizePolicy(const SchedulingPolicyRecord& policy);
// DescribeJobQueues' entry.
Json DescribeQueue(const JobQueueRecord& queue);
// DescribeQuotaShare's answer; ListQuotaShares' entry is the same without the tags.
Json DescribeShare(const QuotaShareRecord& share);
Json SummarizeShare(const QuotaShareRecord& share);

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
