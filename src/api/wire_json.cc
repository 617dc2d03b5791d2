#include "api/wire_json.h"

#include <array>
#include <boost/json/basic_parser_impl.hpp>
#include <charconv>
#include <cmath>
#include <exception>
#include <utility>

#include "common/check.h"

namespace allot::api {
namespace {

using Json = nlohmann::json;
namespace bj = boost::json;

// Builds the value as Boost.JSON's parser reads the text: nlohmann's own DOM builder is fed from
// Boost's handler calls, so the tree is nlohmann's, as the decoders read it, and Boost's lexer
// (several times faster than nlohmann's, which copies each character twice) does the reading.
// The handler counts nesting and stops the parser at the first level past the cap: nothing
// deeper than the cap is ever built. Numbers take nlohmann's types: an integer with no minus
// sign is unsigned, one beyond 64 bits a float; a float must be finite.
class DomBuilder {
 public:
  // No limits of Boost's own: the request's size is capped before it is parsed. (The names are
  // those Boost's handler must have.)
  // NOLINTBEGIN(readability-identifier-naming)
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);
  // NOLINTEND(readability-identifier-naming)

  enum class Stop : std::uint8_t { kNone, kTooDeep, kOutOfRange };

  DomBuilder(Json& root, int max_depth)
      : dom_(root, /*allow_exceptions=*/false), max_depth_(max_depth) {}

  bool on_document_begin(bj::error_code& /*ec*/) { return true; }
  bool on_document_end(bj::error_code& /*ec*/) { return true; }
  bool on_object_begin(bj::error_code& ec) {
    return Open(ec) && dom_.start_object(static_cast<std::size_t>(-1));
  }
  bool on_object_end(std::size_t /*n*/, bj::error_code& /*ec*/) {
    --depth_;
    return dom_.end_object();
  }
  bool on_array_begin(bj::error_code& ec) {
    return Open(ec) && dom_.start_array(static_cast<std::size_t>(-1));
  }
  bool on_array_end(std::size_t /*n*/, bj::error_code& /*ec*/) {
    --depth_;
    return dom_.end_array();
  }
  // A key, string or number arrives in parts only where it holds escapes or spans buffers.
  bool on_key_part(bj::string_view part, std::size_t /*n*/, bj::error_code& /*ec*/) {
    return Keep(part);
  }
  bool on_key(bj::string_view last, std::size_t /*n*/, bj::error_code& /*ec*/) {
    return Cleared(dom_.key(Whole(last)));
  }
  bool on_string_part(bj::string_view part, std::size_t /*n*/, bj::error_code& /*ec*/) {
    return Keep(part);
  }
  bool on_string(bj::string_view last, std::size_t /*n*/, bj::error_code& /*ec*/) {
    return Cleared(dom_.string(Whole(last)));
  }
  bool on_number_part(bj::string_view part, bj::error_code& /*ec*/) { return Keep(part); }
  bool on_int64(std::int64_t value, bj::string_view last, bj::error_code& /*ec*/) {
    // "-0" stays a signed integer, as nlohmann reads it.
    const bool minus = !text_.empty() ? text_.front() == '-' : !last.empty() && last.front() == '-';
    text_.clear();
    if (value >= 0 && !minus) return dom_.number_unsigned(static_cast<std::uint64_t>(value));
    return dom_.number_integer(value);
  }
  bool on_uint64(std::uint64_t value, bj::string_view /*last*/, bj::error_code& /*ec*/) {
    text_.clear();
    return dom_.number_unsigned(value);
  }
  bool on_double(double value, bj::string_view last, bj::error_code& ec) {
    // Boost 1.81 rounds many numbers of 16 or more digits away from the nearest double (it
    // multiplies a mantissa past 2^53 by a power of ten); from_chars rounds correctly, as
    // nlohmann's strtod did. Out of its range it leaves the value: an overflow is then refused
    // (Boost may have rounded 1.797693134862315810e308 down to the largest double) and an
    // underflow keeps Boost's 0 or tiny value, as strtod's would be kept.
    std::string_view number(last.data(), last.size());
    if (!text_.empty()) number = text_.append(last.data(), last.size());
    double exact = value;
    const std::from_chars_result r =
        std::from_chars(number.data(), number.data() + number.size(), exact);
    text_.clear();
    if (r.ec == std::errc()) {
      value = exact;
    } else if (r.ec == std::errc::result_out_of_range && std::fabs(value) >= 1) {
      return Fail(Stop::kOutOfRange, ec);
    }
    if (!std::isfinite(value)) return Fail(Stop::kOutOfRange, ec);  // 1e400
    return dom_.number_float(value, kNoText);
  }
  bool on_bool(bool value, bj::error_code& /*ec*/) { return dom_.boolean(value); }
  bool on_null(bj::error_code& /*ec*/) { return dom_.null(); }
  // Comments are refused by the parser's options; these are never called.
  bool on_comment_part(bj::string_view /*part*/, bj::error_code& /*ec*/) { return true; }
  bool on_comment(bj::string_view /*text*/, bj::error_code& /*ec*/) { return true; }

