#pragma once

// JSON as it arrives on the wire: request bodies and the JSON strings nested inside them (a
// SubmitServiceJob's serviceRequestPayload). Every input is hostile, so:
//   - nesting is capped while the tree is built: the handler that builds nlohmann's value from
//     Boost.JSON's parser counts the depth and stops at the first level past the cap, so neither
//     the parser (it recurses once per level) nor anything recursive after it (dump, copy,
//     compare) ever meets a deep value;
//   - strings must be valid UTF-8 (Boost's parser checks it), numbers must be finite, nothing
//     may follow the value (not even a NUL byte, where nlohmann's own parser stops reading);
//   - refusal messages never echo the input bytes, only positions and what was wrong.
// Nothing here throws.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace allot::api {

// The deepest nesting a wire value may have: `[[1]]` and `{"a":[1]}` have depth 2, a scalar 0.
inline constexpr int kMaxWireJsonDepth = 64;

// Parses `text` as one JSON value. `what` names it in refusals ("the request body",
// "serviceRequestPayload"). Refuses with InvalidArgument:
//   "<what> nests deeper than <max_depth> levels"         (checked before the DOM exists)
//   "<what> is not valid JSON: invalid UTF-8 (at byte N)"  (in a string)
//   "<what> is not valid JSON: a number is out of range (at byte N)"  (1e400, -1e400)
//   "<what> is not valid JSON: <the reason, in words that quote no input> (at byte N)"
// The value is the one nlohmann's own parser builds from the same text, number types included:
// an integer without a minus sign is unsigned, and integers beyond 64 bits (e.g.
// 123456789012345678901234) are floating-point numbers; the caller checks types. A leading UTF-8
// byte order mark is skipped, as nlohmann skips it. Two refusals nlohmann did not make: a NUL
// byte after the value (nlohmann stops reading there) and an exponent beyond 32 bits
// ("0e2147483648"). REQUIRES: 0 <= max_depth <= kMaxWireJsonDepth.
Result<nlohmann::json> ParseWireJson(std::string_view text, std::string_view what,
                                     int max_depth = kMaxWireJsonDepth);

// A short, safe rendering of `value` for an error message, never longer than max_chars plus
// "...": scalars as JSON (strings quoted, ASCII only, invalid UTF-8 replaced by U+FFFD and never
// cut inside an escape), containers only by kind and size ("a list of 3 items", "an object with
// 1 field") so nothing recurses.
std::string QuoteForMessage(const nlohmann::json& value, std::size_t max_chars = 64);

// value.dump() in the compact wire form, with invalid UTF-8 replaced by U+FFFD instead of
// throwing. It recurses once per level: give it values from ParseWireJson or built by code,
// never a tree of unchecked depth. Returns "null" if nlohmann fails anyway.
std::string DumpWire(const nlohmann::json& value);

// Appends `text` as a quoted JSON string, byte for byte what DumpWire(nlohmann::json(text))
// writes, without building a value: printable ASCII is copied as it is (a quote or backslash
// with a backslash before it), anything else goes through nlohmann's escaping. Log lines and
// audit records quote such text for every call (a decision's reason is in quotes), and
// nlohmann's escaping took 9,000 instructions for one.
void AppendJsonString(std::string& out, std::string_view text);

// Writes one JSON object field by field, in the compact form DumpWire writes. The caller gives
// the keys in ascending order, as nlohmann keeps an object's keys, so the bytes are what dumping
// the same value writes (a record that did not change is stored as the same bytes). nlohmann
// has no streaming writer, and building a value to dump it was most of the cost of the record
// every submission stores (docs/benchmarks.md).
class JsonObjectWriter {
 public:
  JsonObjectWriter() { out_.reserve(256); }

  void String(std::string_view key, std::string_view value);
  void Int(std::string_view key, std::int64_t value);
  void Bool(std::string_view key, bool value);
  // `json` is one value already encoded (by DumpWire, or another writer's Finish).
  void Encoded(std::string_view key, std::string_view json);

  // The object; the writer is empty afterwards.
  std::string Finish();

 private:
  void Key(std::string_view key);

  std::string out_;
  std::string last_key_;  // the order check's memory
};

// Writes one JSON array element by element, in the same compact form: the records' arrays of
// tuples (a job's demand, an audit record's changes) are rows of such arrays in an array.
class JsonArrayWriter {
 public:
  void String(std::string_view value);
  void Int(std::int64_t value);
  // `json` is one value already encoded (another writer's Finish).
  void Encoded(std::string_view json);

  // The array; the writer is empty afterwards.
  std::string Finish();

 private:
  void Next();

  std::string out_;
};

}  // namespace allot::api
