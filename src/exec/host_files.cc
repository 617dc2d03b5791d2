#include "exec/host_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>

namespace allot::exec {
namespace {

std::string Quote(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
      out += buffer;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

class FlatParser {
 public:
  explicit FlatParser(const std::string& text) : text_(text) {}

  std::optional<std::map<std::string, std::string>> Parse() {
    std::map<std::string, std::string> fields;
    if (!Eat('{')) return std::nullopt;
    if (Eat('}')) return End(fields);
    do {
      std::string key;
      std::string value;
      if (!String(key) || !Eat(':') || !Value(value)) return std::nullopt;
      fields[key] = value;
    } while (Eat(','));
    if (!Eat('}')) return std::nullopt;
    return End(fields);
  }

 private:
  std::optional<std::map<std::string, std::string>> End(std::map<std::string, std::string>& f) {
    Space();
    if (at_ != text_.size()) return std::nullopt;
    return std::move(f);
  }
  void Space() {
    while (at_ < text_.size() && std::strchr(" \t\r\n", text_[at_]) != nullptr) ++at_;
  }
  bool Eat(char c) {
    Space();
    if (at_ >= text_.size() || text_[at_] != c) return false;
    ++at_;
    return true;
  }
  bool Value(std::string& out) {
    Space();
    if (at_ < text_.size() && text_[at_] == '"') return String(out);
    const std::size_t start = at_;
    if (at_ < text_.size() && text_[at_] == '-') ++at_;
    while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') ++at_;
    out = text_.substr(start, at_ - start);
    return !out.empty() && out != "-";
  }
  bool String(std::string& out) {
    if (!Eat('"')) return false;
    out.clear();
    while (at_ < text_.size() && text_[at_] != '"') {
      char c = text_[at_++];
      if (c == '\\') {
        if (at_ >= text_.size()) return false;
        c = text_[at_++];
        if (c == 'u') {
          if (at_ + 4 > text_.size()) return false;
          c = static_cast<char>(std::stoi(text_.substr(at_, 4), nullptr, 16));
          at_ += 4;
        } else if (c == 'n') {
          c = '\n';
        } else if (c == 't') {
          c = '\t';
        }
      }
      out += c;
    }
    return Eat('"');
  }

  const std::string& text_;
  std::size_t at_ = 0;
};

template <typename T>
std::optional<T> Number(const std::map<std::string, std::string>& fields, const std::string& key) {
  const auto it = fields.find(key);
  if (it == fields.end()) return std::nullopt;
  T value{};
  const char* end = it->second.data() + it->second.size();
  const auto [ptr, error] = std::from_chars(it->second.data(), end, value);
  if (error != std::errc() || ptr != end) return std::nullopt;
  return value;
}

Result<std::map<std::string, std::string>> ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read '" + path + "': " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  auto fields = ParseFlatJson(text.str());
  if (!fields) return Internal("'" + path + "' is not a flat JSON object");
  return std::move(*fields);
}

Status Malformed(const std::string& path) { return Internal("'" + path + "' lacks a field"); }

}  // namespace

std::string StopReasonWord(model::StopKind kind) {
  switch (kind) {
    case model::StopKind::kPreemption:
      return "preemption";
    case model::StopKind::kTimeout:
      return "timeout";
    case model::StopKind::kTermination:
      break;
  }
  return "termination";
}

std::string FlatJson(const std::map<std::string, std::string>& strings,
                     const std::map<std::string, std::int64_t>& numbers) {
  std::string out = "{";
  for (const auto& [key, value] : strings) {
    out += (out.size() > 1 ? "," : "") + Quote(key) + ":" + Quote(value);
  }
  for (const auto& [key, value] : numbers) {
    out += (out.size() > 1 ? "," : "") + Quote(key) + ":" + std::to_string(value);
  }
  return out + "}\n";
}

std::optional<std::map<std::string, std::string>> ParseFlatJson(const std::string& text) {
  return FlatParser(text).Parse();
}

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Internal("cannot write '" + tmp + "': " + std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return Internal("cannot write '" + tmp + "': " + std::strerror(error));
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) < 0) {
    return Internal("cannot rename '" + tmp + "': " + std::strerror(errno));
  }
  return Status::Ok();
}

