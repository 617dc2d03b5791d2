#include "model/rules.h"

#include <set>
#include <string>

namespace allot::model::rules {

namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

std::string Field(std::string_view field) { return std::string(field); }

}  // namespace

Status CheckRange(std::int64_t value, std::int64_t lo, std::int64_t hi, std::string_view field) {
  if (value >= lo && value <= hi) return Status::Ok();
  return InvalidArgument(Field(field) + " must be between " + std::to_string(lo) + " and " +
                         std::to_string(hi) + ", got " + std::to_string(value));
}

Status CheckName(std::string_view value, std::string_view field) {
  if (value.empty() || value.size() > kMaxNameLength) {
    return InvalidArgument(Field(field) + " must be 1 to 128 characters long, got " +
                           std::to_string(value.size()));
  }
  for (char c : value) {
    if (!IsAlnum(c) && c != '-' && c != '_') {
      return InvalidArgument(Field(field) +
                             " may contain only letters, digits, hyphens and underscores");
    }
  }
  return Status::Ok();
}

Status CheckCapacityUnit(std::string_view unit, std::string_view field) {
  const std::string allowed =
      " must be 1 to 64 letters, digits, '.', '-' or '_' starting with a "
      "letter or digit (an instance type such as ml.g5.xlarge, or "
      "NUM_INSTANCES)";
  if (unit.empty() || unit.size() > kMaxCapacityUnitLength || !IsAlnum(unit.front())) {
    return InvalidArgument(Field(field) + allowed);
  }
  for (char c : unit) {
    if (!IsAlnum(c) && c != '.' && c != '-' && c != '_') {
      return InvalidArgument(Field(field) + allowed);
    }
  }
  return Status::Ok();
}

Status CheckCapacityLimits(const std::vector<CapacityLimit>& limits, std::int64_t min_capacity,
                           std::string_view field) {
  if (limits.empty() || limits.size() > kMaxCapacityLimits) {
    return InvalidArgument(Field(field) + " must have 1 to 5 entries, got " +
                           std::to_string(limits.size()));
  }
  std::set<std::string_view> units;
  for (const CapacityLimit& l : limits) {
    ALLOT_RETURN_IF_ERROR(CheckCapacityUnit(l.unit, Field(field) + ".capacityUnit"));
    if (!units.insert(l.unit).second) {
      return InvalidArgument(Field(field) + ".capacityUnit " + l.unit + " appears more than once");
    }
    ALLOT_RETURN_IF_ERROR(CheckRange(l.max_capacity, min_capacity, kMaxCapacity,
                                     Field(field) + ".maxCapacity for " + l.unit));
  }
  return Status::Ok();
}

Status CheckBorrowLimit(std::int64_t borrow_limit, SharingStrategy strategy,
                        std::string_view field) {
  if (borrow_limit != kUnlimitedBorrow && (borrow_limit < 0 || borrow_limit > kMaxBorrowLimit)) {
    return InvalidArgument(Field(field) + " must be -1 (unlimited) or a percentage between 0 and " +
                           std::to_string(kMaxBorrowLimit) + ", got " +
                           std::to_string(borrow_limit));
  }
  if (borrow_limit != kUnlimitedBorrow && strategy != SharingStrategy::kLendAndBorrow) {
    return InvalidArgument(Field(field) + " is allowed only with strategy LEND_AND_BORROW, got " +
                           std::string(ToString(strategy)));
  }
  return Status::Ok();
}

Status CheckEnvironmentUnits(const std::vector<CapacityLimit>& limits, std::string_view field) {
  for (const CapacityLimit& l : limits) {
    if (l.unit == kNumInstances && limits.size() > 1) {
      return InvalidArgument(Field(field) +
                             ": NUM_INSTANCES caps every instance type together "
                             "and cannot be combined with other capacity units");
    }
  }
  return Status::Ok();
}

}  // namespace allot::model::rules
