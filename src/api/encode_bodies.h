#pragma once

// Inside the encoder: one document per response type, which EncodeResponse picks by the
// variant's alternative (encode.cc). Not for callers: they use api/encode.h.

#include <nlohmann/json.hpp>

#include "api/responses.h"

namespace allot::api::bodies {

// encode_config.cc
nlohmann::json Body(const ServiceEnvironmentChanged& r);
nlohmann::json Body(const DescribeServiceEnvironmentsResponse& r);
nlohmann::json Body(const SchedulingPolicyCreated& r);
nlohmann::json Body(const DescribeSchedulingPoliciesResponse& r);
nlohmann::json Body(const ListSchedulingPoliciesResponse& r);
nlohmann::json Body(const JobQueueChanged& r);
nlohmann::json Body(const DescribeJobQueuesResponse& r);
nlohmann::json Body(const QuotaShareChanged& r);
nlohmann::json Body(const ListQuotaSharesResponse& r);

// encode_jobs.cc
nlohmann::json Body(const ServiceJobChanged& r);
nlohmann::json Body(const ListServiceJobsResponse& r);
nlohmann::json Body(const JobQueueSnapshotResponse& r);

// encode_jobs.cc, for encode_explain.cc too: work lost in instance-seconds, and the victim
// order's key ("victimKey").
double InstanceSeconds(Duration instance_ms);
nlohmann::json EncodeVictimKey(const VictimKey& key);

// encode_explain.cc
nlohmann::json Body(const ExplainResponse& r);
nlohmann::json Body(const WhatIfResponse& r);

// encode_history.cc
nlohmann::json Body(const UsageReportResponse& r);
nlohmann::json Body(const UsageHistoryResponse& r);
nlohmann::json Body(const JobHistoryResponse& r);

// encode_tenancy.cc
nlohmann::json Body(const ListUsersResponse& r);
nlohmann::json Body(const UserResponse& r);
nlohmann::json Body(const NewAccessKeyResponse& r);
nlohmann::json Body(const UserPolicyResponse& r);
nlohmann::json Body(const AuditPageResponse& r);
nlohmann::json Body(const LogChunkResponse& r);

}  // namespace allot::api::bodies
