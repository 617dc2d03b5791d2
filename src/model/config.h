#pragma once

// Configuration values as the AWS Batch quota-management API describes them. Validation of
// names and ranges happens where they enter (api/, cli/); the engine re-checks what it relies on.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/capacity.h"

namespace allot::model {

enum class State : std::uint8_t { kEnabled, kDisabled };

// resourceSharingConfiguration.strategy
enum class SharingStrategy : std::uint8_t { kReserve, kLend, kLendAndBorrow };

std::string_view ToString(State s);
std::string_view ToString(SharingStrategy s);
std::optional<State> ParseState(std::string_view s);
std::optional<SharingStrategy> ParseSharingStrategy(std::string_view s);

// borrowLimit: a percentage of the share's own maxCapacity, per unit; -1 means unlimited.
constexpr std::int64_t kUnlimitedBorrow = -1;

struct ServiceEnvironmentConfig {
  std::string name;
  std::vector<CapacityLimit> capacity_limits;
  State state = State::kEnabled;
};

// jobStateTimeLimitActions entry: a RUNNABLE job whose status reason starts with `reason` for
// `max_time_seconds` is terminated (the only action SAGEMAKER_TRAINING queues accept).
struct JobStateTimeLimitAction {
  std::string reason;
  std::int64_t max_time_seconds = 0;
};

struct JobQueueConfig {
  std::string name;
  std::string service_environment;
  State state = State::kEnabled;
  std::vector<JobStateTimeLimitAction> time_limit_actions;
};

struct QuotaShareConfig {
  std::string queue;
  std::string name;
  std::vector<CapacityLimit> capacity_limits;
  SharingStrategy strategy = SharingStrategy::kReserve;
  std::int64_t borrow_limit = kUnlimitedBorrow;  // only meaningful with kLendAndBorrow
  bool in_share_preemption = false;
  State state = State::kEnabled;
};

}  // namespace allot::model
