#pragma once

// The AWS Batch quota-management answers as typed responses: what the controller returns for
// each action (requests.h holds what it takes). EncodeResponse (api/encode.h) turns one into the
// JSON document AWS documents for it, so the controller builds no JSON. Times are epoch
// milliseconds; work lost is kept in instance-milliseconds and written in instance-seconds.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "api/explain_responses.h"
#include "api/history_responses.h"
#include "api/requests.h"
#include "api/tenancy_responses.h"
#include "common/time.h"
#include "model/capacity.h"
#include "model/config.h"
#include "model/decision.h"
#include "model/job.h"
#include "model/reason.h"

namespace allot::api {

// An action that answers an empty document: the deletes, TerminateServiceJob, TagResource,
// UntagResource.
struct EmptyResponse {};

// --- service environments ---

struct ServiceEnvironmentDetail {
  std::string name;
  std::string arn;
  std::string type;  // serviceEnvironmentType
  model::State state = model::State::kEnabled;
  std::string status;
  std::vector<model::CapacityLimit> capacity_limits;
  TagList tags;
};

// CreateServiceEnvironment and UpdateServiceEnvironment.
struct ServiceEnvironmentChanged {
  std::string name;
  std::string arn;
};

struct DescribeServiceEnvironmentsResponse {
  std::vector<ServiceEnvironmentDetail> environments;
  std::optional<std::string> next_token;
};

// --- scheduling policies ---

struct SchedulingPolicyDetail {
  std::string name;
  std::string arn;
  // quotaSharePolicy.idleResourceAssignmentStrategy; none: no quotaSharePolicy.
  std::optional<std::string> idle_resource_assignment;
  TagList tags;
};

// CreateSchedulingPolicy (UpdateSchedulingPolicy answers an empty document).
struct SchedulingPolicyCreated {
  std::string name;
  std::string arn;
};

struct DescribeSchedulingPoliciesResponse {
  std::vector<SchedulingPolicyDetail> policies;
};

// Each entry is only the policy's ARN.
struct ListSchedulingPoliciesResponse {
  std::vector<std::string> arns;
  std::optional<std::string> next_token;
};

// --- job queues ---

struct JobQueueDetail {
  std::string name;
  std::string arn;
  model::State state = model::State::kEnabled;
  std::string status;
  std::string status_reason;
  std::int32_t priority = 0;
  std::vector<std::pair<std::int32_t, std::string>> environment_order;  // (order, environment)
  std::string type;                                                     // jobQueueType
  std::string scheduling_policy_arn;                                    // empty: none
  std::vector<model::JobStateTimeLimitAction> time_limit_actions;
  TagList tags;
};

// CreateJobQueue and UpdateJobQueue.
struct JobQueueChanged {
  std::string name;
  std::string arn;
};

struct DescribeJobQueuesResponse {
  std::vector<JobQueueDetail> queues;
  std::optional<std::string> next_token;
};

// --- quota shares ---

// DescribeQuotaShare's answer; ListQuotaShares' entries leave the tags out.
struct QuotaShareDetail {
  std::string name;
  std::string arn;
  std::string job_queue_arn;
  std::vector<model::CapacityLimit> capacity_limits;
  model::SharingStrategy strategy = model::SharingStrategy::kReserve;
  std::optional<std::int64_t> borrow_limit;
  bool in_share_preemption = false;
  model::State state = model::State::kEnabled;
  std::string status;
  std::optional<TagList> tags;  // none: a list entry
};

// CreateQuotaShare and UpdateQuotaShare.
struct QuotaShareChanged {
  std::string name;
  std::string arn;
};

struct ListQuotaSharesResponse {
  std::vector<QuotaShareDetail> shares;
  std::optional<std::string> next_token;
};

// --- service jobs ---

// SubmitServiceJob and UpdateServiceJob.
struct ServiceJobChanged {
  std::string arn;
  std::string name;
  std::string id;
};

struct AttemptDetail {
  std::string resource_arn;  // serviceResourceId {name: TrainingJobArn, value}
  Timestamp started_at = 0;
  Timestamp stopped_at = 0;  // 0: still running (no stoppedAt, no statusReason)
  std::string status_reason;
};

// The fields ListServiceJobs' summary and DescribeServiceJob share.
struct ServiceJobSummary {
  std::string arn;
  std::string id;
  std::string name;
  Timestamp created_at = 0;
  Timestamp scheduled_at = 0;  // 0: not written
  Timestamp started_at = 0;
  Timestamp stopped_at = 0;
  std::string share;  // quotaShareName; empty: not written
  model::JobStatus status = model::JobStatus::kSubmitted;
  std::string status_reason;  // empty: not written
  model::Demand capacity_usage;
  std::string latest_attempt_arn;  // empty: no attempt yet
};

// Allot's extensions of DescribeServiceJob, under "allot". A job named there is left unnamed
// (its id and name unset, its share kept) for a caller who may not describe it.
struct RunnerUpDetail {
  std::optional<std::string> job_id;
  std::optional<std::string> job_name;
  std::string share;
  model::PreemptionRule rule = model::PreemptionRule::kReclaim;
  bool put_back = false;
  VictimKey key;
};

struct PreemptionDetail {
  int attempt = 0;
  std::optional<std::string> preemptor;  // its job id
  std::optional<std::string> preemptor_name;
  std::optional<std::string> preemptor_share;
  model::PreemptionRule rule = model::PreemptionRule::kReclaim;
  VictimKey key;
  Timestamp at = 0;
  std::optional<Duration> work_lost;  // instance-milliseconds, once the attempt stopped
  std::optional<RunnerUpDetail> runner_up;
};

struct VictimDetail {
  std::optional<std::string> job_id;
  std::optional<std::string> job_name;
  std::string share;
  int attempt = 0;
  model::PreemptionRule rule = model::PreemptionRule::kReclaim;
  Duration work_lost = 0;  // instance-milliseconds when chosen
};

struct PreemptionMade {
  Timestamp at = 0;
  std::vector<VictimDetail> victims;
};

struct WaitingDetail {
  model::WaitRule rule = model::WaitRule::kNotWaiting;
  std::string unit;
  std::int64_t missing = 0;
  std::int64_t position_in_share = 0;
  std::int64_t position_in_queue = 0;
  std::string message;
};

struct JobExtensions {
  model::JobId seq = 0;
  std::int32_t attempt = 0;
  std::int32_t failed_attempts = 0;
  std::int32_t preemptions = 0;
  Timestamp last_checkpoint = 0;
  std::vector<PreemptionDetail> preemption_records;
  Timestamp runnable_since = 0;  // 0: not written
  std::string submitted_by;      // empty: not written
  // Per attempt (1-based), what the sandbox enforced.
  std::vector<std::pair<int, std::string>> attempt_limits;
  std::optional<std::int64_t> attempt_timeout_seconds;
  std::optional<model::DispatchMode> dispatch_mode;
  std::optional<std::pair<model::StopKind, std::string>> stopping;  // kind, reason
  std::optional<model::PreemptionRule> stop_rule;
  std::vector<PreemptionMade> preemptions_made;  // empty: not written
  std::optional<WaitingDetail> waiting_reason;
  // The job's tree in the data directory, once it ended and was measured; when it was removed.
  std::optional<std::int64_t> files_bytes;
  Timestamp files_removed_at = 0;  // 0: not removed
};

struct ServiceJobDetail {
  ServiceJobSummary summary;
  std::string job_queue_arn;
  std::int32_t scheduling_priority = 0;
  bool is_terminated = false;
  std::vector<AttemptDetail> attempts;
  TagList tags;
  std::optional<model::RetryStrategy> retry;
  std::optional<std::int64_t> timeout_config_seconds;
  std::optional<std::int32_t> preemption_retries;
  // preemptionSummary, when an attempt was preempted: the count, and the newest preempted
  // attempts (AWS keeps a window of 5).
  int preempted_attempt_count = 0;
  std::vector<AttemptDetail> recent_preempted_attempts;
  std::optional<std::string> payload;  // serviceRequestPayload, as submitted
  JobExtensions allot;
};

struct ListServiceJobsResponse {
  std::vector<ServiceJobSummary> jobs;
  std::optional<std::string> next_token;
};

// --- GetJobQueueSnapshot ---

struct FrontEntry {
  std::optional<std::string> job_arn;  // none for a job the caller may not describe
  Timestamp earliest_time_at_position = 0;
};

struct ShareUtilization {
  std::string name;
  model::Demand used;
  model::Demand borrowed;
  model::Demand lent;
  std::int64_t waiting_jobs = 0;
};

struct JobQueueSnapshotResponse {
  Timestamp last_updated_at = 0;
  std::vector<FrontEntry> front_of_queue;
  std::vector<std::pair<std::string, std::vector<FrontEntry>>> front_of_shares;  // by share
  model::Demand total_usage;
  // quotaShareUtilization, for a queue with quota shares.
  std::optional<std::vector<ShareUtilization>> share_utilization;
};

// --- tags ---

struct ListTagsForResourceResponse {
  TagList tags;
};

// What the controller answers for an action, by the action's response type.
using Response =
    std::variant<EmptyResponse, ServiceEnvironmentChanged, DescribeServiceEnvironmentsResponse,
                 SchedulingPolicyCreated, DescribeSchedulingPoliciesResponse,
                 ListSchedulingPoliciesResponse, JobQueueChanged, DescribeJobQueuesResponse,
                 QuotaShareDetail, QuotaShareChanged, ListQuotaSharesResponse, ServiceJobChanged,
                 ServiceJobDetail, ListServiceJobsResponse, JobQueueSnapshotResponse,
                 ListTagsForResourceResponse,
                 // Allot's own endpoints (explain_responses.h, history_responses.h,
                 // tenancy_responses.h).
                 ExplainResponse, WhatIfResponse, UsageReportResponse, UsageHistoryResponse,
                 JobHistoryResponse, ListUsersResponse, UserResponse, NewAccessKeyResponse,
                 UserPolicyResponse, AuditPageResponse, LogChunkResponse>;

}  // namespace allot::api
