#pragma once

// Building and reading service jobs: the pieces of submit/jobs/describe that are worth testing
// without a server.

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/client.h"

namespace allot::cli {

inline const std::vector<std::string> kJobStatuses = {
    "SUBMITTED", "PENDING", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING", "SUCCEEDED", "FAILED"};

struct SubmitOptions {
  std::string queue;
  std::string share;
  std::string name;  // empty: from the command
  std::optional<std::int64_t> priority;
  std::string instance_type;  // empty: the first capacity unit of the queue's environment
  std::int64_t instance_count = 1;
  std::vector<std::string> env;              // K=V
  std::vector<std::string> hyperparameters;  // K=V: the payload's HyperParameters
  std::string checkpoint_uri;                // CheckpointConfig.S3Uri (file:///dir on this machine)
  std::optional<std::int64_t> retries;
  std::optional<std::int64_t> preemption_retries;
  std::optional<std::int64_t> timeout_seconds;
  std::vector<std::string> command;  // entrypoint, then arguments
};

// The SubmitServiceJob request: the SageMaker CreateTrainingJob payload (TrainingJobName,
// AlgorithmSpecification.ContainerEntrypoint = command[0], ContainerArguments = the rest,
// ResourceConfig, Environment) and the Batch fields. `instance_type` must be set.
// Throws CliError for a bad --env or an empty command.
Json BuildSubmitRequest(const SubmitOptions& o, const std::string& default_name);

// A job name from the command: its base name, reduced to letters, digits, '-' and '_'.
std::string JobNameFromCommand(const std::vector<std::string>& command);

// The human-readable DescribeServiceJob.
void PrintJob(const Json& job, std::ostream& out);

// "team-a" from ".../job-queue/training" etc.: the text after the last '/'.
std::string LastPathPart(const std::string& arn);

}  // namespace allot::cli
