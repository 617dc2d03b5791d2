#pragma once

// A job record as AWS's typed responses (api/responses.h): DescribeServiceJob's document and
// ListServiceJobs' summary. api/encode.h writes them.

#include <string>
#include <string_view>

#include "api/responses.h"
#include "server/job_record.h"

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

// DescribeServiceJob without serviceRequestPayload, the waiting reason and the redaction of the
// jobs its records name (the caller adds them).
api::ServiceJobDetail DescribeJob(const JobRecord& job, const ArnContext& arns);
// A jobSummaryList entry.
api::ServiceJobSummary SummarizeJob(const JobRecord& job, const ArnContext& arns);

}  // namespace allot::server
