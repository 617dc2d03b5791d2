#include "auth/variables.h"

#include <array>
#include <cstddef>

#include "common/strings.h"

namespace allot::auth {
namespace {

// The keys a variable may name: those Allot puts in every request's context (the caller's
// identity) or in a job request's (its share and priority). A variable on a key Allot never
// fills in would make its statement match nothing, so it is refused as a likely typo.
constexpr std::array<std::string_view, 7> kVariableKeys = {
    "aws:username",
    "aws:userid",
    "aws:PrincipalArn",
    "aws:SourceIp",
    "batch:SchedulingPriority",
    "batch:ShareIdentifier",
    "allot:QuotaShare",
};

// ${*}, ${?} and ${$}: the character itself, never a wildcard.
bool IsLiteralEscape(std::string_view name) { return name == "*" || name == "?" || name == "$"; }

bool IsKnownVariable(std::string_view name) {
  if (IsLiteralEscape(name)) return true;
  for (std::string_view key : kVariableKeys) {
    if (EqualsIgnoreCase(key, name)) return true;
  }
  return false;
}

std::string KnownVariablesText() {
  std::string out;
  for (std::string_view key : kVariableKeys) out += "${" + std::string(key) + "}, ";
  return out + "and ${*}, ${?}, ${$} for a literal *, ? or $";
}

void AppendLiteral(Pattern& out, std::string_view text) {
  for (char c : text) out.push_back({.c = c, .wildcard = false});
}

bool SamePatternText(const Pattern& pattern, std::string_view text, LetterCase letter_case) {
  if (pattern.size() != text.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char a = pattern[i].c;
    const char b = text[i];
    if (a != b && (letter_case == LetterCase::kSensitive || AsciiLower(a) != AsciiLower(b))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::size_t VariableEnd(std::string_view text, std::size_t open) {
  return text.find('}', open + 2);
}

Status CheckVariables(std::string_view text) {
  for (std::size_t open = text.find("${"); open != std::string_view::npos;) {
    const std::size_t end = VariableEnd(text, open);
    if (end == std::string_view::npos) {
      return InvalidArgument("'" + std::string(text) +
                             "' opens a policy variable with ${ but does not close it with }");
    }
    const std::string_view name = text.substr(open + 2, end - open - 2);
    if (!IsKnownVariable(name)) {
      return InvalidArgument("unknown policy variable '${" + std::string(name) + "}' in '" +
                             std::string(text) + "'; known: " + KnownVariablesText());
    }
    open = text.find("${", end + 1);
  }
  return Status::Ok();
}

std::optional<Pattern> ExpandVariables(std::string_view text, const Context& context) {
  Pattern out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t end =
        text.substr(i).starts_with("${") ? VariableEnd(text, i) : std::string_view::npos;
    if (end == std::string_view::npos) {  // a character written in the policy
      out.push_back({.c = text[i], .wildcard = text[i] == '*' || text[i] == '?'});
      ++i;
      continue;
    }
    const std::string_view name = text.substr(i + 2, end - i - 2);
    if (IsLiteralEscape(name)) {
      AppendLiteral(out, name);
    } else {
      auto it = context.find(AsciiLower(name));
      if (it == context.end()) return std::nullopt;
      AppendLiteral(out, it->second);
    }
    i = end + 1;
  }
  return out;
}

bool PolicyTextMatches(std::string_view policy_text, std::string_view text, Comparison how,
                       bool variables, const Context& context) {
  const LetterCase letter_case =
      how == Comparison::kEqualsIgnoreCase ? LetterCase::kIgnoreAscii : LetterCase::kSensitive;
  if (!variables || policy_text.find("${") == std::string_view::npos) {
    if (how == Comparison::kLike) return WildcardMatch(policy_text, text, letter_case);
    return how == Comparison::kEquals ? policy_text == text : EqualsIgnoreCase(policy_text, text);
  }
  const std::optional<Pattern> pattern = ExpandVariables(policy_text, context);
  if (!pattern) return false;
  if (how == Comparison::kLike) return WildcardMatch(*pattern, text, letter_case);
  return SamePatternText(*pattern, text, letter_case);
}

}  // namespace allot::auth
