#include "exec/host_files.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "env/files.h"

namespace allot::exec {
namespace {

using Json = nlohmann::json;

// Invalid UTF-8 in a string is replaced rather than thrown about.
Status WriteJson(const std::string& path, const Json& object) {
  return env::WriteFileAtomically(
      path, object.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n");
}

// The file as a JSON object; an error for a missing file or anything but an object.
Result<Json> ReadJsonObject(const std::string& path) {
  Result<std::string> text = env::ReadFile(path);
  if (!text.ok()) return text.status();
  Json object;
  try {
    object = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  } catch (const Json::exception&) {  // none expected without exceptions; kept at the edge
    object = Json();
  }
  if (!object.is_object()) return Internal("'" + path + "' is not a JSON object");
  return object;
}

// The integer field `key` if it is one and fits T.
template <typename T>
std::optional<T> Number(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  if (it->is_number_unsigned()) {
    const auto value = it->get<std::uint64_t>();
    if (std::in_range<T>(value)) return static_cast<T>(value);
  } else if (it->is_number_integer()) {
    const auto value = it->get<std::int64_t>();
    if (std::in_range<T>(value)) return static_cast<T>(value);
  }
  return std::nullopt;
}

std::optional<std::string> Text(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
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

Status WriteSupervisorRecord(const std::string& host_dir, const SupervisorRecord& record) {
  return WriteJson(host_dir + "/" + kSupervisorFile,
                   Json{{"pid", record.pid},
                        {"start_time", record.start_time},
                        {"child_pid", record.child_pid},
                        {"child_start_time", record.child_start_time},
                        {"output_dir", record.output_dir},
                        {"limits", record.limits}});
}

Result<SupervisorRecord> ReadSupervisorRecord(const std::string& host_dir) {
  const std::string path = host_dir + "/" + kSupervisorFile;
  const Result<Json> fields = ReadJsonObject(path);
  if (!fields.ok()) return fields.status();
  const auto pid = Number<pid_t>(*fields, "pid");
  const auto start = Number<std::uint64_t>(*fields, "start_time");
  const auto child = Number<pid_t>(*fields, "child_pid");
  const auto child_start = Number<std::uint64_t>(*fields, "child_start_time");
  if (!pid || !start || !child || !child_start || *pid <= 0 || *child <= 0) return Malformed(path);
  return SupervisorRecord{*pid,
                          *start,
                          *child,
                          *child_start,
                          Text(*fields, "output_dir").value_or(""),
                          Text(*fields, "limits").value_or("")};
}

Status WriteHostStatus(const std::string& host_dir, const HostStatus& status) {
  Json object{{"started_at", status.started_at}, {"ended_at", status.ended_at}};
  if (status.exit_code < 0) {
    object["signal"] = -status.exit_code;
  } else {
    object["exit_code"] = status.exit_code;
  }
  return WriteJson(host_dir + "/" + kStatusFile, object);
}

Result<HostStatus> ReadHostStatus(const std::string& host_dir) {
  const std::string path = host_dir + "/" + kStatusFile;
  const Result<Json> fields = ReadJsonObject(path);
  if (!fields.ok()) return fields.status();
  const auto code = Number<int>(*fields, "exit_code");
  const auto signal = Number<int>(*fields, "signal");
  if (!code && !signal) return Malformed(path);
  return HostStatus{code ? *code : -*signal, Number<Timestamp>(*fields, "started_at").value_or(0),
                    Number<Timestamp>(*fields, "ended_at").value_or(0)};
}

Status WriteStopRequest(const std::string& host_dir, const StopRequest& request) {
  return WriteJson(host_dir + "/" + kStopFile,
                   Json{{"reason", request.reason}, {"grace_ms", request.grace_ms}});
}

Result<StopRequest> ReadStopRequest(const std::string& host_dir) {
  const std::string path = host_dir + "/" + kStopFile;
  const Result<Json> fields = ReadJsonObject(path);
  if (!fields.ok()) return fields.status();
  const auto grace = Number<Duration>(*fields, "grace_ms");
  auto reason = Text(*fields, "reason");
  if (!grace || !reason) return Malformed(path);
  return StopRequest{std::move(*reason), *grace};
}

Timestamp EpochMillisNow() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace allot::exec
