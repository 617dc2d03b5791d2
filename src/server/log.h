#pragma once

// The server's structured log (spdlog, on stderr): one line per API call, per decision applied
// and per executor event. Each line is an event name and key=value fields; with
// --log-format json each line is one JSON object {"ts","level","event",...fields}, for
// collectors. Thread-safety: every function may be called from any thread.

#include <spdlog/spdlog.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <variant>

#include "common/status.h"

namespace allot::server::log {

enum class Format : std::uint8_t { kText, kJson };

// "trace", "debug", "info", "warn", "error", "off"; "text" or "json". Refuses other values.
Status Configure(std::string_view level, std::string_view format);

struct Field {
  std::string_view key;
  std::variant<std::string_view, std::int64_t, double> value;
};

// One line: `event` plus its fields, at `level`.
void Event(spdlog::level::level_enum level, std::string_view event,
           std::initializer_list<Field> fields);

inline void Info(std::string_view event, std::initializer_list<Field> fields) {
  Event(spdlog::level::info, event, fields);
}
inline void Warn(std::string_view event, std::initializer_list<Field> fields) {
  Event(spdlog::level::warn, event, fields);
}
inline void Error(std::string_view event, std::initializer_list<Field> fields) {
  Event(spdlog::level::err, event, fields);
}

// Each line is written (one write(2) to standard error) as it is logged, except while a Batch
// lives on the logging thread: then the lines wait in the log's buffer until the Batch ends
// (or any other line is written), so a thread that logs several lines in a row (the answers of
// one group commit) writes them with one system call. A Batch never outlives the work it
// covers: lines are on standard error before the answers they describe are sent.
class Batch {
 public:
  Batch();
  ~Batch();
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  // Leaves the lines in the log's buffer when this Batch ends, for the next write: a call whose
  // answer waits for its commit has its lines written with those of its group commit by its
  // loop, before that answer is sent (one write(2) per group commit instead of one more per
  // call). Only for work that another write is sure to follow.
  void LeaveToNextWrite() { flush_ = false; }

 private:
  bool flush_ = true;
};

}  // namespace allot::server::log
