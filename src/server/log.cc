#include "server/log.h"

#include <spdlog/sinks/stdout_sinks.h>

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>

#include "api/wire_json.h"

namespace allot::server::log {

namespace {

std::atomic<Format> g_format{Format::kText};

// A text value is quoted (JSON string rules, invalid UTF-8 replaced) unless it is printable
// ASCII without spaces, quotes or '='.
std::string TextValue(std::string_view v) {
  bool plain = !v.empty();
  for (char c : v) {
    const auto u = static_cast<unsigned char>(c);
    plain = plain && u > 0x20 && u < 0x7f && c != '"' && c != '=';
  }
  if (plain) return std::string(v);
  return api::DumpWire(nlohmann::json(std::string(v)));
}

nlohmann::json JsonValue(const Field& f) {
  if (const auto* s = std::get_if<std::string_view>(&f.value)) return std::string(*s);
  if (const auto* i = std::get_if<std::int64_t>(&f.value)) return *i;
  return std::get<double>(f.value);
}

std::string Render(std::string_view event, std::initializer_list<Field> fields, Format format) {
  std::string line;
  if (format == Format::kJson) {
    // The pattern wraps it: {"ts":...,"level":...,<line>}.
    line = "\"event\":" + api::DumpWire(nlohmann::json(std::string(event)));
    for (const Field& f : fields) {
      line += "," + api::DumpWire(nlohmann::json(std::string(f.key))) + ":" +
              api::DumpWire(JsonValue(f));
    }
    return line;
  }
  line = std::string(event);
  for (const Field& f : fields) {
    line += " " + std::string(f.key) + "=";
    if (const auto* s = std::get_if<std::string_view>(&f.value)) {
      line += TextValue(*s);
    } else if (const auto* i = std::get_if<std::int64_t>(&f.value)) {
      line += std::to_string(*i);
    } else {
      line += fmt::format("{:.3f}", std::get<double>(f.value));
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
  auto logger = spdlog::stderr_logger_mt("allot");
  logger->set_level(parsed);
  if (format == "json") {
    g_format = Format::kJson;
    logger->set_pattern(R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l",%v})",
                        spdlog::pattern_time_type::utc);
  } else {
    g_format = Format::kText;
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc);
  }
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
  return Status::Ok();
}

void Event(spdlog::level::level_enum level, std::string_view event,
           std::initializer_list<Field> fields) {
  if (!spdlog::should_log(level)) return;
  spdlog::log(level, "{}", Render(event, fields, g_format.load()));
}

}  // namespace allot::server::log
