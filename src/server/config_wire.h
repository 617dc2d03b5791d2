#pragma once

// The configuration records as AWS's typed responses (api/responses.h); api/encode.h writes
// their documents. Their stored form is config_codec.h's.

#include "api/responses.h"
#include "server/config_records.h"

namespace allot::server {

// Each record as AWS describes it (api/encode.h writes the document); a share without its tags
// is a ListQuotaShares entry.
api::ServiceEnvironmentDetail ToWire(const ServiceEnvironmentRecord& env);
api::SchedulingPolicyDetail ToWire(const SchedulingPolicyRecord& policy);
api::JobQueueDetail ToWire(const JobQueueRecord& queue);
api::QuotaShareDetail ToWire(const QuotaShareRecord& share, bool with_tags = true);

}  // namespace allot::server
