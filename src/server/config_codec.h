#pragma once

// The stored form of the configuration records (store kinds kServiceEnvironment,
// kSchedulingPolicy, kJobQueue, kQuotaShare): each record's Describe document, as it has been
// since the first release, so every data directory reads. JSON lives here at the store's edge, as
// it lives at the wire's in src/api.

#include <string>
#include <string_view>

#include "common/status.h"
#include "server/config_records.h"
#include "server/config_wire.h"
#include "server/json.h"

namespace allot::server {

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
