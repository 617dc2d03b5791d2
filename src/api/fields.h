#pragma once

// Reading request fields with clear refusals: every message names the field as the caller sent
// it (`path`, e.g. "capacityLimits.maxCapacity"; `field` when no path is given), the value and
// what is allowed. Integers are read only with their bounds (model/rules.h), so no value outside
// them, nor a float or a number beyond 64 bits, reaches the controller.

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace allot::api {

using Json = nlohmann::json;

// The request body as a JSON object (an empty body is {}); nesting deeper than 64 levels, invalid
// JSON and invalid UTF-8 are refused before anything recursive runs.
inline constexpr std::string_view kRequestBody = "the request body";
Result<Json> ReadBody(std::string_view body, std::string_view what = kRequestBody);
// ReadBody for the decoders' insides, where a refusal is thrown (ClientError).
Json ParseBody(std::string_view body, std::string_view what = kRequestBody);

// A short rendering of a value for messages: never the whole of a large or nested value.
std::string Quoted(const Json& value);
// Refuses a tag key that begins with "aws:" (in any case), naming `what`.
void RefuseReservedTagKey(const std::string& key, const std::string& what);

std::string RequireString(const Json& obj, const char* field, const std::string& path = "");
std::optional<std::string> OptionalString(const Json& obj, const char* field,
                                          const std::string& path = "");
// An integer between lo and hi (inclusive).
std::int64_t RequireInt(const Json& obj, const char* field, std::int64_t lo, std::int64_t hi,
                        const std::string& path = "");
std::optional<std::int64_t> OptionalInt(const Json& obj, const char* field, std::int64_t lo,
                                        std::int64_t hi, const std::string& path = "");
// The value must be one of `allowed`.
std::string RequireEnum(const Json& obj, const char* field,
                        std::initializer_list<std::string_view> allowed,
                        const std::string& path = "");
std::optional<std::string> OptionalEnum(const Json& obj, const char* field,
                                        std::initializer_list<std::string_view> allowed,
                                        const std::string& path = "");
const Json* OptionalObject(const Json& obj, const char* field, const std::string& path = "");
const Json* OptionalArray(const Json& obj, const char* field, const std::string& path = "");
// A list of strings (absent: empty), at most `max_items` of them.
std::vector<std::string> OptionalStringList(const Json& obj, const char* field,
                                            std::size_t max_items, const std::string& path = "");
// Each element of an array field must be an object (for lists of structures).
void RequireObjects(const Json& list, const std::string& path);

// A text's length in characters (code points, as AWS counts them), from `min` to `max`; a refusal
// names `what` and the length sent, never the text.
void RequireLength(std::string_view text, std::string_view what, std::size_t min, std::size_t max);

// Refuses a Status that is not OK with its message (rules from model/rules.h).
void RefuseUnless(const Status& status);

// tags: 0-50 entries, keys 1-128, values <= 256 characters. Returns them as an object.
Json ReadTags(const Json& obj, const char* field = "tags");

}  // namespace allot::api
