#pragma once

// AWS IAM identity-policy documents: parse and validate them, write them back as canonical JSON,
// and decide a request against the policies attached to a user. Pure: no I/O, no clock, no
// threads, no globals that change; every function is safe to call from any thread.
//
// The language is AWS's (https://docs.aws.amazon.com/IAM/latest/UserGuide/
// reference_policies_elements.html), so that what a team writes for AWS works here, restricted to
// what Allot can decide: identity policies only (no Principal), the actions of the AWS Batch API
// plus Allot's own, and the condition keys Allot fills in (see ParsePolicy).

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace allot::auth {

enum class Effect : std::uint8_t { kAllow, kDeny };

// The condition operators of the IAM policy language that apply to single-valued keys. ArnEquals
// and ArnLike both match part by part with wildcards, as AWS documents for both (likewise their
// negations).
enum class ConditionOperator : std::uint8_t {
  kStringEquals,
  kStringNotEquals,
  kStringEqualsIgnoreCase,
  kStringNotEqualsIgnoreCase,
  kStringLike,
  kStringNotLike,
  kNumericEquals,
  kNumericNotEquals,
  kNumericLessThan,
  kNumericLessThanEquals,
  kNumericGreaterThan,
  kNumericGreaterThanEquals,
  kArnEquals,
  kArnLike,
  kArnNotEquals,
  kArnNotLike,
  kBool,
  kNull,
};

// One key under one operator: `"StringEquals": {"aws:username": ["alice", "bob"]}` is
// {kStringEquals, false, "aws:username", {"alice", "bob"}}.
struct Condition {
  ConditionOperator op = ConditionOperator::kStringEquals;
  bool if_exists = false;  // the ...IfExists form: holds when the key is missing from the request
  std::string key;         // as written; matched case-insensitively
  std::vector<std::string> values;  // never empty; numbers and booleans as text ("50", "true")

  bool operator==(const Condition&) const = default;
};

struct Statement {
  std::string sid;  // empty when the statement has none
  Effect effect = Effect::kAllow;
  // Exactly one of the pair is used: `not_action` says the statement covers every action except
  // those in `actions` (likewise `not_resource`). Entries are as written, wildcards included.
  std::vector<std::string> actions;
  bool not_action = false;
  std::vector<std::string> resources;
  bool not_resource = false;
  std::vector<Condition> conditions;  // all must hold (AND)

  bool operator==(const Statement&) const = default;
};

inline constexpr std::string_view kPolicyVersion2012 = "2012-10-17";
inline constexpr std::string_view kPolicyVersion2008 = "2008-10-17";

struct Policy {
  // "2012-10-17" or "2008-10-17". As in AWS, policy variables (${aws:username}) are variables
  // only in a 2012-10-17 policy; a document without Version is a 2008-10-17 one.
  std::string version = std::string(kPolicyVersion2012);
  std::string id;  // the optional top-level Id; empty when absent
  std::vector<Statement> statements;

  bool operator==(const Policy&) const = default;
};

// The largest policy document ParsePolicy accepts, in bytes of JSON text including whitespace.
// AWS allows 6,144 characters (not counting whitespace) for a managed policy; this leaves room
// for indentation.
inline constexpr std::size_t kMaxPolicyBytes = 10240;

// The deepest nesting a policy needs: document > Statement list > statement > Condition >
// operator > value list.
inline constexpr int kMaxPolicyDepth = 6;

// Parses and validates an IAM identity-policy document. Every refusal is InvalidArgument and
// names where the problem is, e.g.
//   "Statement[1].Action: unknown action 'batch:SubmitJobs'; allowed: batch:* actions of the AWS
//    Batch API and allot:GetJobLogs, allot:ReadAudit, ..."
// Accepted: Version (optional), Id (optional), Statement (an object or a non-empty list). A
// statement has Sid (optional; letters and digits, unique in the policy), Effect ("Allow" or
// "Deny"), exactly one of Action / NotAction, exactly one of Resource / NotResource (each a
// string or a non-empty list of strings) and Condition (optional). Principal and NotPrincipal
// are refused: an identity policy's principal is the user it is attached to.
//   - Actions: "*", a known action (IsKnownAction), or a pattern with `*` / `?` under the
//     service prefix batch: or allot: that matches at least one known action.
//   - Resources: "*" or an ARN "arn:partition:service:region:account:resource" (wildcards
//     allowed, service not empty).
//   - Conditions: {"Operator": {"key": value or list}}, operators as in ConditionOperator with an
//     optional IfExists suffix (not on Null); keys aws:* (any), batch:SchedulingPriority,
//     batch:ShareIdentifier, allot:QuotaShare; numeric operators need numbers, Bool and Null
//     need true or false.
//   - Policy variables (2012-10-17 only) in resources and in String* / Arn* condition values:
//     ${aws:username}, ${aws:userid}, ${aws:PrincipalArn}, ${aws:SourceIp},
//     ${batch:SchedulingPriority}, ${batch:ShareIdentifier}, ${allot:QuotaShare}, and ${*}, ${?},
//     ${$} for a literal `*`, `?`, `$`.
// Also refused: more than kMaxPolicyBytes, nesting deeper than kMaxPolicyDepth, unknown fields,
// a field given twice in one object, and text that is not JSON.
Result<Policy> ParsePolicy(std::string_view json_text);

// The canonical JSON text of `policy`: fields in the order Version, Id, Statement; Sid, Effect,
// Action, Resource, Condition; a single action, resource or condition value as a string, more
// as a list; condition values always as strings. ParsePolicy(PolicyToJson(p)) == p for every p
// that ParsePolicy returned. Compact (no indentation).
std::string PolicyToJson(const Policy& policy);

struct AccessRequest {
  std::string action;    // "batch:SubmitServiceJob"; matched case-insensitively, as in AWS
  std::string resource;  // an ARN, or "*" for actions on no particular resource
  // Condition keys in lower case -> value: "batch:schedulingpriority" -> "40",
  // "aws:username" -> "alice", "allot:quotashare" -> "team-a". A key that is absent is missing
  // (see Evaluate); an empty value is a present, empty value.
  std::map<std::string, std::string> context;
};

enum class Decision : std::uint8_t { kAllow, kExplicitDeny, kImplicitDeny };

// AWS's evaluation logic for identity policies: a Deny statement that applies wins; otherwise an
// Allow statement that applies allows; otherwise the request is implicitly denied. A statement
// applies when its action list matches (NotAction: does not match), its resource list matches
// (NotResource: does not match) and every condition holds. A condition on a key missing from
// the context is false, except: ...IfExists is true, Null "true" is true, and the negated
// operators (StringNot*, NumericNotEquals, ArnNot*) are true, as AWS documents. Several values of
// one key: any may match; for a negated operator none may. A variable whose key is missing
// matches nothing.
Decision Evaluate(const std::vector<Policy>& policies, const AccessRequest& request);

// Whether Evaluate can read `context` for these policies: true when a statement has a condition,
// or a 2012-10-17 policy has a variable in a resource. When false, the decision is the same
// whatever the context holds, and a caller may leave it empty (the server fills it per call).
bool ReadsContext(const std::vector<Policy>& policies);

// AWS's AccessDeniedException message:
//   "User: arn:aws:iam::000000000000:user/alice is not authorized to perform:
//    batch:SubmitServiceJob on resource: arn:aws:batch:local:000000000000:job-queue/q because no
//    identity-based policy allows the batch:SubmitServiceJob action"
// and for kExplicitDeny "... on resource: <resource> with an explicit deny in an identity-based
// policy". REQUIRES: decision != Decision::kAllow.
std::string DeniedMessage(std::string_view principal_arn, std::string_view action,
                          std::string_view resource, Decision decision);

// Whether `action` is one of KnownActions(), ignoring ASCII case; no wildcards.
bool IsKnownAction(std::string_view action);

// Every action a policy may name: each operation of the AWS Batch API as batch:<Operation>, then
// Allot's extensions allot:<Name>. Stable order.
std::vector<std::string> KnownActions();

}  // namespace allot::auth
