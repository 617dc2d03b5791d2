#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz_target.h"

namespace allot::fuzz {

void Finding(std::string_view what) {
  std::fprintf(stderr, "FINDING: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

bool IsValidUtf8(std::string_view s) {
  try {
    (void)nlohmann::json(std::string(s)).dump();  // the strict handler throws on invalid UTF-8
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

}  // namespace allot::fuzz
