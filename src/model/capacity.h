#pragma once

// Capacity is counted in instances of one instance type (a "capacity unit", e.g. ml.g5.xlarge).

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace allot::model {

// One `capacityLimits` entry of a service environment or a quota share.
struct CapacityLimit {
  std::string unit;
  std::int64_t max_capacity = 0;

  bool operator==(const CapacityLimit&) const = default;
};

// What a job needs of one unit: ResourceConfig.InstanceCount of InstanceType.
struct UnitCount {
  std::string unit;
  std::int64_t count = 0;

  bool operator==(const UnitCount&) const = default;
};

// A job's need, sorted by unit with one entry per unit (instance groups add up per type).
using Demand = std::vector<UnitCount>;

// Sorts by unit and merges repeated units. Fails on an empty demand, an empty unit name or a
// count below 1.
Result<Demand> NormalizeDemand(std::vector<UnitCount> parts);

// Total instances over all units: the "instances" of the work-lost figure.
std::int64_t TotalInstances(const Demand& demand);

std::string DemandToString(const Demand& demand);

}  // namespace allot::model
