#pragma once

// The rules every Allot configuration and job obeys, written once. The wire layer checks requests
// against them (naming the field the caller sent), `allot apply` checks its files against them,
// and the engine re-checks what it relies on. Where AWS documents a bound it is AWS's; where it
// documents none, the bound is Allot's and is stated here (so that no sum of accepted values can
// overflow: 20 shares x 5 units x kMaxCapacity x (1 + kMaxBorrowLimit / 100) stays far below 2^62).

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "model/capacity.h"
#include "model/config.h"

namespace allot::model::rules {

// --- AWS's documented bounds ---
inline constexpr std::int64_t kMaxSchedulingPriority = 9999;  // schedulingPriority 0-9999
inline constexpr std::int64_t kMaxJobQueuePriority = 1000;    // job queue priority 0-1000
inline constexpr std::size_t kMaxCapacityLimits = 5;          // capacityLimits: 1-5 entries
inline constexpr std::size_t kMaxSharesPerQueue = 20;
inline constexpr std::int64_t kMinTimeLimitSeconds = 600;  // jobStateTimeLimitActions
inline constexpr std::int64_t kMaxTimeLimitSeconds = 86400;
inline constexpr std::int64_t kMaxRetryAttempts = 10;  // retryStrategy.attempts 1-10
inline constexpr std::size_t kMaxEvaluateOnExit = 5;
inline constexpr std::size_t kMaxOnStatusReason = 512;
inline constexpr std::size_t kMaxNameLength = 128;  // resource and job names
inline constexpr std::size_t kMaxTags = 50;
inline constexpr std::size_t kMaxTagKeyLength = 128;
inline constexpr std::size_t kMaxTagValueLength = 256;
inline constexpr std::size_t kMaxClientTokenLength = 64;
inline constexpr std::int64_t kMaxPageSize = 100;      // maxResults 1-100
inline constexpr std::int64_t kMaxInt32 = 2147483647;  // every AWS Integer shape

// --- Allot's bounds where AWS documents none ---
inline constexpr std::int64_t kMaxCapacity = 1'000'000;                // maxCapacity, instances
inline constexpr std::int64_t kMaxBorrowLimit = 10'000;                // borrowLimit, percent
inline constexpr std::int64_t kMaxAttemptDurationSeconds = 1'209'600;  // 14 days
inline constexpr std::int64_t kMaxPreemptionRetries = 10'000;
inline constexpr std::size_t kMaxTimeLimitActions = 5;
inline constexpr std::size_t kMaxCapacityUnitLength = 64;
inline constexpr std::size_t kMaxJobQueueReasonLength = 256;    // jobStateTimeLimitActions.reason
inline constexpr std::size_t kMaxTerminateReasonLength = 1024;  // TerminateServiceJob.reason

// The capacity unit of a service environment whose queues have no quota-share policy: one limit
// for all instances together, whatever their type (AWS's CapacityLimit documentation).
inline constexpr std::string_view kNumInstances = "NUM_INSTANCES";

// "<field> must be between <lo> and <hi>, got <value>".
Status CheckRange(std::int64_t value, std::int64_t lo, std::int64_t hi, std::string_view field);

// AWS resource and job names: 1-128 letters, digits, hyphens and underscores.
Status CheckName(std::string_view value, std::string_view field);

// A capacity unit: NUM_INSTANCES or an instance type such as ml.g5.xlarge: 1-64 letters, digits,
// '.', '-' and '_', starting with a letter or digit (it becomes part of paths and metric labels).
Status CheckCapacityUnit(std::string_view unit, std::string_view field);

// capacityLimits: 1-5 entries, each unit valid and listed once, min_capacity <= maxCapacity <=
// kMaxCapacity. `field` is the list's name ("capacityLimits").
Status CheckCapacityLimits(const std::vector<CapacityLimit>& limits, std::int64_t min_capacity,
                           std::string_view field);

// borrowLimit: -1 (unlimited) or 0-kMaxBorrowLimit percent, and only with LEND_AND_BORROW.
Status CheckBorrowLimit(std::int64_t borrow_limit, SharingStrategy strategy,
                        std::string_view field);

// A service environment's limits: NUM_INSTANCES stands alone (it caps every instance type).
Status CheckEnvironmentUnits(const std::vector<CapacityLimit>& limits, std::string_view field);

}  // namespace allot::model::rules
