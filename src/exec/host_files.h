#pragma once

// The files a host's supervisor (supervisor.h) and the local executor exchange in the host's
// directory <attempt_dir>/algo-K/. Every JSON file is one flat object, written atomically
// (env::WriteFileAtomically), so a reader sees all of it or nothing. A reader ignores fields it
// does not know; a file that is not such an object, or lacks a field, is an error Status.
//
//   supervisor.json  supervisor -> executor, once the job's command runs:
//                    {"pid":P,"start_time":T,"child_pid":C,"child_start_time":U,"output_dir":"...",
//                     "limits":"uid=200001 gid=200001 memory=8 GiB ..."}
//                    start times as env/process.h reads them, so a recycled pid is never taken
//                    for the supervisor or the job.
//   stop.json        executor -> supervisor, written before each SIGTERM to the supervisor:
//                    {"reason":"preemption","grace_ms":120000}
//   status.json      supervisor -> executor, when the job's command ended:
//                    {"exit_code":3,"started_at":MS,"ended_at":MS} or {"signal":9,...} (epoch ms)
//   stdout, stderr   the host's logs (supervisor and job)

#include <sys/types.h>

#include <cstdint>
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
  // The limits the supervisor enforces for this host (sandbox.h DescribeLimits), e.g.
  // "uid=200001 gid=200001 memory=8 GiB pids=4096 tmp=1 GiB disk=10 GiB"; optional in the file.
  std::string limits;
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

Timestamp EpochMillisNow();

}  // namespace allot::exec
