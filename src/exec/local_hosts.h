#pragma once

// One host of the local executor: its supervisor, started or adopted, watched and stopped.
// Internal to local_executor.cc.

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "common/status.h"
#include "exec/executor.h"
#include "exec/host_files.h"
#include "exec/sagemaker_layout.h"

namespace allot::exec {

struct Host {
  std::string name;        // "algo-1"
  std::string dir;         // <attempt_dir>/algo-1 (absolute)
  std::string output_dir;  // host-side /opt/ml/output
  pid_t pid = 0;           // the supervisor
  std::uint64_t start_time = 0;
  pid_t child_pid = 0;  // the job's process group
  std::uint64_t child_start_time = 0;
  bool is_child = false;  // started by this process and not reaped yet
  int pidfd = -1;         // -1: the kernel has none, or the host is gone
  bool running = true;
  bool stop_sent = false;
  bool vanished = false;
  bool failed_on_its_own = false;  // failed before the attempt was being stopped
  int exit_code = 0;               // negative: killed by that signal
  std::string limits;              // what its supervisor enforces (SupervisorRecord::limits)
};

// Prepares host `index` and starts its supervisor; returns once the job's command runs.
Result<Host> StartHost(const LaunchSpec& spec, int index, const LayoutOptions& layout);

// Host `index` of an attempt started earlier: running (pid and start time match), finished
// (status.json) or vanished. NotFound if its directory does not exist.
Result<Host> AdoptHost(const std::string& attempt_dir, int index);

// What is left of a host whose directory or supervisor.json is gone, by the identities the server
// recorded at launch: SIGKILLs the supervisor and the job's process group (through its leader),
// each only while its pid runs with the recorded start time. Unverified pids are not signalled.
void KillRecorded(const HostProcess& recorded);

// True once the host is gone; then running is false and exit_code (or vanished) is set, the
// supervisor reaped if it was a child, and the pidfd closed.
bool CheckGone(Host& host);

// Writes stop.json and SIGTERMs the supervisor (again, for a shorter grace).
void SendStop(Host& host, const StopRequest& request);

// Stops a host whose attempt did not start: SIGTERM with grace 0, then waits for it.
void Abandon(Host& host);

void CloseHost(Host& host);

}  // namespace allot::exec
