#pragma once

// The files a host's supervisor (supervisor.h) and the local executor exchange in the host's
// directory <attempt_dir>/algo-K/. Every JSON file is one flat object, written to <name>.tmp and
// renamed into place, so a reader sees all of it or nothing.
//
//   supervisor.json  supervisor -> executor, once the job's command runs:
//                    {"pid":P,"start_time":T,"child_pid":C,"child_start_time":U,"output_dir":"..."}
//                    start times are field 22 of /proc/<pid>/stat (clock ticks since boot), so a
//                    recycled pid is never taken for the supervisor or the job.
//   stop.json        executor -> supervisor, written before each SIGTERM to the supervisor:
//                    {"reason":"preemption","grace_ms":120000}
//   status.json      supervisor -> executor, when the job's command ended:
//                    {"exit_code":3,"started_at":MS,"ended_at":MS} or {"signal":9,...} (epoch ms)
//   stdout, stderr   the host's logs (supervisor and job)

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "common/status.h"
#include "common/time.h"
#include "model/decision.h"

namespace allot::exec {

inline constexpr char kSupervisorFile[] = "supervisor.json";
inline constexpr char kStopFile[] = "stop.json";
inline constexpr char kStatusFile[] = "status.json";
inline constexpr char kStopReasonFile[] = "stop-reason";  // in the host's /opt/ml/output

struct SupervisorRecord {
  pid_t pid = 0;
  std::uint64_t start_time = 0;
  pid_t child_pid = 0;  // also the job's process group id
  std::uint64_t child_start_time = 0;
  std::string output_dir;  // the host-side /opt/ml/output
};

struct HostStatus {
  int exit_code = 0;  // negative: killed by that signal
  Timestamp started_at = 0;
  Timestamp ended_at = 0;
};

struct StopRequest {
  std::string reason;  // "preemption", "termination", "timeout"
  Duration grace_ms = 0;
};

// "preemption", "termination", "timeout": the word the job reads from stop-reason.
std::string StopReasonWord(model::StopKind kind);

Status WriteSupervisorRecord(const std::string& host_dir, const SupervisorRecord& record);
Result<SupervisorRecord> ReadSupervisorRecord(const std::string& host_dir);
Status WriteHostStatus(const std::string& host_dir, const HostStatus& status);
Result<HostStatus> ReadHostStatus(const std::string& host_dir);
Status WriteStopRequest(const std::string& host_dir, const StopRequest& request);
Result<StopRequest> ReadStopRequest(const std::string& host_dir);

// Writes <path>.tmp, then renames it to path.
Status WriteFileAtomically(const std::string& path, const std::string& text);

// Field 22 of /proc/<pid>/stat; nullopt if there is no such process or it already exited (a
// zombie).
std::optional<std::uint64_t> RunningStartTime(pid_t pid);
// The same, zombies included.
std::optional<std::uint64_t> StartTime(pid_t pid);
// The process `pid` runs and is the one that started at `start_time`.
bool SameProcessRunning(pid_t pid, std::uint64_t start_time);

Timestamp EpochMillisNow();

// A flat JSON object of string and integer values; the parser returns nullopt for anything else.
std::string FlatJson(const std::map<std::string, std::string>& strings,
                     const std::map<std::string, std::int64_t>& numbers);
std::optional<std::map<std::string, std::string>> ParseFlatJson(const std::string& text);

}  // namespace allot::exec
