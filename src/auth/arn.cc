#include "auth/arn.h"

#include <cstddef>
#include <string>

namespace allot::auth {

std::optional<ArnParts> SplitArn(std::string_view arn, bool skip_variables) {
  ArnParts parts;
  std::size_t start = 0;
  std::size_t found = 0;
  for (std::size_t i = 0; i < arn.size() && found < 5; ++i) {
    if (skip_variables && arn.substr(i).starts_with("${")) {
      const std::size_t end = VariableEnd(arn, i);
      if (end == std::string_view::npos) break;
      i = end;
    } else if (arn[i] == ':') {
      parts[found++] = arn.substr(start, i - start);
      start = i + 1;
    }
  }
  if (found < 5 || parts[0] != "arn") return std::nullopt;
  parts[5] = arn.substr(start);
  return parts;
}

Status CheckArnPattern(std::string_view pattern, bool variables) {
  if (pattern == "*") return Status::Ok();
  const std::optional<ArnParts> parts = SplitArn(pattern, variables);
  if (!parts) {
    return InvalidArgument("'" + std::string(pattern) +
                           "' is not \"*\" or an ARN (arn:partition:service:region:account:"
                           "resource, wildcards * and ? allowed)");
  }
  if ((*parts)[2].empty()) {
    return InvalidArgument("'" + std::string(pattern) + "' is an ARN without a service");
  }
  return Status::Ok();
}

bool ArnMatches(std::string_view pattern, std::string_view arn, bool variables,
                const Context& context) {
  if (pattern == "*") return true;
  const std::optional<ArnParts> want = SplitArn(pattern, variables);
  const std::optional<ArnParts> have = SplitArn(arn, false);
  if (!want || !have) return false;
  for (std::size_t i = 0; i < want->size(); ++i) {
    if (!PolicyTextMatches((*want)[i], (*have)[i], Comparison::kLike, variables, context)) {
      return false;
    }
  }
  return true;
}

}  // namespace allot::auth
