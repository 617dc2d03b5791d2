// The actions a policy may name. Every operation of the AWS Batch API, from the botocore model
// of the batch service (botocore 1.43.11, API version 2016-08-10, 45 operations; list them with
// `python3 -c "import botocore.session as s; print(s.get_session().get_service_model('batch')
// .operation_names)"`; shared/tools/api-model reads the same model), not only those Allot serves,
// so that a policy written for AWS Batch parses here; then Allot's extensions. Refresh from a newer
// botocore when AWS adds operations.

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "auth/policy.h"
#include "common/strings.h"

namespace allot::auth {
namespace {

constexpr std::array<std::string_view, 50> kKnownActions = {
    "batch:CancelJob",
    "batch:CreateComputeEnvironment",
    "batch:CreateConsumableResource",
    "batch:CreateJobQueue",
    "batch:CreateQuotaShare",
    "batch:CreateSchedulingPolicy",
    "batch:CreateServiceEnvironment",
    "batch:DeleteComputeEnvironment",
    "batch:DeleteConsumableResource",
    "batch:DeleteJobQueue",
    "batch:DeleteQuotaShare",
    "batch:DeleteSchedulingPolicy",
    "batch:DeleteServiceEnvironment",
    "batch:DeregisterJobDefinition",
    "batch:DescribeComputeEnvironments",
    "batch:DescribeConsumableResource",
    "batch:DescribeJobDefinitions",
    "batch:DescribeJobQueues",
    "batch:DescribeJobs",
    "batch:DescribeQuotaShare",
    "batch:DescribeSchedulingPolicies",
    "batch:DescribeServiceEnvironments",
    "batch:DescribeServiceJob",
    "batch:GetJobQueueSnapshot",
    "batch:ListConsumableResources",
    "batch:ListJobs",
    "batch:ListJobsByConsumableResource",
    "batch:ListQuotaShares",
    "batch:ListSchedulingPolicies",
    "batch:ListServiceJobs",
    "batch:ListTagsForResource",
    "batch:RegisterJobDefinition",
    "batch:SubmitJob",
    "batch:SubmitServiceJob",
    "batch:TagResource",
    "batch:TerminateJob",
    "batch:TerminateServiceJob",
    "batch:UntagResource",
    "batch:UpdateComputeEnvironment",
    "batch:UpdateConsumableResource",
    "batch:UpdateJobQueue",
    "batch:UpdateQuotaShare",
    "batch:UpdateSchedulingPolicy",
    "batch:UpdateServiceEnvironment",
    "batch:UpdateServiceJob",
    // Allot's extensions: its own HTTP endpoints and administration.
    "allot:GetJobLogs",
    "allot:ReadAudit",
    "allot:ManageUsers",
    "allot:GetJobExplanation",
    "allot:WhatIf",
};

}  // namespace

bool IsKnownAction(std::string_view action) {
  for (std::string_view known : kKnownActions) {
    if (EqualsIgnoreCase(known, action)) return true;
  }
  return false;
}

std::vector<std::string> KnownActions() { return {kKnownActions.begin(), kKnownActions.end()}; }

}  // namespace allot::auth
