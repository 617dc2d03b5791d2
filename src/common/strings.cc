#include "common/strings.h"

#include <charconv>
#include <cstddef>

namespace allot {

char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

char AsciiUpper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

std::string AsciiUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiUpper(c);
  return out;
}

int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

std::string_view Trim(std::string_view s, std::string_view chars) {
  const std::size_t begin = s.find_first_not_of(chars);
  if (begin == std::string_view::npos) return s.substr(s.size());
  return s.substr(begin, s.find_last_not_of(chars) - begin + 1);
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  while (true) {
    const std::size_t pos = s.find(sep);
    parts.push_back(s.substr(0, pos));
    if (pos == std::string_view::npos) return parts;
    s.remove_prefix(pos + 1);
  }
}

std::size_t CodePoints(std::string_view utf8) {
  std::size_t n = 0;
  for (char c : utf8) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

std::string EscapeControls(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

std::string ZeroPadded(std::uint64_t value, int width) {
  char digits[20];  // 2^64 has 20 digits
  const std::size_t n =
      static_cast<std::size_t>(std::to_chars(digits, digits + sizeof digits, value).ptr - digits);
  const std::size_t wanted = width > 0 ? static_cast<std::size_t>(width) : 0;
  std::string out(wanted > n ? wanted - n : 0, '0');
  out.append(digits, n);
  return out;
}

std::string UuidText(std::uint64_t hi, std::uint64_t lo) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(36, '-');
  std::size_t at = 0;
  // 32 hex digits, most significant first, with a dash before the 9th, 13th, 17th and 21st.
  for (int digit = 0; digit < 32; ++digit) {
    if (digit == 8 || digit == 12 || digit == 16 || digit == 20) ++at;
    const std::uint64_t half = digit < 16 ? hi : lo;
    out[at++] = kHex[(half >> (60 - 4 * (digit % 16))) & 0xf];
  }
  return out;
}

namespace {
constexpr std::uint64_t kVariantMask = 0x3fffffffffffffffULL;  // below the variant's 2 bits
constexpr std::uint64_t kVariant = 0x8000000000000000ULL;      // 10: RFC 9562's variant
}  // namespace

std::string UuidV4(std::uint64_t a, std::uint64_t b) {
  return UuidText((a & ~0xf000ULL) | 0x4000, (b & kVariantMask) | kVariant);
}

std::string UuidV7(std::uint64_t unix_ms, std::uint64_t a, std::uint64_t b) {
  return UuidText(((unix_ms & 0xffffffffffffULL) << 16) | 0x7000 | (a & 0xfff),
                  (b & kVariantMask) | kVariant);
}

}  // namespace allot
