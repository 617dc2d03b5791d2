#include "server/log.h"

#include <spdlog/sinks/base_sink.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <iterator>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>

#include "api/wire_json.h"

namespace allot::server::log {

namespace {

std::atomic<Format> g_format{Format::kText};
thread_local int t_batch_depth = 0;

// Standard error through a buffer of its own: a line is appended under the sink's mutex and
// written by flush_() with one write(2) (several lines at once after a Batch).
class StderrSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    buffer_.append(formatted.data(), formatted.size());
    if (buffer_.size() >= kMaxBuffered) flush_();
  }
  void flush_() override {
    std::size_t done = 0;
    while (done < buffer_.size()) {
      const ssize_t n = ::write(STDERR_FILENO, buffer_.data() + done, buffer_.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // nowhere to report it: the lines are dropped, as fwrite would
      done += static_cast<std::size_t>(n);
    }
    buffer_.clear();
  }

 private:
  static constexpr std::size_t kMaxBuffered = std::size_t{64} * 1024;
  std::string buffer_;
};

// A text value is quoted (JSON string rules, invalid UTF-8 replaced) unless it is printable
// ASCII without spaces, quotes or '='.
void AppendTextValue(std::string& line, std::string_view v) {
  bool plain = !v.empty();
  for (char c : v) {
    const auto u = static_cast<unsigned char>(c);
    plain = plain && u > 0x20 && u < 0x7f && c != '"' && c != '=';
  }
  if (plain) {
    line += v;
  } else {
    api::AppendJsonString(line, v);
  }
}

void AppendNumber(std::string& line, std::int64_t i) {
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, i);
  line.append(buf, end);
}

std::string Render(std::string_view event, std::initializer_list<Field> fields, Format format) {
  std::string line;
  line.reserve(256);
  if (format == Format::kJson) {
    // The pattern wraps it: {"ts":...,"level":...,<line>}.
    line += "\"event\":";
    api::AppendJsonString(line, event);
    for (const Field& f : fields) {
      line += ',';
      api::AppendJsonString(line, f.key);
      line += ':';
      if (const auto* s = std::get_if<std::string_view>(&f.value)) {
        api::AppendJsonString(line, *s);
      } else if (const auto* i = std::get_if<std::int64_t>(&f.value)) {
        AppendNumber(line, *i);
      } else {
        line += api::DumpWire(nlohmann::json(std::get<double>(f.value)));
      }
    }
    return line;
  }
  line += event;
  for (const Field& f : fields) {
    line += ' ';
    line += f.key;
    line += '=';
    if (const auto* s = std::get_if<std::string_view>(&f.value)) {
      AppendTextValue(line, *s);
    } else if (const auto* i = std::get_if<std::int64_t>(&f.value)) {
      AppendNumber(line, *i);
    } else {
      fmt::format_to(std::back_inserter(line), "{:.3f}", std::get<double>(f.value));
    }
  }
  return line;
}

}  // namespace

Status Configure(std::string_view level, std::string_view format) {
  const spdlog::level::level_enum parsed = spdlog::level::from_str(std::string(level));
  if (parsed == spdlog::level::off && level != "off") {
    return InvalidArgument("--log-level must be one of trace, debug, info, warn, error, off; got " +
                           std::string(level));
  }
  if (format != "text" && format != "json") {
    return InvalidArgument("--log-format must be text or json, got " + std::string(format));
  }
  auto logger = std::make_shared<spdlog::logger>("allot", std::make_shared<StderrSink>());
  logger->set_level(parsed);
  if (format == "json") {
    g_format = Format::kJson;
    logger->set_pattern(R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l",%v})",
                        spdlog::pattern_time_type::utc);
  } else {
    g_format = Format::kText;
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc);
  }
  logger->flush_on(spdlog::level::off);  // Event flushes, unless a Batch is open
  spdlog::set_default_logger(logger);
  return Status::Ok();
}

void Event(spdlog::level::level_enum level, std::string_view event,
           std::initializer_list<Field> fields) {
  if (!spdlog::should_log(level)) return;
  spdlog::logger* logger = spdlog::default_logger_raw();
  logger->log(level, "{}", Render(event, fields, g_format.load()));
  if (t_batch_depth == 0) logger->flush();
}

Batch::Batch() { ++t_batch_depth; }

Batch::~Batch() {
  if (--t_batch_depth == 0 && flush_) spdlog::default_logger_raw()->flush();
}

}  // namespace allot::server::log
