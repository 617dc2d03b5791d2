#pragma once

#include <string_view>

namespace allot {

// Matches `text` against an AWS Batch evaluateOnExit pattern. `*` matches any run of characters
// (AWS documents a trailing `*` and its examples use `*CapacityError*`, so `*` is allowed
// anywhere); every other character matches itself. Case-sensitive, as AWS documents.
bool GlobMatch(std::string_view pattern, std::string_view text);

}  // namespace allot
