#include "common/strings.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace allot {
namespace {

TEST(AsciiLower, ChangesOnlyAsciiUpperCaseLetters) {
  EXPECT_EQ(AsciiLower('A'), 'a');
  EXPECT_EQ(AsciiLower('Z'), 'z');
  EXPECT_EQ(AsciiLower('a'), 'a');
  EXPECT_EQ(AsciiLower('@'), '@');                                          // just before 'A'
  EXPECT_EQ(AsciiLower('['), '[');                                          // just after 'Z'
  EXPECT_EQ(AsciiLower(static_cast<char>(0xC4)), static_cast<char>(0xC4));  // Latin-1 'Ä'
  EXPECT_EQ(AsciiLower("X-Amz-Date: 20150830T123600Z"), "x-amz-date: 20150830t123600z");
  EXPECT_EQ(AsciiLower(""), "");
  EXPECT_EQ(AsciiLower("\xC3\x84rger"), "\xC3\x84rger");  // UTF-8 'Ä' is left alone
}

TEST(AsciiLower, EveryByte) {
  for (int i = 0; i < 256; ++i) {
    const char c = static_cast<char>(i);
    const bool upper = i >= 'A' && i <= 'Z';
    EXPECT_EQ(AsciiLower(c), upper ? static_cast<char>(i + 32) : c) << i;
    const bool lower = i >= 'a' && i <= 'z';
    EXPECT_EQ(AsciiUpper(c), lower ? static_cast<char>(i - 32) : c) << i;
  }
}

TEST(AsciiUpper, ChangesOnlyAsciiLowerCaseLetters) {
  EXPECT_EQ(AsciiUpper('a'), 'A');
  EXPECT_EQ(AsciiUpper('z'), 'Z');
  EXPECT_EQ(AsciiUpper('`'), '`');  // just before 'a'
  EXPECT_EQ(AsciiUpper('{'), '{');  // just after 'z'
  EXPECT_EQ(AsciiUpper("get /v1/jobs"), "GET /V1/JOBS");
  EXPECT_EQ(AsciiUpper(""), "");
}

TEST(HexDigitValue, EveryDigitInEitherCaseAndNothingElse) {
  EXPECT_EQ(HexDigitValue('0'), 0);
  EXPECT_EQ(HexDigitValue('9'), 9);
  EXPECT_EQ(HexDigitValue('a'), 10);
  EXPECT_EQ(HexDigitValue('F'), 15);
  for (char c : std::string_view("gG/:@`x \0", 9)) EXPECT_EQ(HexDigitValue(c), -1) << c;
}

TEST(EqualsIgnoreCase, Table) {
  struct Case {
    std::string_view a;
    std::string_view b;
    bool equal;
  };
  const Case cases[] = {
      {"", "", true},
      {"host", "Host", true},
      {"X-AMZ-DATE", "x-amz-date", true},
      {"host", "hosts", false},
      {"host", "h0st", false},
      {"@", "`", false},  // 0x40 and 0x60 differ by the case bit but are not letters
      {"[", "{", false},
      {"\xC4", "\xE4", false},  // Latin-1 'Ä' and 'ä': not ASCII
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.a) + " vs " + std::string(c.b));
    EXPECT_EQ(EqualsIgnoreCase(c.a, c.b), c.equal);
    EXPECT_EQ(EqualsIgnoreCase(c.b, c.a), c.equal);
  }
}

TEST(Trim, AsciiWhitespace) {
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim(" \t\n\v\f\r"), "");
  EXPECT_EQ(Trim("  a b  "), "a b");
  EXPECT_EQ(Trim("\ta\tb\r\n"), "a\tb");
  EXPECT_EQ(Trim("ab"), "ab");
  EXPECT_EQ(Trim("\x1fz\x1c"), "\x1fz\x1c");  // Python's str.strip() would take these
  EXPECT_EQ(Trim(std::string_view("\0a\0", 3)), std::string_view("\0a\0", 3));
}

TEST(Trim, PointsIntoItsArgument) {
  const std::string_view s = "  key  ";
  const std::string_view t = Trim(s);
  EXPECT_EQ(t.data(), s.data() + 2);
  EXPECT_EQ(t.size(), 3U);
}

TEST(Trim, GivenCharacters) {
  EXPECT_EQ(Trim(" \tvalue\r", " \t\r"), "value");
  EXPECT_EQ(Trim("\nvalue\n", " \t\r"), "\nvalue\n");
  EXPECT_EQ(Trim("xxyxx", "x"), "y");
  EXPECT_EQ(Trim("xxx", "x"), "");
  EXPECT_EQ(Trim(" a ", ""), " a ");
}

