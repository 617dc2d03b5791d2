// ParsePolicy: the document, its statements and their Action and Resource lists. The Condition
// element is parsed in condition_parse.cc.

#include "auth/policy_parse.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "auth/arn.h"
#include "auth/wildcard.h"
#include "common/strings.h"

namespace allot::auth {
namespace {

// nlohmann reports each object's fields as they are read: the only place a field given twice
// can be seen (the tree keeps the last), and the place to count nesting.
struct ReadCheck {
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  bool too_deep = false;

  bool Observe(int depth, Json::parse_event_t event, const Json& parsed) {
    using Event = Json::parse_event_t;
    if (event == Event::object_start || event == Event::array_start) {
      if (depth >= kMaxPolicyDepth) too_deep = true;  // depth counts the containers around it
      if (event == Event::object_start) open_objects.emplace_back();
    } else if (event == Event::object_end && !open_objects.empty()) {
      open_objects.pop_back();
    } else if (event == Event::key && !open_objects.empty() && parsed.is_string()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (!open_objects.back().insert(key).second && duplicate.empty()) duplicate = key;
    }
    return true;
  }
};

Result<Json> ReadDocument(std::string_view text) {
  constexpr std::string_view kWhere = "policy document";
  if (text.size() > kMaxPolicyBytes) {
    return Refuse(kWhere, std::to_string(text.size()) + " bytes; the limit is " +
                              std::to_string(kMaxPolicyBytes));
  }
  ReadCheck check;
  Json doc;
  try {
    doc = Json::parse(text.begin(), text.end(),
                      [&check](int depth, Json::parse_event_t event, Json& parsed) {
                        return check.Observe(depth, event, parsed);
                      });
  } catch (const Json::exception& e) {
    std::string_view reason = e.what();  // "[json.exception.parse_error.101] parse error at..."
    if (const std::size_t cut = reason.find("] "); cut != std::string_view::npos) {
      reason.remove_prefix(cut + 2);
    }
    return Refuse(kWhere, "not valid JSON: " + std::string(reason));
  }
  if (check.too_deep) {
    return Refuse(kWhere, "nests deeper than " + std::to_string(kMaxPolicyDepth) +
                              " levels, more than any policy needs");
  }
  if (!check.duplicate.empty()) {
    return Refuse(kWhere, "the field '" + check.duplicate + "' appears twice in one object");
  }
  return doc;
}

Result<std::vector<std::string>> ReadStringList(const Json& value, const std::string& where) {
  if (value.is_string()) return std::vector<std::string>{value.get<std::string>()};
  if (!value.is_array()) return Refuse(where, "must be a string or a list of strings");
  if (value.empty()) return Refuse(where, "is an empty list; give at least one entry");
  std::vector<std::string> out;
  for (const Json& item : value) {
    if (!item.is_string()) return Refuse(where, "must be a string or a list of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

// One of a statement's paired fields (Action / NotAction, Resource / NotResource).
struct PairedList {
  std::vector<std::string> values;
  bool negated = false;
  std::string where;  // "Statement[0].NotAction"
};

Result<PairedList> ReadPairedList(const Json& statement, const std::string& where,
                                  const char* positive, const char* negative) {
  const auto p = statement.find(positive);
  const auto n = statement.find(negative);
  const std::string one_of = std::string(positive) + " or " + negative;
  if (p != statement.end() && n != statement.end()) {
    return Refuse(where + "." + negative, "a statement has " + one_of + ", not both");
  }
  if (p == statement.end() && n == statement.end()) {
    return Refuse(where + "." + positive, "missing; a statement needs " + one_of);
  }
  PairedList out;
  out.negated = n != statement.end();
  out.where = where + "." + (out.negated ? negative : positive);
  Result<std::vector<std::string>> values = ReadStringList(out.negated ? *n : *p, out.where);
  if (!values.ok()) return values.status();
  out.values = std::move(values).value();
  return out;
}

std::string AllowedActionsText() {
  std::vector<std::string> own;
  for (const std::string& action : KnownActions()) {
    if (action.starts_with("allot:")) own.push_back(action);
  }
  return "allowed: batch:* actions of the AWS Batch API and " + Join(own, ", ");
}

// "*", a known action, or a wildcard pattern under batch: or allot: that matches a known one.
Status CheckAction(std::string_view action) {
  if (action == "*") return Status::Ok();
  const std::string quoted = "'" + std::string(action) + "'";
  const std::size_t colon = action.find(':');
  const std::string_view service = action.substr(0, colon);
  if (colon == std::string_view::npos || colon + 1 == action.size()) {
    return InvalidArgument(quoted + " is not of the form service:action; " + AllowedActionsText());
  }
  if (!EqualsIgnoreCase(service, "batch") && !EqualsIgnoreCase(service, "allot")) {
    return InvalidArgument("unknown service prefix in " + quoted +
                           "; only batch: and allot: actions exist here; " + AllowedActionsText());
  }
  if (!HasWildcard(action)) {
    if (IsKnownAction(action)) return Status::Ok();
    return InvalidArgument("unknown action " + quoted + "; " + AllowedActionsText());
  }
  const std::vector<std::string> known = KnownActions();
  if (std::any_of(known.begin(), known.end(), [&](const std::string& k) {
        return WildcardMatch(action, k, LetterCase::kIgnoreAscii);
      })) {
    return Status::Ok();
  }
  return InvalidArgument(quoted + " matches no known action; " + AllowedActionsText());
}

Status CheckResource(std::string_view resource, bool variables) {
  if (variables) ALLOT_RETURN_IF_ERROR(CheckVariables(resource));
  return CheckArnPattern(resource, variables);
}

// Each entry of `list` passes `check`; a refusal is prefixed with the list's place.
template <typename Check>
Status CheckEach(const PairedList& list, Check check) {
  for (const std::string& value : list.values) {
    if (Status s = check(value); !s.ok()) return Refuse(list.where, s.message());
  }
  return Status::Ok();
}

Status CheckStatementFields(const Json& statement, const std::string& where) {
  constexpr std::array<std::string_view, 7> kFields = {
      "Sid", "Effect", "Action", "NotAction", "Resource", "NotResource", "Condition"};
  for (auto it = statement.begin(); it != statement.end(); ++it) {
    const std::string& field = it.key();
    if (field == "Principal" || field == "NotPrincipal") {
      return Refuse(where + "." + field, "an identity-based policy has no " + field +
                                             ": its principal is the user it is attached to");
    }
    if (std::find(kFields.begin(), kFields.end(), field) == kFields.end()) {
      return Refuse(where, "unknown field '" + field + "'; allowed: " + Join(kFields, ", "));
    }
  }
  return Status::Ok();
}

Status ReadSid(const Json& statement, const std::string& where, std::string& sid) {
  const auto it = statement.find("Sid");
  if (it == statement.end()) return Status::Ok();
  if (!it->is_string()) return Refuse(where + ".Sid", "must be a string");
  sid = it->get<std::string>();
  const bool alphanumeric = std::all_of(sid.begin(), sid.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
  if (!alphanumeric) {
    return Refuse(where + ".Sid", "'" + sid + "' may hold only letters A-Z, a-z and digits 0-9");
  }
  return Status::Ok();
}

Status ReadEffect(const Json& statement, const std::string& where, Effect& effect) {
  const auto it = statement.find("Effect");
  constexpr std::string_view kWant = "must be \"Allow\" or \"Deny\"";
  if (it == statement.end()) return Refuse(where + ".Effect", "missing; " + std::string(kWant));
  if (it->is_string() && *it == "Allow") {
    effect = Effect::kAllow;
  } else if (it->is_string() && *it == "Deny") {
    effect = Effect::kDeny;
  } else {
    return Refuse(where + ".Effect", kWant);
  }
  return Status::Ok();
}

Result<Statement> ParseStatement(const Json& json, const std::string& where, bool variables) {
  if (!json.is_object()) return Refuse(where, "must be an object");
  ALLOT_RETURN_IF_ERROR(CheckStatementFields(json, where));
  Statement statement;
  ALLOT_RETURN_IF_ERROR(ReadSid(json, where, statement.sid));
  ALLOT_RETURN_IF_ERROR(ReadEffect(json, where, statement.effect));
  Result<PairedList> actions = ReadPairedList(json, where, "Action", "NotAction");
  if (!actions.ok()) return actions.status();
  ALLOT_RETURN_IF_ERROR(CheckEach(*actions, CheckAction));
  Result<PairedList> resources = ReadPairedList(json, where, "Resource", "NotResource");
  if (!resources.ok()) return resources.status();
  ALLOT_RETURN_IF_ERROR(
      CheckEach(*resources, [&](std::string_view r) { return CheckResource(r, variables); }));
  if (const auto it = json.find("Condition"); it != json.end()) {
    Result<std::vector<Condition>> conditions =
        ParseConditionBlock(*it, where + ".Condition", variables);
    if (!conditions.ok()) return conditions.status();
    statement.conditions = std::move(conditions).value();
  }
  statement.not_action = actions->negated;
  statement.actions = std::move(actions).value().values;
  statement.not_resource = resources->negated;
  statement.resources = std::move(resources).value().values;
  return statement;
}

std::string StatementWhere(std::size_t index) { return "Statement[" + std::to_string(index) + "]"; }

Result<std::vector<Statement>> ReadStatements(const Json& doc, bool variables) {
  const auto it = doc.find("Statement");
  if (it == doc.end()) return Refuse("Statement", "missing; a policy needs at least one statement");
  std::vector<const Json*> items;
  if (it->is_object()) {
    items.push_back(&*it);
  } else if (it->is_array()) {
    for (const Json& item : *it) items.push_back(&item);
  } else {
    return Refuse("Statement", "must be an object or a list of objects");
  }
  if (items.empty()) return Refuse("Statement", "is an empty list; a policy needs a statement");
  std::vector<Statement> out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    Result<Statement> statement = ParseStatement(*items[i], StatementWhere(i), variables);
    if (!statement.ok()) return statement.status();
    out.push_back(std::move(statement).value());
  }
  return out;
}

Status CheckSidsUnique(const std::vector<Statement>& statements) {
  for (std::size_t i = 0; i < statements.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (!statements[i].sid.empty() && statements[i].sid == statements[j].sid) {
        return Refuse(StatementWhere(i) + ".Sid", "'" + statements[i].sid +
                                                      "' is also the Sid of " + StatementWhere(j) +
                                                      "; Sids are unique within a policy");
      }
    }
  }
  return Status::Ok();
}

Status ReadHeader(const Json& doc, Policy& policy) {
  constexpr std::array<std::string_view, 3> kFields = {"Version", "Id", "Statement"};
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (std::find(kFields.begin(), kFields.end(), it.key()) == kFields.end()) {
      return Refuse("policy document",
                    "unknown field '" + it.key() + "'; allowed: " + Join(kFields, ", "));
    }
  }
  policy.version = std::string(kPolicyVersion2008);  // AWS's meaning of a missing Version
  if (const auto it = doc.find("Version"); it != doc.end()) {
    const std::string* version = it->get_ptr<const std::string*>();
    if (version == nullptr || (*version != kPolicyVersion2012 && *version != kPolicyVersion2008)) {
      return Refuse("Version", "must be \"2012-10-17\" or \"2008-10-17\"");
    }
    policy.version = *version;
  }
  if (const auto it = doc.find("Id"); it != doc.end()) {
    if (!it->is_string()) return Refuse("Id", "must be a string");
    policy.id = it->get<std::string>();
  }
  return Status::Ok();
}

}  // namespace

Result<Policy> ParsePolicy(std::string_view json_text) {
  Result<Json> doc = ReadDocument(json_text);
  if (!doc.ok()) return doc.status();
  if (!doc->is_object()) {
    return Refuse("policy document", "must be a JSON object with Version and Statement");
  }
  Policy policy;
  ALLOT_RETURN_IF_ERROR(ReadHeader(*doc, policy));
  Result<std::vector<Statement>> statements =
      ReadStatements(*doc, policy.version == kPolicyVersion2012);
  if (!statements.ok()) return statements.status();
  policy.statements = std::move(statements).value();
  ALLOT_RETURN_IF_ERROR(CheckSidsUnique(policy.statements));
  return policy;
}

}  // namespace allot::auth
