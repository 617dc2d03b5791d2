#include "auth/wildcard.h"

#include <cstddef>

#include "common/strings.h"

namespace allot::auth {
namespace {

// Both pattern forms seen the same way: the character at i and whether it is a wildcard.
struct PlainView {
  std::string_view p;
  std::size_t size() const { return p.size(); }
  char At(std::size_t i) const { return p[i]; }
  bool Wild(std::size_t i) const { return p[i] == '*' || p[i] == '?'; }
};
struct MarkedView {
  const Pattern& p;
  std::size_t size() const { return p.size(); }
  char At(std::size_t i) const { return p[i].c; }
  bool Wild(std::size_t i) const { return p[i].wildcard; }
};

bool SameChar(char a, char b, LetterCase letter_case) {
  return a == b || (letter_case == LetterCase::kIgnoreAscii && AsciiLower(a) == AsciiLower(b));
}

// Iterative, with one backtrack point (the last `*`): no recursion, linear in practice.
template <typename View>
bool Match(const View& pattern, std::string_view text, LetterCase letter_case) {
  std::size_t p = 0;
  std::size_t t = 0;
  std::size_t star = std::string_view::npos;
  std::size_t resume = 0;
  while (t < text.size()) {
    const bool wild = p < pattern.size() && pattern.Wild(p);
    if (wild && pattern.At(p) == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && ((wild && pattern.At(p) == '?') ||
                                      (!wild && SameChar(pattern.At(p), text[t], letter_case)))) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern.Wild(p) && pattern.At(p) == '*') ++p;
  return p == pattern.size();
}

}  // namespace

bool WildcardMatch(std::string_view pattern, std::string_view text, LetterCase letter_case) {
  return Match(PlainView{pattern}, text, letter_case);
}

bool WildcardMatch(const Pattern& pattern, std::string_view text, LetterCase letter_case) {
  return Match(MarkedView{pattern}, text, letter_case);
}

bool HasWildcard(std::string_view pattern) {
  return pattern.find_first_of("*?") != std::string_view::npos;
}

}  // namespace allot::auth
