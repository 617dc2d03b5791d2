#pragma once

// The stored form of a job record (store::Kind::kJob, keyed by the job id, which the value does
// not repeat): compact JSON with fixed field names, versioned by "v". A record written before the
// typed records (a DescribeServiceJob document with an "allot" object, no "v") is read too, so a
// data directory survives the upgrade.

#include <string>

#include "common/status.h"
#include "server/job_record.h"

namespace allot::server {

// The queue and share come back as names; the caller interns them.
struct DecodedJob {
  JobRecord record;
  std::string queue;  // the job queue's name (an older record holds its ARN: the name is taken)
  std::string share;
  std::string submitted_by;
};

std::string EncodeJob(const JobRecord& job);
// Corruption (not JSON, a field of the wrong type) is an Internal error naming the job.
Result<DecodedJob> DecodeJob(std::string_view key, std::string_view value);

// A submission's client token (store::Kind::kClientToken, keyed by queue and token): the job it
// made and the hash of the request, so that a retry answers that job and a different request
// with the same token is refused. Stored as {"hash":...,"jobId":...}.
struct ClientTokenRecord {
  std::string job_id;
  std::string request_hash;
};
std::string EncodeClientToken(const ClientTokenRecord& token);
Result<ClientTokenRecord> DecodeClientToken(std::string_view key, std::string_view value);

}  // namespace allot::server
