#pragma once

// JSON as it arrives on the wire: request bodies and the JSON strings nested inside them (a
// SubmitServiceJob's serviceRequestPayload). Every input is hostile, so:
//   - nesting is capped while the tree is built: nlohmann's parser is iterative, and the SAX
//     handler that builds the value counts the depth and stops at the first level past the cap,
//     so nothing recursive (dump, copy, compare) ever meets a deep value;
//   - strings must be valid UTF-8 (nlohmann's lexer checks it), numbers must be finite;
//   - refusal messages never echo the input bytes, only positions and what was wrong.
// Nothing here throws.

#include <cstddef>
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
//   "<what> is not valid JSON: <nlohmann's reason, without the bytes it last read> (at byte N)"
// Integers beyond 64 bits (e.g. 123456789012345678901234) parse as floating-point numbers, as
// nlohmann does; the caller checks types. REQUIRES: max_depth >= 0.
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
// writes, without building a value: printable ASCII is copied as it is, anything else goes
// through nlohmann's escaping.
void AppendJsonString(std::string& out, std::string_view text);

}  // namespace allot::api
