#include "sim/csv.h"

#include <charconv>
#include <cmath>
#include <set>
#include <system_error>
#include <utility>

#include "common/strings.h"

namespace allot::sim {

namespace {

// Blanks around a field or on an empty line: spaces, tabs and the \r of a CRLF line end.
constexpr std::string_view kBlanks = " \t\r";

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

}  // namespace

Result<std::vector<std::string>> SplitCsvLine(std::string_view line, const std::string& where) {
  if (line.find('"') != std::string_view::npos) {
    return InvalidArgument(where + ": quoted fields are not supported (found '\"')");
  }
  std::vector<std::string> fields;
  for (std::string_view field : Split(line, ',')) fields.emplace_back(Trim(field, kBlanks));
  return fields;
}

Result<double> ParseCsvDouble(std::string_view text, const std::string& where,
                              const std::string& what) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  // from_chars accepts "inf" and "nan"; no trace field means either.
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) {
    return InvalidArgument(where + ": " + what + ": " + Quoted(text) + " is not a number");
  }
  return value;
}

Result<std::int64_t> ParseCsvInt(std::string_view text, const std::string& where,
                                 const std::string& what) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    return InvalidArgument(where + ": " + what + ": " + Quoted(text) + " is not a whole number");
  }
  return value;
}

Result<Duration> SecondsToMillis(double seconds, const std::string& where,
                                 const std::string& what) {
  constexpr double kMaxSeconds = 9e12;  // 9e15 ms: far inside int64, and exact in a double
  if (!std::isfinite(seconds) || std::fabs(seconds) > kMaxSeconds) {
    return InvalidArgument(where + ": " + what + ": " + std::to_string(seconds) +
                           " seconds is out of range");
  }
  return static_cast<Duration>(std::llround(seconds * 1000.0));
}

CsvReader::CsvReader(std::istream& in, std::string origin) : in_(&in), origin_(std::move(origin)) {}

bool CsvReader::NextNonBlankLine(std::string* line) {
  while (std::getline(*in_, *line)) {
    ++line_;
    if (!Trim(*line, kBlanks).empty()) return true;
  }
  return false;
}

Status CsvReader::ReadHeader() {
  std::string line;
  if (!NextNonBlankLine(&line)) return InvalidArgument(origin_ + ": empty file, expected a header");
  Result<std::vector<std::string>> names = SplitCsvLine(line, Where());
  if (!names.ok()) return names.status();
  std::set<std::string> seen;
  for (const std::string& name : *names) {
    if (name.empty()) return InvalidArgument(Where() + ": the header has an empty column name");
    if (!seen.insert(name).second) {
      return InvalidArgument(Where() + ": column " + name + " appears twice in the header");
    }
  }
  columns_ = std::move(names).value();
  return Status::Ok();
}

std::optional<std::size_t> CsvReader::Find(std::string_view column) const {
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i] == column) return i;
  }
  return std::nullopt;
}

Result<std::size_t> CsvReader::Require(std::string_view column) const {
  if (std::optional<std::size_t> i = Find(column)) return *i;
  return InvalidArgument(origin_ + ": missing required column " + std::string(column));
}

Status CsvReader::RequireAll(
    std::initializer_list<std::pair<std::string_view, std::size_t*>> columns) const {
  for (const auto& [name, index] : columns) {
    Result<std::size_t> found = Require(name);
    if (!found.ok()) return found.status();
    *index = *found;
  }
  return Status::Ok();
}

Status CsvReader::OnlyColumns(const std::vector<std::string_view>& allowed) const {
  for (const std::string& name : columns_) {
    bool known = false;
    for (std::string_view a : allowed) known = known || name == a;
    if (!known) {
      return InvalidArgument(origin_ + ": unknown column " + name +
                             " (allowed: " + Join(allowed, ", ") + ")");
    }
  }
  return Status::Ok();
}

Result<bool> CsvReader::Next() {
  std::string line;
  if (!NextNonBlankLine(&line)) return false;
  Result<std::vector<std::string>> fields = SplitCsvLine(line, Where());
  if (!fields.ok()) return fields.status();
  if (fields->size() != columns_.size()) {
    return InvalidArgument(Where() + ": expected " + std::to_string(columns_.size()) +
                           " fields as in the header, got " + std::to_string(fields->size()));
  }
  fields_ = std::move(fields).value();
  ++records_;
  return true;
}

std::string CsvReader::Where() const { return origin_ + ":" + std::to_string(line_); }

std::string CsvReader::ColumnLabel(std::size_t column) const {
  return "column " + columns_[column];
}

Result<double> CsvReader::Double(std::size_t column) const {
  return ParseCsvDouble(fields_[column], Where(), ColumnLabel(column));
}

Result<std::int64_t> CsvReader::Int(std::size_t column) const {
  return ParseCsvInt(fields_[column], Where(), ColumnLabel(column));
}

Result<Duration> CsvReader::Millis(std::size_t column) const {
  Result<double> seconds = Double(column);
  if (!seconds.ok()) return seconds.status();
  return SecondsToMillis(*seconds, Where(), ColumnLabel(column));
}

Status CsvReader::FieldError(std::size_t column, const std::string& what) const {
  return InvalidArgument(Where() + ": " + ColumnLabel(column) + ": " + what);
}

Result<Trace> ReadTraceRecords(CsvReader& csv,
                               const std::function<Result<TraceJob>(const CsvReader&)>& read_job) {
  Trace trace;
  while (true) {
    Result<bool> more = csv.Next();
    if (!more.ok()) return more.status();
    if (!*more) break;
    Result<TraceJob> job = read_job(csv);
    if (!job.ok()) return job.status();
    trace.jobs.push_back(std::move(job).value());
  }
  Normalize(&trace);
  return trace;
}

}  // namespace allot::sim
