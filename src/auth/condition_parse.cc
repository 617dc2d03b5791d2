#include <optional>
#include <string>
#include <vector>

#include "auth/conditions.h"
#include "auth/policy_parse.h"

namespace allot::auth {
namespace {

// A JSON scalar as the text conditions compare: strings as they are, booleans as "true" /
// "false", numbers as written by nlohmann ("50", "2.5"). nullopt for null, lists and objects.
std::optional<std::string> ScalarText(const Json& value) {
  if (value.is_string()) return value.get_ref<const std::string&>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number()) return value.dump();
  return std::nullopt;
}

Result<std::vector<std::string>> ReadConditionValues(const Json& value, const std::string& where) {
  constexpr std::string_view kShape = "must be a string, number or boolean, or a list of them";
  std::vector<std::string> out;
  if (std::optional<std::string> one = ScalarText(value)) {
    out.push_back(std::move(*one));
    return out;
  }
  if (!value.is_array()) return Refuse(where, kShape);
  if (value.empty()) return Refuse(where, "is an empty list; give at least one value");
  for (const Json& item : value) {
    std::optional<std::string> text = ScalarText(item);
    if (!text) return Refuse(where, kShape);
    out.push_back(std::move(*text));
  }
  return out;
}

// One operator's block, {"key": values, ...}, appended to `out` (one condition per key).
Status ParseOperatorBlock(const Json& keys, const std::string& where, OperatorName name,
                          bool variables, std::vector<Condition>& out) {
  if (!keys.is_object() || keys.empty()) {
    return Refuse(where, "must be an object of condition keys and their values");
  }
  for (auto it = keys.begin(); it != keys.end(); ++it) {
    const std::string field = where + "." + it.key();
    if (Status key = CheckConditionKey(it.key()); !key.ok()) return Refuse(where, key.message());
    Result<std::vector<std::string>> values = ReadConditionValues(it.value(), field);
    if (!values.ok()) return values.status();
    Condition condition{.op = name.op, .if_exists = name.if_exists, .key = it.key()};
    condition.values = std::move(values).value();
    for (std::string& value : condition.values) {
      Status checked = CheckConditionValue(name.op, variables, value);
      if (!checked.ok()) return Refuse(field, checked.message());
    }
    out.push_back(std::move(condition));
  }
  return Status::Ok();
}

std::string UnknownOperator(std::string_view name) {
  std::string what = "unknown condition operator '" + std::string(name) + "'";
  if (name.starts_with("ForAnyValue:") || name.starts_with("ForAllValues:")) {
    what += " (set operators do not apply: every Allot condition key has one value)";
  }
  return what + "; allowed: " + AllowedOperatorsText();
}

}  // namespace

Result<std::vector<Condition>> ParseConditionBlock(const Json& block, const std::string& where,
                                                   bool variables) {
  if (!block.is_object()) {
    return Refuse(where,
                  "must be an object of condition operators, e.g. "
                  "{\"StringEquals\": {\"aws:username\": \"alice\"}}");
  }
  std::vector<Condition> out;
  for (auto it = block.begin(); it != block.end(); ++it) {
    const std::optional<OperatorName> name = ParseOperatorName(it.key());
    if (!name) return Refuse(where, UnknownOperator(it.key()));
    ALLOT_RETURN_IF_ERROR(
        ParseOperatorBlock(it.value(), where + "." + it.key(), *name, variables, out));
  }
  return out;
}

}  // namespace allot::auth