  Stop stop() const { return stop_; }

 private:
  inline static const Json::string_t kNoText;  // nlohmann's DOM builder ignores a float's text

  bool Keep(bj::string_view part) {
    text_.append(part.data(), part.size());
    return true;
  }
  // The parts kept so far and the last one. Cleared() empties them once the value is built.
  std::string& Whole(bj::string_view last) {
    text_.append(last.data(), last.size());
    return text_;
  }
  bool Cleared(bool ok) {
    text_.clear();
    return ok;
  }

  bool Open(bj::error_code& ec) {
    if (++depth_ > max_depth_) return Fail(Stop::kTooDeep, ec);
    return true;
  }
  bool Fail(Stop why, bj::error_code& ec) {
    stop_ = why;
    ec = bj::error::exception;  // the reason is stop_, not the code
    return false;
  }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  std::string text_;  // the parts read so far of a key, string or number
  int max_depth_;
  int depth_ = 0;
  Stop stop_ = Stop::kNone;
};

// Why Boost's parser stopped at byte `at` of `text`, in words that quote no input.
std::string Reason(const bj::error_code& ec, std::string_view text, std::size_t at) {
  if (ec == bj::error::extra_data) return "unexpected text after the value";
  // Boost reports a string's invalid UTF-8 at its first byte; valid UTF-8 is never refused.
  if (ec == bj::error::syntax && at < text.size() && static_cast<unsigned char>(text[at]) >= 0x80) {
    return "invalid UTF-8";
  }
  if (ec == bj::error::incomplete) return "unexpected end of input";
  if (ec == bj::error::syntax) return "unexpected character";
  // An exponent beyond 32 bits ("0e2147483648"), which nlohmann read as 0 or infinity.
  if (ec == bj::error::exponent_overflow) return "a number is out of range";
  if (ec == bj::error::illegal_leading_surrogate || ec == bj::error::illegal_trailing_surrogate ||
      ec == bj::error::expected_utf16_escape) {
    return "a \\u escape is half of a UTF-16 surrogate pair";
  }
  if (ec == bj::error::expected_hex_digit || ec == bj::error::invalid_escape) {
    return "invalid escape in a string";
  }
  return ec.message();
}

// The longest prefix of ASCII dump output `s` that fits in max_chars without cutting an escape
// ("\n", "\u00e9") in two.
std::size_t EscapeSafeCut(const std::string& s, std::size_t max_chars) {
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t len = 1;
    if (s[i] == '\\' && i + 1 < s.size()) len = s[i + 1] == 'u' ? 6 : 2;
    if (i + len > max_chars) break;
    i += len;
  }
  return i;
}

std::string Count(std::size_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

// A JSON integer, as nlohmann writes it.
void AppendInt(std::string& out, std::int64_t value) {
  char digits[24];
  out.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);  // always fits
}

}  // namespace

Result<Json> ParseWireJson(std::string_view text, std::string_view what, int max_depth) {
  // Boost's parser recurses once per level, up to the cap.
  ALLOT_CHECK(max_depth >= 0 && max_depth <= kMaxWireJsonDepth);
  // A leading UTF-8 byte order mark is skipped, as nlohmann did (RFC 8259 lets a reader ignore
  // it); positions still count from the text's first byte.
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  const std::size_t skipped = text.starts_with(kByteOrderMark) ? kByteOrderMark.size() : 0;
  try {
    Json value;
    bj::parse_options options;  // strict JSON: no comments, no trailing commas
    // One level more than the handler allows, so the handler's count is the one that stops it.
    options.max_depth = static_cast<std::size_t>(max_depth) + 1;
    bj::basic_parser<DomBuilder> parser(options, value, max_depth);
    bj::error_code ec;
    const std::size_t read = skipped + parser.write_some(/*more=*/false, text.data() + skipped,
                                                         text.size() - skipped, ec);
    if (!ec && read < text.size()) ec = bj::error::extra_data;  // "1 2": the parser stops at 2
    if (!ec) return value;
    const std::string name(what);
    const std::string at = " (at byte " + std::to_string(read) + ")";
    switch (parser.handler().stop()) {
      case DomBuilder::Stop::kTooDeep:
        return InvalidArgument(name + " nests deeper than " + std::to_string(max_depth) +
                               " levels");
      case DomBuilder::Stop::kOutOfRange:
        return InvalidArgument(name + " is not valid JSON: a number is out of range" + at);
      case DomBuilder::Stop::kNone:
        break;
    }
    return InvalidArgument(name + " is not valid JSON: " + Reason(ec, text, read) + at);
  } catch (const std::exception& e) {  // bad_alloc from the handler: write_some lets it through
    return InvalidArgument(std::string(what) + " could not be read: " + e.what());
  }
}

