// Evaluate and DeniedMessage: AWS's decision for identity-based policies and its wording.

#include <algorithm>
#include <string>

#include "auth/arn.h"
#include "auth/conditions.h"
#include "auth/policy.h"
#include "auth/wildcard.h"

namespace allot::auth {
namespace {

bool ActionApplies(const Statement& statement, std::string_view action) {
  const bool listed = std::any_of(
      statement.actions.begin(), statement.actions.end(),
      [&](const std::string& p) { return WildcardMatch(p, action, LetterCase::kIgnoreAscii); });
  return listed != statement.not_action;
}

bool ResourceApplies(const Statement& statement, const AccessRequest& request, bool variables) {
  const bool listed = std::any_of(
      statement.resources.begin(), statement.resources.end(), [&](const std::string& p) {
        return ArnMatches(p, request.resource, variables, request.context);
      });
  return listed != statement.not_resource;
}

bool StatementApplies(const Statement& statement, const AccessRequest& request, bool variables) {
  return ActionApplies(statement, request.action) &&
         ResourceApplies(statement, request, variables) &&
         std::all_of(
             statement.conditions.begin(), statement.conditions.end(),
             [&](const Condition& c) { return ConditionHolds(c, request.context, variables); });
}

}  // namespace

Decision Evaluate(const std::vector<Policy>& policies, const AccessRequest& request) {
  bool allowed = false;
  for (const Policy& policy : policies) {
    const bool variables = policy.version == kPolicyVersion2012;
    for (const Statement& statement : policy.statements) {
      if (!StatementApplies(statement, request, variables)) continue;
      if (statement.effect == Effect::kDeny) return Decision::kExplicitDeny;
      allowed = true;
    }
  }
  return allowed ? Decision::kAllow : Decision::kImplicitDeny;
}

bool ReadsContext(const std::vector<Policy>& policies) {
  return std::any_of(policies.begin(), policies.end(), [](const Policy& policy) {
    const bool variables = policy.version == kPolicyVersion2012;
    return std::any_of(
        policy.statements.begin(), policy.statements.end(), [&](const Statement& statement) {
          return !statement.conditions.empty() ||
                 (variables &&
                  std::any_of(statement.resources.begin(), statement.resources.end(),
                              [](const std::string& r) { return r.find("${") != r.npos; }));
        });
  });
}

std::string DeniedMessage(std::string_view principal_arn, std::string_view action,
                          std::string_view resource, Decision decision) {
  ALLOT_CHECK(decision != Decision::kAllow);
  std::string out = "User: " + std::string(principal_arn) +
                    " is not authorized to perform: " + std::string(action) +
                    " on resource: " + std::string(resource);
  if (decision == Decision::kExplicitDeny) {
    return out + " with an explicit deny in an identity-based policy";
  }
  return out + " because no identity-based policy allows the " + std::string(action) + " action";
}

}  // namespace allot::auth
