#include "auth/conditions.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <system_error>

#include "auth/arn.h"
#include "common/strings.h"

namespace allot::auth {
namespace {

using Op = ConditionOperator;

struct OperatorEntry {
  std::string_view name;
  Op op;
};

constexpr std::array<OperatorEntry, 18> kOperators = {{
    {"StringEquals", Op::kStringEquals},
    {"StringNotEquals", Op::kStringNotEquals},
    {"StringEqualsIgnoreCase", Op::kStringEqualsIgnoreCase},
    {"StringNotEqualsIgnoreCase", Op::kStringNotEqualsIgnoreCase},
    {"StringLike", Op::kStringLike},
    {"StringNotLike", Op::kStringNotLike},
    {"NumericEquals", Op::kNumericEquals},
    {"NumericNotEquals", Op::kNumericNotEquals},
    {"NumericLessThan", Op::kNumericLessThan},
    {"NumericLessThanEquals", Op::kNumericLessThanEquals},
    {"NumericGreaterThan", Op::kNumericGreaterThan},
    {"NumericGreaterThanEquals", Op::kNumericGreaterThanEquals},
    {"ArnEquals", Op::kArnEquals},
    {"ArnLike", Op::kArnLike},
    {"ArnNotEquals", Op::kArnNotEquals},
    {"ArnNotLike", Op::kArnNotLike},
    {"Bool", Op::kBool},
    {"Null", Op::kNull},
}};

// The service-specific keys Allot fills in; every aws: key is accepted besides.
constexpr std::array<std::string_view, 3> kServiceKeys = {
    "batch:SchedulingPriority", "batch:ShareIdentifier", "allot:QuotaShare"};

constexpr std::string_view kIfExists = "IfExists";

enum class Family : std::uint8_t { kString, kNumeric, kArn, kBool, kNull };

// Relies on ConditionOperator's order in policy.h: strings, numbers, ARNs, then Bool and Null.
Family FamilyOf(Op op) {
  if (op <= Op::kStringNotLike) return Family::kString;
  if (op <= Op::kNumericGreaterThanEquals) return Family::kNumeric;
  if (op <= Op::kArnNotLike) return Family::kArn;
  return op == Op::kBool ? Family::kBool : Family::kNull;
}

// The operators that hold when the key matches none of the values (and when it is missing).
bool IsNegated(Op op) {
  return op == Op::kStringNotEquals || op == Op::kStringNotEqualsIgnoreCase ||
         op == Op::kStringNotLike || op == Op::kNumericNotEquals || op == Op::kArnNotEquals ||
         op == Op::kArnNotLike;
}

// A finite decimal number, all of `text` ("50", "-2.5", "1e3"); no sign '+', no spaces.
std::optional<double> ParseNumber(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

bool CompareNumbers(Op op, std::string_view policy_value, std::string_view actual) {
  const std::optional<double> want = ParseNumber(policy_value);
  const std::optional<double> have = ParseNumber(actual);
  if (!want || !have) return false;  // a request value that is no number matches nothing
  switch (op) {
    case Op::kNumericLessThan:
      return *have < *want;
    case Op::kNumericLessThanEquals:
      return *have <= *want;
    case Op::kNumericGreaterThan:
      return *have > *want;
    case Op::kNumericGreaterThanEquals:
      return *have >= *want;
    default:  // NumericEquals, and NumericNotEquals before its negation
      return *have == *want;
  }
}

// Whether the request's `actual` value matches one policy value, before any negation.
bool ValueMatches(Op op, std::string_view policy_value, std::string_view actual, bool variables,
                  const Context& context) {
  switch (op) {
    case Op::kStringEquals:
    case Op::kStringNotEquals:
      return PolicyTextMatches(policy_value, actual, Comparison::kEquals, variables, context);
    case Op::kStringEqualsIgnoreCase:
    case Op::kStringNotEqualsIgnoreCase:
      return PolicyTextMatches(policy_value, actual, Comparison::kEqualsIgnoreCase, variables,
                               context);
    case Op::kStringLike:
    case Op::kStringNotLike:
      return PolicyTextMatches(policy_value, actual, Comparison::kLike, variables, context);
    case Op::kArnEquals:
    case Op::kArnLike:
    case Op::kArnNotEquals:
    case Op::kArnNotLike:
      return ArnMatches(policy_value, actual, variables, context);
    case Op::kBool:
      return EqualsIgnoreCase(policy_value, actual);
    case Op::kNull:
      return false;  // decided by presence alone, in ConditionHolds
    default:
      return CompareNumbers(op, policy_value, actual);
  }
}

}  // namespace

std::optional<OperatorName> ParseOperatorName(std::string_view name) {
  const bool if_exists = name.ends_with(kIfExists);
  if (if_exists) name.remove_suffix(kIfExists.size());
  for (const OperatorEntry& entry : kOperators) {
    if (entry.name != name) continue;
    if (if_exists && entry.op == Op::kNull) return std::nullopt;
    return OperatorName{.op = entry.op, .if_exists = if_exists};
  }
  return std::nullopt;
}

std::string OperatorNameText(ConditionOperator op, bool if_exists) {
  for (const OperatorEntry& entry : kOperators) {
    if (entry.op == op) return std::string(entry.name) + (if_exists ? "IfExists" : "");
  }
  return "Unknown";  // unreachable for a valid enumerator
}

std::string AllowedOperatorsText() {
  std::string out;
  for (const OperatorEntry& entry : kOperators) out += std::string(entry.name) + ", ";
  out.resize(out.size() - 2);
  return out + "; each but Null also with the suffix IfExists";
}

Status CheckConditionKey(std::string_view key) {
  if (key.size() > 4 && EqualsIgnoreCase(key.substr(0, 4), "aws:")) return Status::Ok();
  for (std::string_view known : kServiceKeys) {
    if (EqualsIgnoreCase(known, key)) return Status::Ok();
  }
  return InvalidArgument("unknown condition key '" + std::string(key) + "'; allowed: aws:* keys, " +
                         Join(kServiceKeys, ", "));
}

Status CheckConditionValue(ConditionOperator op, bool variables, std::string& value) {
  switch (FamilyOf(op)) {
    case Family::kNumeric:
      if (ParseNumber(value)) return Status::Ok();
      return InvalidArgument("'" + value + "' is not a number; Numeric operators compare numbers");
    case Family::kBool:
    case Family::kNull:
      if (EqualsIgnoreCase(value, "true") || EqualsIgnoreCase(value, "false")) {
        value = AsciiLower(value);
        return Status::Ok();
      }
      return InvalidArgument("'" + value + "' is not true or false");
    case Family::kArn:
      if (variables) ALLOT_RETURN_IF_ERROR(CheckVariables(value));
      return CheckArnPattern(value, variables);
    case Family::kString:
      return variables ? CheckVariables(value) : Status::Ok();
  }
  return Status::Ok();
}

bool ConditionHolds(const Condition& condition, const Context& context, bool variables) {
  const auto it = context.find(AsciiLower(condition.key));
  const bool present = it != context.end();
  const auto& values = condition.values;
  if (condition.op == Op::kNull) {  // "true": the key must be missing; "false": present
    return std::any_of(values.begin(), values.end(),
                       [&](const std::string& v) { return (v == "true") != present; });
  }
  if (!present) return condition.if_exists || IsNegated(condition.op);
  const bool any = std::any_of(values.begin(), values.end(), [&](const std::string& v) {
    return ValueMatches(condition.op, v, it->second, variables, context);
  });
  return IsNegated(condition.op) ? !any : any;
}

}  // namespace allot::auth
