#include "env/process.h"

#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>
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

namespace {

constexpr const char* kTunables = "GLIBC_TUNABLES";
// Set only in the program run again: GLIBC_TUNABLES as it was ("-" when it was unset).
constexpr const char* kTunablesBefore = "ALLOT_GLIBC_TUNABLES_BEFORE";

}  // namespace

void RunAgainWithHugePageMalloc(char** argv) {
  if (const char* before = std::getenv(kTunablesBefore)) {
    const std::string was = before;
    if (was == "-") {
      ::unsetenv(kTunables);
    } else {
      ::setenv(kTunables, was.c_str(), 1);
    }
    ::unsetenv(kTunablesBefore);
    return;
  }
  const char* current = std::getenv(kTunables);
  const std::string was = current != nullptr ? current : "";
  if (was.find("glibc.malloc.hugetlb") != std::string::npos) return;
  ::setenv(kTunablesBefore, current != nullptr ? was.c_str() : "-", 1);
  const std::string tunables = (was.empty() ? "" : was + ":") + "glibc.malloc.hugetlb=1";
  ::setenv(kTunables, tunables.c_str(), 1);
  ::execv("/proc/self/exe", argv);
  // The exec failed: run on as started.
  if (current != nullptr) {
    ::setenv(kTunables, was.c_str(), 1);
  } else {
    ::unsetenv(kTunables);
  }
  ::unsetenv(kTunablesBefore);
}

Status PadMallocHeap() {
  const char* tunables = std::getenv(kTunables);
  if (tunables != nullptr &&
      std::string_view(tunables).find("glibc.malloc.top_pad") != std::string_view::npos) {
    return Status::Ok();
  }
  constexpr int kPad = 64 << 20;
  if (::mallopt(M_TOP_PAD, kPad) != 1) {
    return Internal("mallopt(M_TOP_PAD, 64 MiB) failed: malloc keeps its default pad");
  }
  return Status::Ok();
}

std::vector<pid_t> AllProcesses() {
  std::vector<pid_t> out;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    pid_t pid = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (ec == std::errc() && end == name.data() + name.size() && pid > 0) out.push_back(pid);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<pid_t> ProcessesOfUser(uid_t uid) {
  std::vector<pid_t> out;
  for (const pid_t pid : AllProcesses()) {
    struct stat st {};
    const std::string path = "/proc/" + std::to_string(pid);
    if (::stat(path.c_str(), &st) == 0 && st.st_uid == uid) out.push_back(pid);
  }
  return out;
}

}  // namespace allot::env
