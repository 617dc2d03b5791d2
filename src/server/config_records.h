#pragma once

// Service environments, scheduling policies, job queues and quota shares as the controller keeps
// them: typed, so a handler reads a field instead of looking a key up in a JSON document (where
// a misspelt key reads as null and a wrong type throws far from its cause). The AWS wire
// documents, which are also the stored form, are made and read at the edges (config_wire.h,
// config_codec.h). Values the API accepts only one of (SAGEMAKER_TRAINING, VALID) are kept as the
// strings the documents hold, so a record always writes back the document it was read from.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/capacity.h"
#include "model/config.h"

namespace allot::server {

// A resource's tags, sorted by key (the order a JSON object has).
using TagList = std::vector<std::pair<std::string, std::string>>;

struct ServiceEnvironmentRecord {
  std::string name;
  std::string arn;
  std::string type = "SAGEMAKER_TRAINING";  // serviceEnvironmentType
  model::State state = model::State::kEnabled;
  std::string status = "VALID";
  std::vector<model::CapacityLimit> capacity_limits;
  TagList tags;
};

struct SchedulingPolicyRecord {
  std::string name;
  std::string arn;
  // quotaSharePolicy.idleResourceAssignmentStrategy; without a quotaSharePolicy the queues that
  // use the policy are plain FIFO queues and take no quota shares.
  std::optional<std::string> idle_resource_assignment;
  TagList tags;

  bool takes_quota_shares() const { return idle_resource_assignment.has_value(); }
};

// A serviceEnvironmentOrder entry.
struct EnvironmentOrder {
  std::int32_t order = 1;
  std::string service_environment;  // its name
};

struct JobQueueRecord {
  std::string name;
  std::string arn;
  model::State state = model::State::kEnabled;
  std::string status = "VALID";
  std::string status_reason = "JobQueue Healthy";
  std::int32_t priority = 0;
  std::vector<EnvironmentOrder> environment_order;  // exactly one entry (CreateJobQueue)
  std::string type = "SAGEMAKER_TRAINING";          // jobQueueType
  std::string scheduling_policy_arn;                // empty: none
  // Each is "state RUNNABLE, action TERMINATE", the only entries these queues accept.
  std::vector<model::JobStateTimeLimitAction> time_limit_actions;
  TagList tags;

  // The name of the service environment the queue runs on.
  const std::string& environment() const { return environment_order.front().service_environment; }
};

struct QuotaShareRecord {
  std::string name;
  std::string arn;
  std::string queue;  // the job queue's name: the end of job_queue_arn, not stored apart
  std::string job_queue_arn;
  std::vector<model::CapacityLimit> capacity_limits;
  model::SharingStrategy strategy = model::SharingStrategy::kReserve;
  // As given; LEND_AND_BORROW without one holds -1 (unlimited), the others may hold none.
  std::optional<std::int64_t> borrow_limit;
  bool in_share_preemption = false;
  model::State state = model::State::kEnabled;
  std::string status = "VALID";
  TagList tags;

  // The controller's key for it: "<queue>/<share>".
  std::string Key() const { return queue + "/" + name; }
};

// The environment caps all instances together (capacityUnit NUM_INSTANCES, which then stands
// alone in its limits) rather than per instance type.
bool UsesNumInstances(const ServiceEnvironmentRecord& env);

// The engine's configuration of each (a queue without quota shares also gets an implicit share,
// which the controller adds).
model::ServiceEnvironmentConfig EngineConfig(const ServiceEnvironmentRecord& env);
model::JobQueueConfig EngineConfig(const JobQueueRecord& queue);
model::QuotaShareConfig EngineConfig(const QuotaShareRecord& share);

}  // namespace allot::server
