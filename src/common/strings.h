#pragma once

// Small ASCII string helpers. Bytes outside A-Z / a-z are left as they are (no locale, no UTF-8
// case folding), so the results never depend on the process' locale. For prefixes and suffixes
// use std::string_view's starts_with / ends_with.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace allot {

// The characters C's isspace() accepts in the "C" locale: space, \t, \n, \v, \f, \r.
inline constexpr std::string_view kAsciiWhitespace = " \t\n\v\f\r";

// 'A'-'Z' to 'a'-'z'; every other byte unchanged.
char AsciiLower(char c);
std::string AsciiLower(std::string_view s);

// 'a'-'z' to 'A'-'Z'; every other byte unchanged.
char AsciiUpper(char c);
std::string AsciiUpper(std::string_view s);

// Equal but for ASCII letter case: EqualsIgnoreCase("Host", "host") is true.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// The characters (code points) of UTF-8 text: each byte that does not continue a sequence starts
// one. AWS's lengths count characters, not bytes. CodePoints("caf\xC3\xA9") == 4.
std::size_t CodePoints(std::string_view utf8);

// Control characters (below 0x20, and 0x7f) as \xNN, a backslash as two: a name someone else
// chose, shown on a line of a log, cannot start a line of its own. Other bytes stay.
std::string EscapeControls(std::string_view s);

// The value of a hexadecimal digit (either case), or -1 for any other character.
int HexDigitValue(char c);

// `s` without the leading and trailing characters that occur in `chars`. The result points into
// `s`. Trim(" a b\t") == "a b"; Trim("\r\n", " \t\r") == "\n".
std::string_view Trim(std::string_view s, std::string_view chars = kAsciiWhitespace);

// The pieces of `s` between the `sep` characters, empty pieces included, pointing into `s`:
// Split("a,,b", ',') == {"a", "", "b"}; Split("", ',') == {""}; never an empty vector.
std::vector<std::string_view> Split(std::string_view s, char sep);

// `value` in decimal, zero-padded on the left to `width` digits (more digits where it has them):
// ZeroPadded(42, 5) == "00042". Keys that sort as text in numeric order are written this way.
std::string ZeroPadded(std::uint64_t value, int width);

// The text of the UUID whose 128 bits are `hi` then `lo` (RFC 9562's 8-4-4-4-12 lowercase hex
// digits); the caller sets the version and variant bits.
std::string UuidText(std::uint64_t hi, std::uint64_t lo);

// RFC 9562's version 4: the 122 bits of `a` and `b` that the version and variant leave, from the
// caller's random source (this layer reads none).
std::string UuidV4(std::uint64_t a, std::uint64_t b);

// RFC 9562's version 7: the low 48 bits of `unix_ms` first, so that ids sort by time, then 12
// bits of `a` and 62 of `b`.
std::string UuidV7(std::uint64_t unix_ms, std::uint64_t a, std::uint64_t b);

// The elements of `parts` (anything whose elements convert to std::string_view) with `sep`
// between each two: Join({"a", "b"}, ", ") == "a, b"; an empty range gives "".
template <typename Range>
std::string Join(const Range& parts, std::string_view sep) {
  std::string out;
  bool first = true;
  for (const auto& part : parts) {
    if (!first) out.append(sep);
    first = false;
    out.append(std::string_view{part});
  }
  return out;
}

inline std::string Join(std::initializer_list<std::string_view> parts, std::string_view sep) {
  return Join<std::initializer_list<std::string_view>>(parts, sep);
}

}  // namespace allot
