#pragma once

// The AWS Batch quota-management actions as typed requests. The wire layer decodes each request
// body into one of these (DecodeRequest, api/decode.h), checking every field the request itself
// decides: types, bounds, names, enums, the SageMaker payload. What depends on the server's
// state (whether a queue exists, whether a share is full) is the controller's to check. So
// nothing below is JSON, and a controller handler never reads a field the caller sent.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "api/payload.h"
#include "common/time.h"
#include "model/capacity.h"
#include "model/config.h"
#include "model/job.h"

namespace allot::api {

using TagList = std::vector<std::pair<std::string, std::string>>;

// A resource named by its name or its ARN, as the caller sent it (`sent`, for messages) and the
// name it resolves to (`name`, a valid name: "q1/x" never resolves to "q1").
struct NameOrArn {
  std::string sent;
  std::string name;
};

// A quota share's ARN, "arn:aws:batch:<region>:<account>:job-queue/<queue>/quota-share/<share>".
struct ShareArn {
  std::string sent;
  std::string queue;
  std::string share;
};

// maxResults / nextToken of the configuration lists (name order; the token is the last name).
struct PageRequest {
  std::int64_t max_results = 100;
  std::string next_token;
};

// resourceSharingConfiguration; LEND_AND_BORROW without a borrowLimit gets -1 (unlimited).
struct Sharing {
  model::SharingStrategy strategy = model::SharingStrategy::kReserve;
  std::optional<std::int64_t> borrow_limit;
};

// --- service environments ---

struct CreateServiceEnvironmentRequest {
  static constexpr std::string_view kAction = "CreateServiceEnvironment";
  std::string name;
  model::State state = model::State::kEnabled;
  std::vector<model::CapacityLimit> capacity_limits;
  TagList tags;
};

struct UpdateServiceEnvironmentRequest {
  static constexpr std::string_view kAction = "UpdateServiceEnvironment";
  NameOrArn environment;
  std::optional<model::State> state;
  std::optional<std::vector<model::CapacityLimit>> capacity_limits;
};

struct DescribeServiceEnvironmentsRequest {
  static constexpr std::string_view kAction = "DescribeServiceEnvironments";
  std::vector<NameOrArn> environments;  // none: every environment, a page at a time
  PageRequest page;
};

struct DeleteServiceEnvironmentRequest {
  static constexpr std::string_view kAction = "DeleteServiceEnvironment";
  NameOrArn environment;
};

// --- scheduling policies ---

struct CreateSchedulingPolicyRequest {
  static constexpr std::string_view kAction = "CreateSchedulingPolicy";
  std::string name;
  // quotaSharePolicy.idleResourceAssignmentStrategy, when the policy has a quotaSharePolicy.
  std::optional<std::string> idle_resource_assignment;
  TagList tags;
};

struct UpdateSchedulingPolicyRequest {
  static constexpr std::string_view kAction = "UpdateSchedulingPolicy";
  NameOrArn policy;
  std::optional<std::string> idle_resource_assignment;
};

struct DescribeSchedulingPoliciesRequest {
  static constexpr std::string_view kAction = "DescribeSchedulingPolicies";
  std::vector<NameOrArn> policies;
};

struct ListSchedulingPoliciesRequest {
  static constexpr std::string_view kAction = "ListSchedulingPolicies";
  PageRequest page;
};

struct DeleteSchedulingPolicyRequest {
  static constexpr std::string_view kAction = "DeleteSchedulingPolicy";
  NameOrArn policy;
};

// --- job queues ---

// serviceEnvironmentOrder's one entry.
struct EnvironmentOrder {
  std::int32_t order = 1;
  NameOrArn environment;
};

struct CreateJobQueueRequest {
  static constexpr std::string_view kAction = "CreateJobQueue";
  std::string name;
  std::int32_t priority = 0;
  std::string type = "SAGEMAKER_TRAINING";
  std::int32_t environment_order = 1;
  NameOrArn environment;
  std::optional<NameOrArn> scheduling_policy;
  model::State state = model::State::kEnabled;
  TagList tags;
  std::vector<model::JobStateTimeLimitAction> time_limit_actions;
};

struct UpdateJobQueueRequest {
  static constexpr std::string_view kAction = "UpdateJobQueue";
  NameOrArn queue;
  std::optional<model::State> state;
  std::optional<std::int32_t> priority;
  std::optional<NameOrArn> scheduling_policy;
  std::optional<std::vector<model::JobStateTimeLimitAction>> time_limit_actions;
  // The queue keeps its service environment: only the order may change.
  std::optional<EnvironmentOrder> environment_order;
};

struct DescribeJobQueuesRequest {
  static constexpr std::string_view kAction = "DescribeJobQueues";
  std::vector<NameOrArn> queues;  // none: every queue, a page at a time
  PageRequest page;
};

struct DeleteJobQueueRequest {
  static constexpr std::string_view kAction = "DeleteJobQueue";
  NameOrArn queue;
};

// --- quota shares ---

struct CreateQuotaShareRequest {
  static constexpr std::string_view kAction = "CreateQuotaShare";
  std::string name;
  NameOrArn queue;
  std::vector<model::CapacityLimit> capacity_limits;
  Sharing sharing;
  bool in_share_preemption = false;
  model::State state = model::State::kEnabled;
  TagList tags;
};

struct UpdateQuotaShareRequest {
  static constexpr std::string_view kAction = "UpdateQuotaShare";
  ShareArn share;
  std::optional<std::vector<model::CapacityLimit>> capacity_limits;
  std::optional<Sharing> sharing;
  std::optional<bool> in_share_preemption;
  std::optional<model::State> state;
};

struct DescribeQuotaShareRequest {
  static constexpr std::string_view kAction = "DescribeQuotaShare";
  ShareArn share;
};

struct ListQuotaSharesRequest {
  static constexpr std::string_view kAction = "ListQuotaShares";
  NameOrArn queue;
  PageRequest page;
};

struct DeleteQuotaShareRequest {
  static constexpr std::string_view kAction = "DeleteQuotaShare";
  ShareArn share;
};

// --- service jobs ---

struct SubmitServiceJobRequest {
  static constexpr std::string_view kAction = "SubmitServiceJob";
  std::string name;
  NameOrArn queue;
  std::optional<std::string> quota_share;
  std::int32_t priority = 0;
  std::string payload;  // serviceRequestPayload as sent: stored, and read again at launch
  ParsedPayload parsed;
  std::optional<model::RetryStrategy> retry;
  std::optional<std::int32_t> preemption_retries;
  std::optional<std::int64_t> timeout_config_seconds;  // timeoutConfig.attemptDurationSeconds
  TagList tags;
  // clientToken, and the request's identity without it: a retry with the same token must be
  // the same request.
  std::optional<std::string> client_token;
  std::string request_hash;
};

struct UpdateServiceJobRequest {
  static constexpr std::string_view kAction = "UpdateServiceJob";
  std::string job_id;  // an id or a job ARN
  std::int32_t priority = 0;
};

struct DescribeServiceJobRequest {
  static constexpr std::string_view kAction = "DescribeServiceJob";
  std::string job_id;
};

// ListServiceJobs' filters: one of JOB_NAME, BEFORE_CREATED_AT, AFTER_CREATED_AT,
// QUOTA_SHARE_NAME and SHARE_IDENTIFIER, and jobStatus (RUNNING when absent), which a name or
// time filter overrides.
struct JobListFilters {
  std::optional<model::JobStatus> status;
  std::optional<std::string> name;  // without the trailing '*' of a prefix
  bool name_prefix = false;
  std::optional<Timestamp> before;
  std::optional<Timestamp> after;
  std::optional<std::string> share;
  // SHARE_IDENTIFIER: a fair-share identifier, which no job of a quota-managed queue has (Allot
  // refuses shareIdentifier at submission): nothing matches. The SageMaker SDK's
  // list_jobs_by_share(share_identifier=...) sends it.
  std::optional<std::string> share_identifier;
};

struct ListServiceJobsRequest {
  static constexpr std::string_view kAction = "ListServiceJobs";
  NameOrArn queue;
  JobListFilters filters;
  std::size_t max_results = 100;
  // nextToken: "createdAt.sequence" of the last job the page before examined.
  std::optional<std::pair<Timestamp, model::JobId>> after_position;
};

struct TerminateServiceJobRequest {
  static constexpr std::string_view kAction = "TerminateServiceJob";
  std::string job_id;
  std::string reason;
};

struct GetJobQueueSnapshotRequest {
  static constexpr std::string_view kAction = "GetJobQueueSnapshot";
  NameOrArn queue;
};

using Request =
    std::variant<CreateServiceEnvironmentRequest, UpdateServiceEnvironmentRequest,
                 DescribeServiceEnvironmentsRequest, DeleteServiceEnvironmentRequest,
                 CreateSchedulingPolicyRequest, UpdateSchedulingPolicyRequest,
                 DescribeSchedulingPoliciesRequest, ListSchedulingPoliciesRequest,
                 DeleteSchedulingPolicyRequest, CreateJobQueueRequest, UpdateJobQueueRequest,
                 DescribeJobQueuesRequest, DeleteJobQueueRequest, CreateQuotaShareRequest,
                 UpdateQuotaShareRequest, DescribeQuotaShareRequest, ListQuotaSharesRequest,
                 DeleteQuotaShareRequest, SubmitServiceJobRequest, UpdateServiceJobRequest,
                 DescribeServiceJobRequest, ListServiceJobsRequest, TerminateServiceJobRequest,
                 GetJobQueueSnapshotRequest>;

// --- tags: TagResource, UntagResource and ListTagsForResource name their resource by its ARN ---

struct TaggedResource {
  enum class Type { kServiceEnvironment, kSchedulingPolicy, kJobQueue, kQuotaShare, kServiceJob };
  Type type = Type::kJobQueue;
  std::string arn;    // as sent
  std::string name;   // the environment, policy or queue; a share's queue; a job's id
  std::string share;  // a quota share's name
};

struct TagResourceRequest {
  static constexpr std::string_view kAction = "TagResource";
  TaggedResource resource;
  TagList tags;  // at least one
};

struct UntagResourceRequest {
  static constexpr std::string_view kAction = "UntagResource";
  TaggedResource resource;
  std::vector<std::string> keys;  // at least one
};

struct ListTagsForResourceRequest {
  static constexpr std::string_view kAction = "ListTagsForResource";
  TaggedResource resource;
};

using TagsRequest =
    std::variant<TagResourceRequest, UntagResourceRequest, ListTagsForResourceRequest>;

// POST /allot/v1/whatif: one of a submission, a priority change or a quota-share update, each
// decoded as its real call is.
using WhatIfRequest =
    std::variant<SubmitServiceJobRequest, UpdateServiceJobRequest, UpdateQuotaShareRequest>;

}  // namespace allot::api
