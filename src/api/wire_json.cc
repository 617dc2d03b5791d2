#include "api/wire_json.h"

#include <algorithm>
#include <charconv>
#include <exception>
#include <utility>

#include "common/check.h"

namespace allot::api {
namespace {

using Json = nlohmann::json;

// Builds the value while nlohmann's iterative SAX parser reads the text, counting nesting, and
// stops it at the first level past the cap: nothing deeper than the cap is ever built, and the
// text is read once (nlohmann's own DOM builder does the building).
class DepthLimiter {
 public:
  DepthLimiter(Json& root, int max_depth)
      : dom_(root, /*allow_exceptions=*/false), max_depth_(max_depth) {}

  bool null() { return dom_.null(); }
  bool boolean(bool value) { return dom_.boolean(value); }
  bool number_integer(Json::number_integer_t value) { return dom_.number_integer(value); }
  bool number_unsigned(Json::number_unsigned_t value) { return dom_.number_unsigned(value); }
  bool number_float(Json::number_float_t value, const Json::string_t& text) {
    return dom_.number_float(value, text);
  }
  bool string(Json::string_t& value) { return dom_.string(value); }
  bool binary(Json::binary_t& value) { return dom_.binary(value); }
  bool key(Json::string_t& value) { return dom_.key(value); }
  bool start_object(std::size_t size) { return Open() && dom_.start_object(size); }
  bool start_array(std::size_t size) { return Open() && dom_.start_array(size); }
  bool end_object() {
    Close();
    return dom_.end_object();
  }
  bool end_array() {
    Close();
    return dom_.end_array();
  }

  bool parse_error(std::size_t position, const std::string& /*last_token: input bytes*/,
                   const nlohmann::detail::exception& ex) {
    error_position_ = position;
    error_id_ = ex.id;
    error_text_ = ex.what();
    return false;
  }

  bool too_deep() const { return too_deep_; }
  std::size_t error_position() const { return error_position_; }
  int error_id() const { return error_id_; }
  const std::string& error_text() const { return error_text_; }

 private:
  bool Open() {
    if (++depth_ > max_depth_) {
      too_deep_ = true;
      return false;
    }
    return true;
  }
  void Close() { --depth_; }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  int max_depth_;
  int depth_ = 0;
  bool too_deep_ = false;
  std::size_t error_position_ = 0;
  int error_id_ = 0;
  std::string error_text_;
};

// nlohmann's reason without its "[json.exception...] parse error at line L, column C: " prefix
// and without "; last read: '<input bytes>'" and what follows it.
std::string ShortReason(std::string text) {
  if (std::size_t end = text.find("] ");
      text.rfind("[json.exception.", 0) == 0 && end != std::string::npos) {
    text.erase(0, end + 2);
  }
  if (text.rfind("parse error", 0) == 0) {
    if (std::size_t colon = text.find(": "); colon != std::string::npos) text.erase(0, colon + 2);
  }
  if (std::size_t last = text.find("; last read:"); last != std::string::npos) text.erase(last);
  return text;
}

// Why the SAX pass stopped, in words that quote no input.
std::string Reason(const DepthLimiter& limiter) {
  const std::string at = " (at byte " + std::to_string(limiter.error_position()) + ")";
  if (limiter.error_id() == 406) return "a number is out of range" + at;  // 1e400
  if (limiter.error_text().find("UTF-8") != std::string::npos) return "invalid UTF-8" + at;
  return ShortReason(limiter.error_text()) + at;
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
  ALLOT_CHECK(max_depth >= 0);
  const std::string name(what);
  try {
    Json value;
    DepthLimiter limiter(value, max_depth);
    if (!Json::sax_parse(text.begin(), text.end(), &limiter)) {
      if (limiter.too_deep()) {
        return InvalidArgument(name + " nests deeper than " + std::to_string(max_depth) +
                               " levels");
      }
      return InvalidArgument(name + " is not valid JSON: " + Reason(limiter));
    }
    return value;
  } catch (const std::exception& e) {  // bad_alloc; nlohmann reports through the handler
    return InvalidArgument(name + " could not be read: " + e.what());
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
  const bool printable =
      std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
  if (!printable) {
    out += DumpWire(Json(std::string(text)));
    return;
  }
  out.reserve(out.size() + text.size() + 2);
  out += '"';
  std::size_t run = 0;  // the text from `run` on is still to be copied
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '"' && text[i] != '\\') continue;
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
