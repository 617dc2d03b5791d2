#pragma once

// A job record in AWS's wire shapes: DescribeServiceJob's document and ListServiceJobs' summary.
// The only place a job becomes JSON for a caller.

#include "server/job_record.h"
#include "server/json.h"

namespace allot::server {

struct ArnContext {
  std::string region;
  std::string account;

  std::string Job(const std::string& id) const { return Prefix() + "service-job/" + id; }
  std::string Queue(std::string_view name) const {
    return Prefix() + "job-queue/" + std::string(name);
  }
  std::string Prefix() const { return "arn:aws:batch:" + region + ":" + account + ":"; }
};

// DescribeServiceJob without serviceRequestPayload and the waiting reason (the caller adds them).
Json DescribeJob(const JobRecord& job, const ArnContext& arns);
// A jobSummaryList entry.
Json SummarizeJob(const JobRecord& job, const ArnContext& arns);
// capacityUsage: [{capacityUnit, quantity}]
Json CapacityUsage(const model::Demand& demand);

}  // namespace allot::server
