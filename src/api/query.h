#pragma once

// The parts of a request that are not its JSON body: the percent-decoded path, the query's
// parameters, and values read from them. A value is refused (InvalidArgument, naming the field)
// unless it is UTF-8, and a refusal never echoes the bytes that were not.

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace allot::api {

// A query's parameters, in the order sent for each name (tagKeys may repeat).
using QueryParams = std::multimap<std::string, std::string>;

// %XX escapes decoded (a malformed one is kept as it is); '+' becomes a space in a query.
std::string PercentDecode(std::string_view s, bool plus_is_space);
// key=value pairs split on '&', each decoded; a piece without '=' has an empty value.
QueryParams ParseQuery(std::string_view query);

bool IsUtf8(std::string_view s);
// A message safe to send whatever it quotes: each byte that starts no UTF-8 sequence becomes
// U+FFFD.
std::string ScrubUtf8(std::string_view message);
// The value of a field read from the path, the query or a header, refused unless UTF-8.
Result<std::string> Utf8Field(std::string value, std::string_view field);
// The parameter `name`, UTF-8, or `fallback` when the query does not hold it.
Result<std::string> QueryParam(const QueryParams& params, std::string_view name,
                               std::string fallback = "");
// Refuses a parameter not in `allowed`, naming the ones the call takes, and one given more than
// once: Allot's own routes read each parameter once, and one they would not read (a filter
// a route does not have, say) must not pass for applied.
Status OnlyParams(const QueryParams& params, std::initializer_list<std::string_view> allowed);
// A whole number of decimal digits from `min` to `max` (no sign, exponent, spaces or empty
// string).
Result<std::uint64_t> WholeNumber(const std::string& value, std::string_view name,
                                  std::uint64_t max, std::uint64_t min = 0);

}  // namespace allot::api
