#include "cli/audit.h"

#include <cstdio>
#include <limits>
#include <utility>
#include <vector>

#include "cli/format.h"
#include "cli/jobs.h"
#include "common/civil_time.h"

namespace allot::cli {

namespace {

// A left-to-right reader of a short text.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}

  bool AtEnd() const { return pos_ == text_.size(); }

  // Exactly `n` decimal digits as a number; nullopt (and nothing read) otherwise.
  std::optional<std::int64_t> Digits(std::size_t n) {
    if (text_.size() - pos_ < n) return std::nullopt;
    std::int64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const char c = text_[pos_ + i];
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + (c - '0');
    }
    pos_ += n;
    return v;
  }

  // The next character if it is one of `chars` (read), else '\0' (nothing read).
  char Take(std::string_view chars) {
    if (AtEnd() || chars.find(text_[pos_]) == std::string_view::npos) return '\0';
    return text_[pos_++];
  }

  // Up to `max` digits (at least one) as a number, with how many were read.
  std::optional<std::pair<std::int64_t, std::size_t>> Number(std::size_t max) {
    std::int64_t v = 0;
    std::size_t n = 0;
    while (!AtEnd() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      if (n == max) return std::nullopt;
      v = v * 10 + (text_[pos_++] - '0');
      ++n;
    }
    if (n == 0) return std::nullopt;
    return std::make_pair(v, n);
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

// "HH:MM:SS[.fraction]" into `t`; false when malformed.
bool ReadTimeOfDay(Cursor& c, CivilTime& t) {
  const auto hour = c.Digits(2);
  if (!hour || c.Take(":") == '\0') return false;
  const auto minute = c.Digits(2);
  if (!minute || c.Take(":") == '\0') return false;
  const auto second = c.Digits(2);
  if (!second) return false;
  t.hour = *hour;
  t.minute = *minute;
  t.second = *second;
  if (c.Take(".") == '\0') return true;
  const auto fraction = c.Number(18);
  if (!fraction) return false;
  auto [value, digits] = *fraction;
  for (; digits > 3; --digits) value /= 10;
  for (; digits < 3; ++digits) value *= 10;
  t.millisecond = value;
  return true;
}

// "Z" or "+HH:MM" / "-HH:MM" as minutes east of UTC; nullopt when malformed.
std::optional<std::int64_t> ReadOffsetMinutes(Cursor& c) {
  if (c.Take("Zz") != '\0') return 0;
  const char sign = c.Take("+-");
  if (sign == '\0') return std::nullopt;
  const auto hours = c.Digits(2);
  if (!hours || c.Take(":") == '\0') return std::nullopt;
  const auto minutes = c.Digits(2);
  if (!minutes || *hours > 23 || *minutes > 59) return std::nullopt;
  const std::int64_t offset = *hours * 60 + *minutes;
  return sign == '-' ? -offset : offset;
}

Duration UnitMillis(char unit) {
  switch (unit) {
    case 's':
      return kMillisPerSecond;
    case 'm':
      return 60 * kMillisPerSecond;
    case 'h':
      return 3600 * kMillisPerSecond;
    case 'd':
      return kMillisPerDay;
    case 'w':
      return 7 * kMillisPerDay;
    default:
      return 0;
  }
}

// An ARN's resource part ("service-job/ID" of arn:aws:batch:r:a:service-job/ID); anything that
// is not an ARN as it is.
std::string ShortResource(const std::string& resource) {
  if (resource.rfind("arn:", 0) != 0) return resource;
  std::size_t pos = 0;
  for (int i = 0; i < 5 && pos != std::string::npos; ++i) pos = resource.find(':', pos + 1);
  return pos == std::string::npos ? resource : resource.substr(pos + 1);
}

std::string ChangeValue(const Json& change, const char* side) {
  if (!change.is_object() || !change.contains(side)) return "-";
  return FormatNumber(change[side]);
}

std::string Cell(const Json& record, const char* key) {
  const Json v = record.value(key, Json());
  if (v.is_string() && !v.get<std::string>().empty()) return v.get<std::string>();
  return v.is_null() || v.is_string() ? "-" : v.dump();
}

// The user of a record: userName, else the last part of the principal's ARN.
std::string UserCell(const Json& record) {
  std::string name = record.value("userName", "");
  if (!name.empty()) return name;
  const std::string principal = record.value("principal", "");
  return principal.empty() ? "-" : LastPathPart(principal);
}

}  // namespace

std::optional<Duration> ParseRelativeDuration(std::string_view text) {
  Cursor c(text);
  if (c.AtEnd()) return std::nullopt;
  Duration total = 0;
  while (!c.AtEnd()) {
    const auto number = c.Number(9);
    if (!number) return std::nullopt;
    const Duration unit = UnitMillis(c.Take("smhdw"));
    if (unit == 0) return std::nullopt;
    const Duration part = number->first * unit;  // < 10^9 * 6.1 * 10^8: no overflow
    if (total > std::numeric_limits<Duration>::max() - part) return std::nullopt;
    total += part;
  }
  return total;
}

std::optional<Timestamp> ParseRfc3339(std::string_view text) {
  Cursor c(text);
  CivilTime t;
  const auto year = c.Digits(4);
  if (!year || c.Take("-") == '\0') return std::nullopt;
  const auto month = c.Digits(2);
  if (!month || c.Take("-") == '\0') return std::nullopt;
  const auto day = c.Digits(2);
  if (!day) return std::nullopt;
  t.year = *year;
  t.month = *month;
  t.day = *day;
  std::int64_t offset_minutes = 0;
  if (!c.AtEnd()) {
    if (c.Take("Tt ") == '\0' || !ReadTimeOfDay(c, t)) return std::nullopt;
    const auto offset = ReadOffsetMinutes(c);
    if (!offset) return std::nullopt;
    offset_minutes = *offset;
  }
  if (!c.AtEnd() || !IsValidCivilTime(t)) return std::nullopt;
  return TimestampFromCivil(t) - offset_minutes * 60 * kMillisPerSecond;
}

Timestamp ParseTimeFlag(std::string_view text, Timestamp now, std::string_view flag) {
  if (text == "now") return now;
  if (const auto ago = ParseRelativeDuration(text)) return now - *ago;
  if (const auto t = ParseRfc3339(text)) return *t;
  throw CliError(std::string(flag) + " \"" + std::string(text) +
                 "\": expected a time before now such as 30m, 1h, 7d or 1h30m, an RFC 3339 time "
                 "such as 2025-01-31T14:05:09Z, or now");
}

std::string AuditQuery(const AuditFilter& filter, int max_results, const std::string& next_token) {
  std::vector<std::pair<const char*, std::string>> params = {
      {"principal", filter.user}, {"resource", filter.resource}, {"action", filter.action}};
  if (filter.since) params.emplace_back("since", std::to_string(*filter.since));
  if (filter.until) params.emplace_back("until", std::to_string(*filter.until));
  params.emplace_back("maxResults", std::to_string(max_results));
  params.emplace_back("nextToken", next_token);
  std::string query;
  for (const auto& [key, value] : params) {
    if (value.empty()) continue;
    query += (query.empty() ? "" : "&") + std::string(key) + "=" + PercentEncode(value);
  }
  return query;
}

std::string FormatChanges(const Json& changes) {
  if (!changes.is_object()) return "";
  std::string out;
  for (const auto& [field, change] : changes.items()) {
    out += (out.empty() ? "" : ", ") + field + " " + ChangeValue(change, "old") + "\u2192" +
           ChangeValue(change, "new");
  }
  return out;
}

void PrintAuditRecords(const Json& records, std::ostream& out) {
  Table table({"TIME", "USER", "SOURCE", "ACTION", "RESOURCE", "OUTCOME", "CHANGES"});
  for (const Json& r : records) {
    const Json time = r.value("time", Json());
    const std::string resource = ShortResource(r.value("resource", ""));
    table.Add({time.is_number() ? FormatRfc3339Utc(time.get<Timestamp>()) : "-", UserCell(r),
               Cell(r, "sourceAddress"), Cell(r, "action"), resource.empty() ? "-" : resource,
               Cell(r, "outcome"), FormatChanges(r.value("changes", Json()))});
  }
  if (table.empty()) {
    out << "no audit records\n";
    return;
  }
  table.Print(out);
}

}  // namespace allot::cli
