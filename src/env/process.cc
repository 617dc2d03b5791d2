#include "env/process.h"

#include <charconv>
#include <sstream>
#include <string>
#include <system_error>

#include "env/files.h"

namespace allot::env {
namespace {

std::optional<std::uint64_t> StartTimeOf(pid_t pid, bool zombies) {
  if (pid <= 0) return std::nullopt;
  const Result<std::string> stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat.ok()) return std::nullopt;
  // "pid (comm) S ppid ...": comm may hold spaces and parentheses; fields follow the last ')'.
  const std::size_t paren = stat->rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(stat->substr(paren + 1));
  std::string state;
  fields >> state;  // field 3
  if (!zombies && (state == "Z" || state == "X" || state == "x")) return std::nullopt;
  std::string field;
  for (int i = 4; i <= 22 && fields >> field; ++i) {
    if (i < 22) continue;
    std::uint64_t value = 0;
    const auto [ptr, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (error != std::errc() || ptr != field.data() + field.size()) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> RunningStartTime(pid_t pid) { return StartTimeOf(pid, false); }
std::optional<std::uint64_t> StartTime(pid_t pid) { return StartTimeOf(pid, true); }

bool SameProcessRunning(pid_t pid, std::uint64_t start_time) {
  const auto start = RunningStartTime(pid);
  return start && *start == start_time;
}

}  // namespace allot::env
