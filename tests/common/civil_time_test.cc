#include "common/civil_time.h"

#include <gtest/gtest.h>

#include <string>

namespace allot {
namespace {

TEST(CivilTime, EpochIsDayZero) {
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(CivilFromDays(0), (CivilDay{1970, 1, 1}));
  EXPECT_EQ(TimestampFromCivil(CivilTime{}), 0);
  EXPECT_EQ(CivilFromTimestamp(0), CivilTime{});
}

TEST(CivilTime, KnownDates) {
  struct Case {
    CivilDay date;
    std::int64_t days;
  };
  const Case cases[] = {
      {{1969, 12, 31}, -1},    {{1970, 1, 2}, 1},
      {{1970, 3, 1}, 59},      {{1900, 1, 1}, -25567},
      {{1600, 3, 1}, -135080}, {{2000, 1, 1}, 10957},
      {{2000, 2, 29}, 11016},  {{2000, 3, 1}, 11017},
      {{2015, 8, 30}, 16677},                           // the AWS SigV4 test suite's date
      {{2017, 10, 3}, 17442},  {{2038, 1, 19}, 24855},  // the 32-bit time_t rollover
      {{2100, 3, 1}, 47541},   {{2200, 12, 31}, 84370},
      {{0, 3, 1}, -719468},    {{-1, 12, 31}, -719529},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.date.year) + "-" + std::to_string(c.date.month) + "-" +
                 std::to_string(c.date.day));
    EXPECT_EQ(DaysFromCivil(c.date.year, c.date.month, c.date.day), c.days);
    EXPECT_EQ(CivilFromDays(c.days), c.date);
  }
}

// Every day from 1900-01-01 to 2200-12-31, walked forward one day at a time: the day count
// increases by one and the calendar fields advance as the calendar says.
TEST(CivilTime, RoundTripsEveryDayFrom1900To2200) {
  std::int64_t days = DaysFromCivil(1900, 1, 1);
  for (std::int64_t year = 1900; year <= 2200; ++year) {
    for (std::int64_t month = 1; month <= 12; ++month) {
      for (std::int64_t day = 1; day <= DaysInMonth(year, month); ++day, ++days) {
        ASSERT_EQ(DaysFromCivil(year, month, day), days) << year << "-" << month << "-" << day;
        ASSERT_EQ(CivilFromDays(days), (CivilDay{year, month, day})) << days;
      }
    }
  }
  EXPECT_EQ(days, DaysFromCivil(2201, 1, 1));
}

TEST(CivilTime, RoundTripsFarFromTheEpoch) {
  for (std::int64_t days = -1'000'000'000; days <= 1'000'000'000; days += 999'983) {
    const CivilDay d = CivilFromDays(days);
    ASSERT_GE(d.month, 1);
    ASSERT_LE(d.month, 12);
    ASSERT_GE(d.day, 1);
    ASSERT_LE(d.day, DaysInMonth(d.year, d.month));
    ASSERT_EQ(DaysFromCivil(d.year, d.month, d.day), days);
  }
}

TEST(CivilTime, LeapYears) {
  EXPECT_TRUE(IsLeapYear(2000));   // divisible by 400
  EXPECT_FALSE(IsLeapYear(1900));  // by 100 but not 400
  EXPECT_FALSE(IsLeapYear(2100));
  EXPECT_TRUE(IsLeapYear(2024));
  EXPECT_FALSE(IsLeapYear(2023));
  EXPECT_TRUE(IsLeapYear(0));
  EXPECT_TRUE(IsLeapYear(-4));
  EXPECT_EQ(DaysInMonth(2000, 2), 29);
  EXPECT_EQ(DaysInMonth(1900, 2), 28);
  EXPECT_EQ(DaysInMonth(2024, 2), 29);
  EXPECT_EQ(DaysInMonth(2023, 2), 28);
  EXPECT_EQ(DaysInMonth(2023, 4), 30);
  EXPECT_EQ(DaysInMonth(2023, 12), 31);
  EXPECT_EQ(DaysFromCivil(2024, 3, 1) - DaysFromCivil(2024, 2, 28), 2);
  EXPECT_EQ(DaysFromCivil(2023, 3, 1) - DaysFromCivil(2023, 2, 28), 1);
  EXPECT_EQ(DaysFromCivil(2001, 1, 1) - DaysFromCivil(2000, 1, 1), 366);
  EXPECT_EQ(DaysFromCivil(1901, 1, 1) - DaysFromCivil(1900, 1, 1), 365);
}

