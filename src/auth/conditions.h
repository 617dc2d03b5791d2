#pragma once

// The Condition element: operator names, the keys Allot knows, the values each operator takes,
// and whether a condition holds for a request. Internal to src/auth.

#include <optional>
#include <string>
#include <string_view>

#include "auth/policy.h"
#include "auth/variables.h"
#include "common/status.h"

namespace allot::auth {

struct OperatorName {
  ConditionOperator op = ConditionOperator::kStringEquals;
  bool if_exists = false;
};

// "StringLikeIfExists" -> {kStringLike, true}. Exact case, as AWS writes them. nullopt for an
// unknown name, also for "NullIfExists" and the set operators (ForAnyValue:..., ForAllValues:...).
std::optional<OperatorName> ParseOperatorName(std::string_view name);
std::string OperatorNameText(ConditionOperator op, bool if_exists);
// For refusals: "StringEquals, StringNotEquals, ..., Null; each but Null also with IfExists".
std::string AllowedOperatorsText();

// Ok for any aws: key and for the batch: and allot: keys Allot fills in; case-insensitive.
Status CheckConditionKey(std::string_view key);

// Ok when `value` suits `op`: a number for the Numeric operators, true or false for Bool and
// Null (lower-cased in place), an ARN pattern for the Arn operators, known variables only.
Status CheckConditionValue(ConditionOperator op, bool variables, std::string& value);

// Whether `condition` holds for a request with `context` (see Evaluate in policy.h).
bool ConditionHolds(const Condition& condition, const Context& context, bool variables);

}  // namespace allot::auth
