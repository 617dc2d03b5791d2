#include "server/job_record.h"

namespace allot::server {

const std::vector<AttemptRecord>& JobRecord::attempts() const {
  static const std::vector<AttemptRecord> kNone;
  return history ? history->attempts : kNone;
}

const JobOptions& JobRecord::options() const {
  static const JobOptions kNone;
  return extra ? *extra : kNone;
}

model::JobSpec JobRecord::Spec() const {
  model::JobSpec spec;
  spec.id = seq;
  spec.queue = std::string(queue);
  spec.share = share.empty() ? kImplicitShare : std::string(share);
  spec.priority = priority;
  spec.demand = demand;
  spec.preemption_retries = options().preemption_retries;
  spec.retry = options().retry.value_or(model::RetryStrategy{});
  spec.attempt_timeout_seconds = attempt_timeout_seconds;
  spec.created_at = created_at;
  return spec;
}

int JobRecord::InstanceCount() const {
  std::int64_t n = 0;
  for (const model::UnitCount& u : demand) n += u.count;
  return static_cast<int>(n);
}

}  // namespace allot::server