TEST(CivilTime, Timestamps) {
  // 2015-08-30T12:36:00Z, the AWS SigV4 test suite's X-Amz-Date.
  const CivilTime t{2015, 8, 30, 12, 36, 0, 0};
  EXPECT_EQ(TimestampFromCivil(t), 1440938160000);
  EXPECT_EQ(CivilFromTimestamp(1440938160000), t);
  EXPECT_EQ(CivilFromTimestamp(1440938160999), (CivilTime{2015, 8, 30, 12, 36, 0, 999}));
  EXPECT_EQ(CivilFromTimestamp(kMillisPerDay - 1), (CivilTime{1970, 1, 1, 23, 59, 59, 999}));
  EXPECT_EQ(CivilFromTimestamp(kMillisPerDay), (CivilTime{1970, 1, 2, 0, 0, 0, 0}));
}

TEST(CivilTime, TimestampsBeforeTheEpochRoundDown) {
  EXPECT_EQ(CivilFromTimestamp(-1), (CivilTime{1969, 12, 31, 23, 59, 59, 999}));
  EXPECT_EQ(CivilFromTimestamp(-kMillisPerDay), (CivilTime{1969, 12, 31, 0, 0, 0, 0}));
  EXPECT_EQ(CivilFromTimestamp(-kMillisPerDay - 1), (CivilTime{1969, 12, 30, 23, 59, 59, 999}));
  EXPECT_EQ(TimestampFromCivil(CivilTime{1969, 12, 31, 23, 59, 59, 999}), -1);
}

TEST(CivilTime, TimestampsRoundTripAcrossDaysAndEras) {
  for (Timestamp t = -3'000'000'000'000'000; t <= 3'000'000'000'000'000; t += 7'777'777'777'777) {
    const CivilTime c = CivilFromTimestamp(t);
    ASSERT_TRUE(IsValidCivilTime(c)) << t;
    ASSERT_EQ(TimestampFromCivil(c), t);
  }
}

TEST(CivilTime, Validity) {
  EXPECT_TRUE(IsValidCivilTime({2024, 2, 29, 23, 59, 59, 999}));
  EXPECT_FALSE(IsValidCivilTime({2023, 2, 29, 0, 0, 0, 0}));
  EXPECT_FALSE(IsValidCivilTime({2023, 0, 1, 0, 0, 0, 0}));
  EXPECT_FALSE(IsValidCivilTime({2023, 13, 1, 0, 0, 0, 0}));
  EXPECT_FALSE(IsValidCivilTime({2023, 4, 31, 0, 0, 0, 0}));
  EXPECT_FALSE(IsValidCivilTime({2023, 4, 0, 0, 0, 0, 0}));
  EXPECT_FALSE(IsValidCivilTime({2023, 4, 1, 24, 0, 0, 0}));
  EXPECT_FALSE(IsValidCivilTime({2023, 4, 1, 0, 60, 0, 0}));
  EXPECT_FALSE(IsValidCivilTime({2023, 4, 1, 0, 0, 60, 0}));  // no leap seconds
  EXPECT_FALSE(IsValidCivilTime({2023, 4, 1, 0, 0, 0, 1000}));
  EXPECT_FALSE(IsValidCivilTime({2023, 4, 1, -1, 0, 0, 0}));
  EXPECT_FALSE(IsValidCivilTime({2023, 4, 1, 0, 0, 0, -1}));
}

}  // namespace
}  // namespace allot