TEST(Split, Table) {
  struct Case {
    std::string_view s;
    std::vector<std::string_view> parts;
  };
  const Case cases[] = {
      {"", {""}},
      {"a", {"a"}},
      {",", {"", ""}},
      {"a,b", {"a", "b"}},
      {"a,,b", {"a", "", "b"}},
      {",a,", {"", "a", ""}},
      {"a;b", {"a;b"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.s);
    EXPECT_EQ(Split(c.s, ','), c.parts);
  }
}

TEST(Split, PiecesPointIntoItsArgument) {
  const std::string_view s = "AKID/20150830/us-east-1/iam/aws4_request";
  const std::vector<std::string_view> parts = Split(s, '/');
  ASSERT_EQ(parts.size(), 5U);
  EXPECT_EQ(parts[0].data(), s.data());
  EXPECT_EQ(parts[4].data(), s.data() + s.size() - parts[4].size());
}

TEST(Join, Table) {
  EXPECT_EQ(Join({}, ", "), "");
  EXPECT_EQ(Join({"a"}, ", "), "a");
  EXPECT_EQ(Join({"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(Join({"", "b"}, ", "), ", b");  // an empty element still gets its separator
  EXPECT_EQ(Join({"a", "b"}, ""), "ab");
}

TEST(Join, AnyRangeOfStringLikeElements) {
  const std::vector<std::string> strings = {"x", "y"};
  const std::vector<std::string_view> views = {"x", "y"};
  const std::initializer_list<const char*> pointers = {"x", "y"};
  EXPECT_EQ(Join(strings, "/"), "x/y");
  EXPECT_EQ(Join(views, "/"), "x/y");
  EXPECT_EQ(Join(pointers, "/"), "x/y");
}

TEST(Join, InvertsSplit) {
  for (std::string_view s : {"", ",", "a", "a,b", ",a,,b,"}) {
    SCOPED_TRACE(s);
    EXPECT_EQ(Join(Split(s, ','), ","), s);
  }
}

TEST(CodePoints, CountsCharactersNotBytes) {
  EXPECT_EQ(CodePoints(""), 0U);
  EXPECT_EQ(CodePoints("abc"), 3U);
  EXPECT_EQ(CodePoints("caf\xC3\xA9 \xF0\x9F\x99\x82"), 6U);  // 2- and 4-byte sequences
  EXPECT_EQ(CodePoints("\xE2\x80\xA6"), 1U);
}

TEST(ZeroPadded, PadsToTheWidthAndNeverCuts) {
  EXPECT_EQ(ZeroPadded(42, 5), "00042");
  EXPECT_EQ(ZeroPadded(0, 3), "000");
  EXPECT_EQ(ZeroPadded(12345, 3), "12345");
  EXPECT_EQ(ZeroPadded(7, 0), "7");
  EXPECT_EQ(ZeroPadded(UINT64_MAX, 20), "18446744073709551615");
  EXPECT_EQ(ZeroPadded(1, 20), "00000000000000000001");
}

TEST(UuidText, WritesTheBitsInOrderAsRfc9562Does) {
  EXPECT_EQ(UuidText(0x0123456789abcdefULL, 0xfedcba9876543210ULL),
            "01234567-89ab-cdef-fedc-ba9876543210");
  EXPECT_EQ(UuidText(0, 0), "00000000-0000-0000-0000-000000000000");
  EXPECT_EQ(UuidText(UINT64_MAX, UINT64_MAX), "ffffffff-ffff-ffff-ffff-ffffffffffff");
  // RFC 9562's version-7 example: 017F22E2-79B0-7CC3-98C4-DC0C0C07398F.
  EXPECT_EQ(UuidText(0x017f22e279b07cc3ULL, 0x98c4dc0c0c07398fULL),
            "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
}

TEST(UuidV7, PutsTheMillisecondsFirstAndSetsVersionAndVariant) {
  // RFC 9562's example again, from its parts: 0x017F22E279B0 ms, rand_a 0xCC3, rand_b ...
  EXPECT_EQ(UuidV7(0x017f22e279b0ULL, 0xcc3, 0x18c4dc0c0c07398fULL),
            "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
  // Bits beyond their fields are dropped, never spilled into the version or the variant.
  EXPECT_EQ(UuidV7(UINT64_MAX, UINT64_MAX, UINT64_MAX), "ffffffff-ffff-7fff-bfff-ffffffffffff");
  EXPECT_EQ(UuidV7(0, 0, 0), "00000000-0000-7000-8000-000000000000");
  // Later milliseconds sort later as text, whatever the random bits.
  EXPECT_LT(UuidV7(1000, UINT64_MAX, UINT64_MAX), UuidV7(1001, 0, 0));
}

TEST(UuidV4, SetsVersionAndVariantAndKeepsTheOther122Bits) {
  EXPECT_EQ(UuidV4(UINT64_MAX, UINT64_MAX), "ffffffff-ffff-4fff-bfff-ffffffffffff");
  EXPECT_EQ(UuidV4(0, 0), "00000000-0000-4000-8000-000000000000");
  EXPECT_EQ(UuidV4(0x0123456789abcdefULL, 0xfedcba9876543210ULL),
            "01234567-89ab-4def-bedc-ba9876543210");
}

// A name someone else chose, on a line of a log: no control character passes, and a backslash
// is doubled, so "\\x0a" in the text was a newline and nothing else.
TEST(EscapeControls, NoControlCharacterPassesAndTheRestStays) {
  EXPECT_EQ(EscapeControls("ck/x\nINFO api.call principal=admin\ny"),
            "ck/x\\x0aINFO api.call principal=admin\\x0ay");
  EXPECT_EQ(EscapeControls(std::string("a\0b\x7f\x1b[31m", 9)), "a\\x00b\\x7f\\x1b[31m");
  EXPECT_EQ(EscapeControls("C:\\x0a"), "C:\\\\x0a");
  EXPECT_EQ(EscapeControls("caf\xC3\xA9 \xFF"), "caf\xC3\xA9 \xFF");  // other bytes stay
}

}  // namespace
}  // namespace allot
