#pragma once

// Policy variables (AWS, 2012-10-17 policies only): `${aws:username}` in a resource or in a
// String* / Arn* condition value stands for the request's value of that condition key, so that
// one policy can say "each user's own ...". `${*}`, `${?}` and `${$}` are a literal `*`, `?`
// and `$`. Internal to src/auth.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "auth/wildcard.h"
#include "common/status.h"

namespace allot::auth {

// The request's condition keys, in lower case (AccessRequest::context).
using Context = std::map<std::string, std::string>;

// Ok when every `${...}` in `text` is a variable ParsePolicy accepts. The refusal names the
// first that is not, without saying where `text` is (the caller prefixes that).
Status CheckVariables(std::string_view text);

// The index of the `}` that closes the variable opening with `${` at `open`, or npos.
std::size_t VariableEnd(std::string_view text, std::size_t open);

// `text` as a pattern: its `*` and `?` wildcards, its variables replaced by their values from
// `context` as literal characters. nullopt when a variable's key is missing from `context`
// (AWS: the variable has no value, so nothing equals or is like it).
std::optional<Pattern> ExpandVariables(std::string_view text, const Context& context);

enum class Comparison : std::uint8_t { kEquals, kEqualsIgnoreCase, kLike };

// Whether the request's `text` equals (or is like) `policy_text`, whose variables, when
// `variables` is true, are first replaced from `context`. An unresolved variable matches
// nothing. kLike is case-sensitive, as StringLike and ARN matching are in AWS.
bool PolicyTextMatches(std::string_view policy_text, std::string_view text, Comparison how,
                       bool variables, const Context& context);

}  // namespace allot::auth
