#include "common/civil_time.h"

#include <array>
#include <cstddef>
#include <cstdio>

#include "common/check.h"

namespace allot {
namespace {

// a / b and a % b rounded towards negative infinity, for b > 0.
std::int64_t FloorDiv(std::int64_t a, std::int64_t b) { return a / b - (a % b < 0 ? 1 : 0); }
std::int64_t FloorMod(std::int64_t a, std::int64_t b) { return a - FloorDiv(a, b) * b; }

}  // namespace

bool IsLeapYear(std::int64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

std::int64_t DaysInMonth(std::int64_t year, std::int64_t month) {
  static constexpr std::array<std::int64_t, 12> kDays = {31, 28, 31, 30, 31, 30,
                                                         31, 31, 30, 31, 30, 31};
  ALLOT_CHECK(month >= 1 && month <= 12);
  if (month == 2 && IsLeapYear(year)) return 29;
  return kDays[static_cast<std::size_t>(month - 1)];
}

// Years are counted from March, so that the leap day ends the year; an era is 400 years
// (146097 days), and day 719468 of era 0 (0000-03-01) is 1970-01-01.
std::int64_t DaysFromCivil(std::int64_t year, std::int64_t month, std::int64_t day) {
  year -= month <= 2 ? 1 : 0;
  const std::int64_t era = FloorDiv(year, 400);
  const std::int64_t year_of_era = year - era * 400;  // [0, 399]
  const std::int64_t day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  const std::int64_t day_of_era =
      year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;  // [0, 146096]
  return era * 146097 + day_of_era - 719468;
}

CivilDay CivilFromDays(std::int64_t days) {
  days += 719468;
  const std::int64_t era = FloorDiv(days, 146097);
  const std::int64_t day_of_era = days - era * 146097;  // [0, 146096]
  const std::int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) /
      365;  // [0, 399]
  const std::int64_t day_of_year =
      day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);  // [0, 365]
  const std::int64_t mp = (5 * day_of_year + 2) / 153;                         // [0, 11]
  const std::int64_t day = day_of_year - (153 * mp + 2) / 5 + 1;               // [1, 31]
  const std::int64_t month = mp < 10 ? mp + 3 : mp - 9;                        // [1, 12]
  return {year_of_era + era * 400 + (month <= 2 ? 1 : 0), month, day};
}

bool IsValidCivilTime(const CivilTime& t) {
  return t.month >= 1 && t.month <= 12 && t.day >= 1 && t.day <= DaysInMonth(t.year, t.month) &&
         t.hour >= 0 && t.hour <= 23 && t.minute >= 0 && t.minute <= 59 && t.second >= 0 &&
         t.second <= 59 && t.millisecond >= 0 && t.millisecond <= 999;
}

Timestamp TimestampFromCivil(const CivilTime& t) {
  const std::int64_t seconds = DaysFromCivil(t.year, t.month, t.day) * kSecondsPerDay +
                               t.hour * 3600 + t.minute * 60 + t.second;
  return seconds * kMillisPerSecond + t.millisecond;
}

CivilTime CivilFromTimestamp(Timestamp t) {
  const CivilDay d = CivilFromDays(FloorDiv(t, kMillisPerDay));
  const std::int64_t ms = FloorMod(t, kMillisPerDay);
  const std::int64_t seconds = ms / kMillisPerSecond;
  return {d.year,
          d.month,
          d.day,
          seconds / 3600,
          seconds / 60 % 60,
          seconds % 60,
          ms % kMillisPerSecond};
}

std::string FormatRfc3339Utc(Timestamp t) {
  const CivilTime c = CivilFromTimestamp(t);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ",
                static_cast<long long>(c.year), static_cast<long long>(c.month),
                static_cast<long long>(c.day), static_cast<long long>(c.hour),
                static_cast<long long>(c.minute), static_cast<long long>(c.second));
  return buf;
}

}  // namespace allot
