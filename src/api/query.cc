#include "api/query.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/strings.h"

namespace allot::api {

namespace {

// The length of the well-formed UTF-8 sequence at s[i], or 0 where there is none (an overlong
// form, a surrogate, a code point past U+10FFFF, a stray or missing continuation byte).
std::size_t Utf8SequenceAt(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  std::size_t len = 0;
  unsigned lo = 0x80, hi = 0xBF;  // the range of the first continuation byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (len > s.size() - i) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return 0;
  }
  return len;
}

}  // namespace

std::string PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexDigitValue(s[i + 1]) >= 0 &&
        HexDigitValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexDigitValue(s[i + 1]) * 16 + HexDigitValue(s[i + 2]));
      i += 2;
    } else if (s[i] == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

QueryParams ParseQuery(std::string_view query) {
  QueryParams params;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view piece = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (piece.empty()) continue;
    const std::size_t eq = piece.find('=');
    std::string key = PercentDecode(piece.substr(0, eq), true);
    std::string value =
        eq == std::string_view::npos ? "" : PercentDecode(piece.substr(eq + 1), true);
    if (!key.empty()) params.emplace(std::move(key), std::move(value));
  }
  return params;
}

bool IsUtf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = Utf8SequenceAt(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string ScrubUtf8(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  for (std::size_t i = 0; i < message.size();) {
    const std::size_t n = Utf8SequenceAt(message, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(message.substr(i, n));
      i += n;
    }
  }
  return out;
}

Result<std::string> Utf8Field(std::string value, std::string_view field) {
  if (!IsUtf8(value)) return InvalidArgument(std::string(field) + " is not valid UTF-8");
  return value;
}

Result<std::string> QueryParam(const QueryParams& params, std::string_view name,
                               std::string fallback) {
  const auto it = params.find(std::string(name));
  return it == params.end() ? std::move(fallback) : Utf8Field(it->second, name);
}

Status OnlyParams(const QueryParams& params, std::initializer_list<std::string_view> allowed) {
  for (auto it = params.begin(); it != params.end(); it = params.upper_bound(it->first)) {
    const std::string& name = it->first;
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string takes;
      for (std::string_view a : allowed) takes += (takes.empty() ? "" : ", ") + std::string(a);
      // The name is the caller's: scrubbed, and cut, before it is quoted.
      return InvalidArgument("unknown query parameter \"" + ScrubUtf8(name.substr(0, 64)) +
                             "\": this call takes " +
                             (takes.empty() ? std::string("none") : takes));
    }
    if (params.count(name) > 1) {
      return InvalidArgument("query parameter " + name + " is given more than once");
    }
  }
  return Status::Ok();
}

Result<std::uint64_t> WholeNumber(const std::string& value, std::string_view name,
                                  std::uint64_t max, std::uint64_t min) {
  std::uint64_t n = 0;
  bool ok = !value.empty() && value.size() <= 20;
  for (char ch : value) {
    if (!ok) break;
    if (ch < '0' || ch > '9') {
      ok = false;
      break;
    }
    const auto digit = static_cast<std::uint64_t>(ch - '0');
    ok = n <= (max - digit) / 10;
    n = n * 10 + digit;
  }
  if (!ok || n < min) {
    const std::string shown = value.size() > 32 ? value.substr(0, 32) + "..." : value;
    return InvalidArgument(
        std::string(name) + " must be a whole number from " + std::to_string(min) + " to " +
        std::to_string(max) + ", got " +
        nlohmann::json(shown).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return n;
}

}  // namespace allot::api
