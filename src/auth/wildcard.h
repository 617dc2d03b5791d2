#pragma once

// Wildcard matching as IAM does it: `*` matches any run of characters (also none), `?` exactly
// one; every other character matches itself. Internal to src/auth.

#include <cstdint>
#include <string_view>
#include <vector>

namespace allot::auth {

enum class LetterCase : std::uint8_t { kSensitive, kIgnoreAscii };

// One character of a pattern whose policy variables were put in. `wildcard` marks a `*` or `?`
// written in the policy; the same characters from a variable's value or from ${*} / ${?} are
// literal, so a user name can never widen what a policy grants.
struct PatternChar {
  char c = 0;
  bool wildcard = false;
};
using Pattern = std::vector<PatternChar>;

// Every `*` and `?` of `pattern` is a wildcard.
bool WildcardMatch(std::string_view pattern, std::string_view text, LetterCase letter_case);
bool WildcardMatch(const Pattern& pattern, std::string_view text, LetterCase letter_case);

// Whether `pattern` has a `*` or `?`.
bool HasWildcard(std::string_view pattern);

}  // namespace allot::auth