Status WriteSupervisorRecord(const std::string& host_dir, const SupervisorRecord& record) {
  return WriteFileAtomically(
      host_dir + "/" + kSupervisorFile,
      FlatJson({{"output_dir", record.output_dir}},
               {{"pid", record.pid},
                {"start_time", static_cast<std::int64_t>(record.start_time)},
                {"child_pid", record.child_pid},
                {"child_start_time", static_cast<std::int64_t>(record.child_start_time)}}));
}

Result<SupervisorRecord> ReadSupervisorRecord(const std::string& host_dir) {
  const std::string path = host_dir + "/" + kSupervisorFile;
  auto fields = ReadJsonFile(path);
  if (!fields.ok()) return fields.status();
  SupervisorRecord record;
  const auto pid = Number<pid_t>(*fields, "pid");
  const auto start = Number<std::uint64_t>(*fields, "start_time");
  const auto child = Number<pid_t>(*fields, "child_pid");
  const auto child_start = Number<std::uint64_t>(*fields, "child_start_time");
  if (!pid || !start || !child || !child_start || *pid <= 0 || *child <= 0) return Malformed(path);
  record.pid = *pid;
  record.start_time = *start;
  record.child_pid = *child;
  record.child_start_time = *child_start;
  const auto out = fields->find("output_dir");
  if (out != fields->end()) record.output_dir = out->second;
  return record;
}

Status WriteHostStatus(const std::string& host_dir, const HostStatus& status) {
  std::map<std::string, std::int64_t> numbers{{"started_at", status.started_at},
                                              {"ended_at", status.ended_at}};
  if (status.exit_code < 0) {
    numbers["signal"] = -status.exit_code;
  } else {
    numbers["exit_code"] = status.exit_code;
  }
  return WriteFileAtomically(host_dir + "/" + kStatusFile, FlatJson({}, numbers));
}

Result<HostStatus> ReadHostStatus(const std::string& host_dir) {
  const std::string path = host_dir + "/" + kStatusFile;
  auto fields = ReadJsonFile(path);
  if (!fields.ok()) return fields.status();
  HostStatus status;
  const auto code = Number<int>(*fields, "exit_code");
  const auto signal = Number<int>(*fields, "signal");
  if (!code && !signal) return Malformed(path);
  status.exit_code = code ? *code : -*signal;
  status.started_at = Number<Timestamp>(*fields, "started_at").value_or(0);
  status.ended_at = Number<Timestamp>(*fields, "ended_at").value_or(0);
  return status;
}

Status WriteStopRequest(const std::string& host_dir, const StopRequest& request) {
  return WriteFileAtomically(host_dir + "/" + kStopFile,
                             FlatJson({{"reason", request.reason}}, {{"grace_ms", request.grace_ms}}));
}

Result<StopRequest> ReadStopRequest(const std::string& host_dir) {
  const std::string path = host_dir + "/" + kStopFile;
  auto fields = ReadJsonFile(path);
  if (!fields.ok()) return fields.status();
  const auto grace = Number<Duration>(*fields, "grace_ms");
  const auto reason = fields->find("reason");
  if (!grace || reason == fields->end()) return Malformed(path);
  return StopRequest{reason->second, *grace};
}

namespace {

std::optional<std::uint64_t> StartTimeOf(pid_t pid, bool zombies) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!in || !std::getline(in, stat)) return std::nullopt;
  // "pid (comm) S ppid ...": comm may hold spaces and parentheses; fields follow the last ')'.
  const std::size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(paren + 1));
  std::string state;
  fields >> state;  // field 3
  if (!zombies && (state == "Z" || state == "X" || state == "x")) return std::nullopt;
  std::string field;
  for (int i = 4; i <= 22 && fields >> field; ++i) {
    if (i == 22) {
      std::uint64_t value = 0;
      const auto [ptr, error] = std::from_chars(field.data(), field.data() + field.size(), value);
      if (error != std::errc()) return std::nullopt;
      return value;
    }
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

Timestamp EpochMillisNow() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace allot::exec
