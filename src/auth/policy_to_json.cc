// PolicyToJson: the canonical text of a policy, for storing it and for `policy get`.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "auth/conditions.h"
#include "auth/policy.h"

namespace allot::auth {
namespace {

// Fields keep the order they are written in, AWS's customary one.
using OrderedJson = nlohmann::ordered_json;

// One entry as a string, several as a list: the form AWS's own examples use.
OrderedJson OneOrList(const std::vector<std::string>& values) {
  if (values.size() == 1) return values.front();
  return values;
}

OrderedJson ConditionsJson(const std::vector<Condition>& conditions) {
  OrderedJson out = OrderedJson::object();
  for (const Condition& condition : conditions) {
    out[OperatorNameText(condition.op, condition.if_exists)][condition.key] =
        OneOrList(condition.values);
  }
  return out;
}

OrderedJson StatementJson(const Statement& statement) {
  OrderedJson out = OrderedJson::object();
  if (!statement.sid.empty()) out["Sid"] = statement.sid;
  out["Effect"] = statement.effect == Effect::kAllow ? "Allow" : "Deny";
  out[statement.not_action ? "NotAction" : "Action"] = OneOrList(statement.actions);
  out[statement.not_resource ? "NotResource" : "Resource"] = OneOrList(statement.resources);
  if (!statement.conditions.empty()) out["Condition"] = ConditionsJson(statement.conditions);
  return out;
}

}  // namespace

std::string PolicyToJson(const Policy& policy) {
  OrderedJson doc = OrderedJson::object();
  doc["Version"] = policy.version;
  if (!policy.id.empty()) doc["Id"] = policy.id;
  OrderedJson statements = OrderedJson::array();
  for (const Statement& statement : policy.statements) {
    statements.push_back(StatementJson(statement));
  }
  doc["Statement"] = std::move(statements);
  // `replace`: a policy built in code may hold invalid UTF-8; dump must not throw.
  return doc.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

}  // namespace allot::auth
