#pragma once

// The parts of a SageMaker CreateTrainingJob request (a SubmitServiceJob's
// serviceRequestPayload) that Allot reads, decoded and checked. Nothing here touches the file
// system: where a file:// URI leads is the server's to check (server/local_paths.h).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/capacity.h"

namespace allot::api {

// What the executor needs to run a job.
struct LaunchInfo {
  std::string training_job_name;
  std::vector<std::string> argv;
  std::map<std::string, std::string> environment;
  std::string instance_type;
  int instance_count = 1;
  std::map<std::string, std::string> hyperparameters;
  std::vector<std::pair<std::string, std::string>> channels;  // name, local directory
  std::string checkpoint_local_path = "/opt/ml/checkpoints";
  std::string checkpoint_sync_dir;  // CheckpointConfig.S3Uri when it is file://
};

struct ParsedPayload {
  LaunchInfo launch;
  model::Demand demand;
  std::optional<std::int64_t> max_runtime_seconds;  // StoppingCondition.MaxRuntimeInSeconds
  // OutputDataConfig.S3OutputPath when it is file://, as a local directory (nothing writes there
  // yet; it is checked like the other local paths). Another scheme is ignored, as before.
  std::string output_dir;
};

// Where a payload comes from. A rule added after a job was accepted (CheckpointConfig.LocalPath
// /tmp, since 2026-12-07) holds for new submissions only: a stored job that no longer parsed
// would fail every launch, and a running one would lose its checkpoints' sync and its claim.
enum class PayloadSource { kSubmission, kStored };

// Throws ClientError naming the field. `job_name` is the default TrainingJobName. Checks the
// form of each file:// URI only; CheckLocalPaths (server/local_paths.h) checks where they lead.
ParsedPayload ParsePayload(const std::string& payload, const std::string& job_name,
                           PayloadSource source = PayloadSource::kSubmission);

// Whether `path` is `dir` or lies inside it (both absolute and clean; "/" holds every path).
bool IsUnder(const std::string& path, const std::string& dir);

}  // namespace allot::api