std::string QuoteForMessage(const Json& value, std::size_t max_chars) {
  switch (value.type()) {
    case Json::value_t::array:
      return "a list of " + Count(value.size(), "item", "items");
    case Json::value_t::object:
      return "an object with " + Count(value.size(), "field", "fields");
    case Json::value_t::binary:
      return "binary data";
    case Json::value_t::discarded:
      return "nothing";
    default:
      break;
  }
  std::string text;
  try {
    text = value.dump(-1, ' ', /*ensure_ascii=*/true, Json::error_handler_t::replace);
  } catch (const std::exception&) {
    return "an unprintable value";
  }
  if (text.size() <= max_chars) return text;
  text.resize(EscapeSafeCut(text, max_chars));
  return text + "...";
}

std::string DumpWire(const Json& value) {
  try {
    return value.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
  } catch (const std::exception&) {
    return "null";
  }
}

void AppendJsonString(std::string& out, std::string_view text) {
  // What each byte needs, looked up once per byte in one pass: most text is plain.
  enum : std::uint8_t { kPlain, kBackslash, kOther };
  static constexpr auto kNeeds = [] {
    std::array<std::uint8_t, 256> needs{};
    for (std::size_t c = 0; c < needs.size(); ++c) {
      needs[c] = c < 0x20 || c >= 0x7f ? kOther : c == '"' || c == '\\' ? kBackslash : kPlain;
    }
    return needs;
  }();
  const std::size_t start = out.size();
  out.reserve(start + text.size() + 2);
  out += '"';
  std::size_t run = 0;  // the text from `run` on is still to be copied
  for (std::size_t i = 0; i < text.size(); ++i) {
    const std::uint8_t needs = kNeeds[static_cast<unsigned char>(text[i])];
    if (needs == kPlain) continue;
    if (needs == kOther) {  // a control character or not ASCII: nlohmann escapes the whole text
      out.resize(start);
      out += DumpWire(Json(std::string(text)));
      return;
    }
    out.append(text.substr(run, i - run));
    out += '\\';
    run = i;  // the quote or backslash itself starts the next run
  }
  out.append(text.substr(run));
  out += '"';
}

void JsonObjectWriter::Key(std::string_view key) {
  ALLOT_CHECK(out_.empty() || key > last_key_);  // ascending, each key once
  last_key_ = key;
  out_ += out_.empty() ? '{' : ',';
  AppendJsonString(out_, key);
  out_ += ':';
}

void JsonObjectWriter::String(std::string_view key, std::string_view value) {
  Key(key);
  AppendJsonString(out_, value);
}

void JsonObjectWriter::Int(std::string_view key, std::int64_t value) {
  Key(key);
  AppendInt(out_, value);
}

void JsonObjectWriter::Bool(std::string_view key, bool value) {
  Key(key);
  out_ += value ? "true" : "false";
}

void JsonObjectWriter::Encoded(std::string_view key, std::string_view json) {
  Key(key);
  out_ += json;
}

std::string JsonObjectWriter::Finish() {
  out_ += out_.empty() ? "{}" : "}";
  last_key_.clear();
  return std::exchange(out_, std::string());
}

void JsonArrayWriter::Next() { out_ += out_.empty() ? '[' : ','; }

void JsonArrayWriter::String(std::string_view value) {
  Next();
  AppendJsonString(out_, value);
}

void JsonArrayWriter::Int(std::int64_t value) {
  Next();
  AppendInt(out_, value);
}

void JsonArrayWriter::Encoded(std::string_view json) {
  Next();
  out_ += json;
}

std::string JsonArrayWriter::Finish() {
  out_ += out_.empty() ? "[]" : "]";
  return std::exchange(out_, std::string());
}

}  // namespace allot::api
