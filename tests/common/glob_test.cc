#include "common/glob.h"

#include <gtest/gtest.h>

#include <string_view>

namespace allot {
namespace {

TEST(GlobMatch, Table) {
  struct Case {
    std::string_view pattern;
    std::string_view text;
    bool match;
  };
  const Case cases[] = {
      {"", "", true},
      {"", "a", false},
      {"a", "", false},
      {"*", "", true},
      {"*", "anything at all", true},
      {"**", "x", true},
      {"abc", "abc", true},
      {"abc", "abcd", false},
      {"abcd", "abc", false},
      {"abc", "ABC", false},  // case-sensitive
      {"InternalServerError*", "InternalServerError: try again", true},
      {"InternalServerError*", "InternalServerError", true},
      {"InternalServerError*", "Received status from SageMaker: InternalServerError", false},
      {"*CapacityError*", "Received status from SageMaker: CapacityError: none left", true},
      {"*CapacityError*", "CapacityError", true},
      {"*CapacityError*", "Capacity Error", false},
      {"*Error", "AlgorithmError", true},
      {"*Error", "AlgorithmErrors", false},
      {"Received status from SageMaker: AlgorithmError: *",
       "Received status from SageMaker: AlgorithmError: exit code 1", true},
      {"Received status from SageMaker: AlgorithmError: *",
       "Received status from SageMaker: ClientError: bad input", false},
      {"a*b*c", "abc", true},
      {"a*b*c", "aXXbYYc", true},
      {"a*b*c", "aXXcYYb", false},
      {"a*b", "abab", true},   // needs backtracking to the second b
      {"a*ab", "aaab", true},  // backtracking over repeated prefix
      {"a*a", "a", false},
      {"?", "?", true},  // only * is special
      {"?", "x", false},
      {"[ab]", "a", false},
      {"[ab]", "[ab]", true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << "pattern=\"" << c.pattern << "\" text=\"" << c.text << "\"");
    EXPECT_EQ(GlobMatch(c.pattern, c.text), c.match);
  }
}

}  // namespace
}  // namespace allot
