#pragma once

// The decoders of decode.cc, one per action (decode_config.cc, decode_jobs.cc), and the readers
// they share. Each throws ClientError (Refuse) at the first mistake; DecodeRequest turns that
// into a Status.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/fields.h"
#include "api/requests.h"

namespace allot::api::decoders {

// The resource part of "arn:<partition>:batch:<region>:<account>:<resource>" (what follows the
// fifth colon); nullopt for anything else: an ARN of another service never names a Batch
// resource, whatever its resource part says.
std::optional<std::string_view> BatchResource(std::string_view arn);

// A name or ARN ("arn:aws:batch:<region>:<account>:<type>/<name>") in `field`, which must name
// a valid name either way.
NameOrArn ReadNameOrArn(const Json& r, const char* field, std::string_view type);
NameOrArn NameOrArnOf(const std::string& sent, std::string_view type, const std::string& field);
ShareArn ShareArnOf(const std::string& arn, const std::string& field);
ShareArn ReadShareArn(const Json& r);
std::optional<model::State> ReadState(const Json& r);
PageRequest ReadPage(const Json& r);
TagList ReadTagList(const Json& r);

CreateServiceEnvironmentRequest CreateServiceEnvironment(const Json& r);
UpdateServiceEnvironmentRequest UpdateServiceEnvironment(const Json& r);
DescribeServiceEnvironmentsRequest DescribeServiceEnvironments(const Json& r);
DeleteServiceEnvironmentRequest DeleteServiceEnvironment(const Json& r);
CreateSchedulingPolicyRequest CreateSchedulingPolicy(const Json& r);
UpdateSchedulingPolicyRequest UpdateSchedulingPolicy(const Json& r);
DescribeSchedulingPoliciesRequest DescribeSchedulingPolicies(const Json& r);
ListSchedulingPoliciesRequest ListSchedulingPolicies(const Json& r);
DeleteSchedulingPolicyRequest DeleteSchedulingPolicy(const Json& r);
CreateJobQueueRequest CreateJobQueue(const Json& r);
UpdateJobQueueRequest UpdateJobQueue(const Json& r);
DescribeJobQueuesRequest DescribeJobQueues(const Json& r);
DeleteJobQueueRequest DeleteJobQueue(const Json& r);
CreateQuotaShareRequest CreateQuotaShare(const Json& r);
UpdateQuotaShareRequest UpdateQuotaShare(const Json& r);
DescribeQuotaShareRequest DescribeQuotaShare(const Json& r);
ListQuotaSharesRequest ListQuotaShares(const Json& r);
DeleteQuotaShareRequest DeleteQuotaShare(const Json& r);
SubmitServiceJobRequest SubmitServiceJob(const Json& r);
UpdateServiceJobRequest UpdateServiceJob(const Json& r);
DescribeServiceJobRequest DescribeServiceJob(const Json& r);
ListServiceJobsRequest ListServiceJobs(const Json& r);
TerminateServiceJobRequest TerminateServiceJob(const Json& r);
GetJobQueueSnapshotRequest GetJobQueueSnapshot(const Json& r);

}  // namespace allot::api::decoders
