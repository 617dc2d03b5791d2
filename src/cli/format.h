#pragma once

// Plain-text output helpers for the command line: aligned tables, times, shell quoting.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace allot::cli {

// `text` with its control characters shown as \xNN (C0 and DEL) or \u00NN (C1, as UTF-8 writes
// them), for whatever a caller or a job chose and the server recorded (a name, a statusReason,
// a newline or an escape sequence in them): printed, it is one line that never drives the
// terminal (clears the screen, sets the title, colours a fake status line).
std::string EscapeControls(std::string_view text);

// Columns padded to their widest cell; the last column is not padded.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  // Each cell is shown with EscapeControls: a row is always one line.
  void Add(std::vector<std::string> row);
  bool empty() const { return rows_.empty(); }
  void Print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Epoch milliseconds as local time "2025-01-31 14:05:09"; "-" for a missing (null) value.
std::string FormatTime(const nlohmann::json& epoch_millis);
// "1h02m", "3m07s", "12.3s".
std::string FormatDuration(std::int64_t millis);
// A number that is a whole number without decimals ("3"), else as JSON writes it.
std::string FormatNumber(const nlohmann::json& n);
// The argument quoted for a POSIX shell when it needs it.
std::string ShellQuote(const std::string& arg);
std::string ShellJoin(const std::vector<std::string>& args);
// "ml.g5.xlarge x 2, ml.g5.2xlarge x 1" from [{capacityUnit, quantity|maxCapacity}].
std::string FormatCapacity(const nlohmann::json& list);

}  // namespace allot::cli
