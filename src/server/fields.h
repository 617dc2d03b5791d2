#pragma once

// Reading request fields with clear refusals: every message names the field, the value and
// what is allowed.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace allot::server {

using Json = nlohmann::json;

// The request body as a JSON object (an empty body is {}).
Json ParseBody(std::string_view body);

std::string RequireString(const Json& obj, const char* field);
std::optional<std::string> OptionalString(const Json& obj, const char* field);
std::int64_t RequireInt(const Json& obj, const char* field);
std::optional<std::int64_t> OptionalInt(const Json& obj, const char* field);
// The value must be one of `allowed`.
std::string RequireEnum(const Json& obj, const char* field,
                        std::initializer_list<std::string_view> allowed);
std::optional<std::string> OptionalEnum(const Json& obj, const char* field,
                                        std::initializer_list<std::string_view> allowed);
const Json* OptionalObject(const Json& obj, const char* field);
const Json* OptionalArray(const Json& obj, const char* field);
void RequireRange(std::int64_t value, const std::string& field, std::int64_t lo, std::int64_t hi);

// AWS resource names: 1-128 letters, digits, '-' and '_'.
void RequireName(const std::string& value, const std::string& field);
// tags: 1-50 entries, keys 1-128, values <= 256 characters. Returns them as an object.
Json ReadTags(const Json& obj, const char* field = "tags");

}  // namespace allot::server
