#include "model/capacity.h"

#include <algorithm>

namespace allot::model {

Result<Demand> NormalizeDemand(std::vector<UnitCount> parts) {
  if (parts.empty()) return InvalidArgument("a job must need at least one instance");
  for (const UnitCount& p : parts) {
    if (p.unit.empty()) return InvalidArgument("instance type must not be empty");
    if (p.count < 1) {
      return InvalidArgument("instance count for " + p.unit + " must be at least 1, got " +
                             std::to_string(p.count));
    }
  }
  std::sort(parts.begin(), parts.end(),
            [](const UnitCount& a, const UnitCount& b) { return a.unit < b.unit; });
  Demand out;
  for (UnitCount& p : parts) {
    if (!out.empty() && out.back().unit == p.unit) {
      out.back().count += p.count;
    } else {
      out.push_back(std::move(p));
    }
  }
  return out;
}

std::int64_t TotalInstances(const Demand& demand) {
  std::int64_t total = 0;
  for (const UnitCount& p : demand) total += p.count;
  return total;
}

std::string DemandToString(const Demand& demand) {
  std::string s;
  for (const UnitCount& p : demand) {
    if (!s.empty()) s += ",";
    s += std::to_string(p.count) + "x" + p.unit;
  }
  return s;
}

}  // namespace allot::model
