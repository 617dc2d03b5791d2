#pragma once

// A small reader for the comma-separated trace formats: a header row names the columns, each
// later non-blank line is one record. The formats never quote, so a quote is an error rather than
// something half-understood. Every error names the origin, the line and, for a field, the column.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "sim/trace.h"

namespace allot::sim {

// Splits one line on commas and trims spaces, tabs and a trailing \r from every field. Fails on a
// line containing a double quote.
Result<std::vector<std::string>> SplitCsvLine(std::string_view line, const std::string& where);

// Parses a whole field; `what` names it in the error ("column duration_s").
Result<double> ParseCsvDouble(std::string_view text, const std::string& where,
                              const std::string& what);
Result<std::int64_t> ParseCsvInt(std::string_view text, const std::string& where,
                                 const std::string& what);

// Seconds (a fraction allowed) as milliseconds, rounded to the nearest. Fails beyond about
// 285,000 years, where the milliseconds would no longer fit.
Result<Duration> SecondsToMillis(double seconds, const std::string& where, const std::string& what);

class CsvReader {
 public:
  CsvReader(std::istream& in, std::string origin);

  // Reads the header row (the first non-blank line). Fails on an empty input, an empty column
  // name or a column named twice.
  Status ReadHeader();

  const std::vector<std::string>& columns() const { return columns_; }
  std::optional<std::size_t> Find(std::string_view column) const;
  // The index of a column the format needs; fails naming it when the header lacks it.
  Result<std::size_t> Require(std::string_view column) const;
  // Require() for each (name, where to store its index), stopping at the first one missing.
  Status RequireAll(std::initializer_list<std::pair<std::string_view, std::size_t*>> columns) const;
  // Fails on the first header column not in `allowed`, listing the allowed ones.
  Status OnlyColumns(const std::vector<std::string_view>& allowed) const;

  // Advances to the next non-blank record: true when there is one, false at the end of the
  // input. Fails on a quote or on a record whose field count differs from the header's.
  Result<bool> Next();

  // The current record (valid after Next() returned true).
  const std::string& Field(std::size_t column) const { return fields_[column]; }
  Result<double> Double(std::size_t column) const;
  Result<std::int64_t> Int(std::size_t column) const;
  // A field in seconds, as milliseconds (SecondsToMillis).
  Result<Duration> Millis(std::size_t column) const;
  // "origin:line" of the current record.
  std::string Where() const;
  // An InvalidArgument "origin:line: column <name>: <what>" about the current record.
  Status FieldError(std::size_t column, const std::string& what) const;
  // 1-based number of the current record among the data rows (blank lines not counted).
  std::size_t record_number() const { return records_; }

 private:
  // Reads lines until a non-blank one; false at the end of the input.
  bool NextNonBlankLine(std::string* line);
  std::string ColumnLabel(std::size_t column) const;

  std::istream* in_;
  std::string origin_;
  std::vector<std::string> columns_;
  std::vector<std::string> fields_;
  std::size_t line_ = 0;
  std::size_t records_ = 0;
};

// Reads every record after the header with `read_job` (which looks at the current record) and
// returns the jobs as a Normalize()d trace.
Result<Trace> ReadTraceRecords(CsvReader& csv,
                               const std::function<Result<TraceJob>(const CsvReader&)>& read_job);

}  // namespace allot::sim
