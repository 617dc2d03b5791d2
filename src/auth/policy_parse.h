#pragma once

// Shared by the two halves of ParsePolicy: the document and statements (policy_parse.cc) and
// the Condition element (condition_parse.cc). Internal to src/auth.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "auth/policy.h"
#include "common/status.h"

namespace allot::auth {

using Json = nlohmann::json;

// InvalidArgument("<where>: <what>"), where names the place: "Statement[1].Action".
inline Status Refuse(std::string_view where, std::string_view what) {
  return InvalidArgument(std::string(where) + ": " + std::string(what));
}

// The statement's Condition element (`block`, found at `where`) as conditions, in the order of
// operator then key (nlohmann keeps object fields sorted), so that the result is canonical.
Result<std::vector<Condition>> ParseConditionBlock(const Json& block, const std::string& where,
                                                   bool variables);

}  // namespace allot::auth
