#pragma once

// ARN patterns as IAM matches them (Resource, NotResource, ArnLike): the six parts of
// "arn:partition:service:region:account:resource" are matched one by one, so a wildcard in the
// first five never crosses a `:`; in the resource part, which may hold `:` and `/`, it crosses
// both. Case-sensitive. Internal to src/auth.

#include <array>
#include <optional>
#include <string_view>

#include "auth/variables.h"
#include "common/status.h"

namespace allot::auth {

using ArnParts = std::array<std::string_view, 6>;

// The six parts of `arn`, split at its first five colons (with `skip_variables`, colons inside
// a `${...}` do not count). nullopt when there are fewer than six parts or the first is not
// "arn".
std::optional<ArnParts> SplitArn(std::string_view arn, bool skip_variables);

// Ok when `pattern` is "*" or an ARN with a service part; the refusal names the pattern.
Status CheckArnPattern(std::string_view pattern, bool variables);

// Whether `arn` matches `pattern` ("*" matches anything, also a value that is not an ARN).
// With `variables`, the pattern's policy variables are first replaced from `context`.
bool ArnMatches(std::string_view pattern, std::string_view arn, bool variables,
                const Context& context);

}  // namespace allot::auth
