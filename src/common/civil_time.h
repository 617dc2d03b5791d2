#pragma once

// Civil dates and times of the proleptic Gregorian calendar in UTC, as pure arithmetic: no clock,
// no time zone, no <chrono> calendar and no <ctime>. The day arithmetic is Howard Hinnant's
// days_from_civil / civil_from_days (https://howardhinnant.github.io/date_algorithms.html), exact
// for every year whose day count fits in 64 bits with room to spare (|year| < 10^15).

#include <cstdint>
#include <string>

#include "common/time.h"

namespace allot {

constexpr std::int64_t kSecondsPerDay = 86'400;
constexpr Duration kMillisPerDay = kSecondsPerDay * kMillisPerSecond;

// A calendar day: month 1-12, day 1-31.
struct CivilDay {
  std::int64_t year = 1970;
  std::int64_t month = 1;
  std::int64_t day = 1;

  bool operator==(const CivilDay&) const = default;
};

// A UTC date and time of day, to the millisecond: hour 0-23, minute and second 0-59 (no leap
// seconds), millisecond 0-999.
struct CivilTime {
  std::int64_t year = 1970;
  std::int64_t month = 1;
  std::int64_t day = 1;
  std::int64_t hour = 0;
  std::int64_t minute = 0;
  std::int64_t second = 0;
  std::int64_t millisecond = 0;

  bool operator==(const CivilTime&) const = default;
};

bool IsLeapYear(std::int64_t year);

// 28 to 31. REQUIRES: 1 <= month <= 12.
std::int64_t DaysInMonth(std::int64_t year, std::int64_t month);

// Days since 1970-01-01 (day 0; earlier days are negative). REQUIRES: 1 <= month <= 12; `day`
// may run past the month's end (1970-01-32 is day 31), but callers normally check first.
std::int64_t DaysFromCivil(std::int64_t year, std::int64_t month, std::int64_t day);

// The inverse of DaysFromCivil.
CivilDay CivilFromDays(std::int64_t days);

// Whether every field of `t` is in its range, the day within its month.
bool IsValidCivilTime(const CivilTime& t);

// Milliseconds since 1970-01-01T00:00:00Z. REQUIRES: IsValidCivilTime(t).
Timestamp TimestampFromCivil(const CivilTime& t);

// The inverse of TimestampFromCivil; times before 1970 round down (-1 ms is
// 1969-12-31T23:59:59.999).
CivilTime CivilFromTimestamp(Timestamp t);

// "2025-01-31T14:05:09Z": the UTC time, to the second (the milliseconds dropped).
std::string FormatRfc3339Utc(Timestamp t);

}  // namespace allot
