#pragma once

// The parts of a SageMaker CreateTrainingJob request (serviceRequestPayload) that Allot reads.

#include <optional>
#include <string>

#include "model/capacity.h"
#include "server/controller.h"

namespace allot::server {

struct ParsedPayload {
  LaunchInfo launch;
  model::Demand demand;
  std::optional<std::int64_t> max_runtime_seconds;  // StoppingCondition.MaxRuntimeInSeconds
};

// Throws ClientError naming the field. `job_name` is the default TrainingJobName.
ParsedPayload ParsePayload(const std::string& payload, const std::string& job_name);

// Refuses (ClientError) a file:// input channel whose source does not exist on this machine, so
// that the job is refused at submission instead of failing at launch.
void CheckChannelSources(const LaunchInfo& launch);

}  // namespace allot::server
