#pragma once

// Starting a process: fork, setsid or setpgid, redirect, exec. Internal to the local executor
// (which starts each host's supervisor in its own session) and the supervisor (which starts the
// job's command in its own process group).

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace allot::exec {

struct SpawnRequest {
  std::vector<std::string> argv;                   // argv[0] is looked up in the new PATH
  std::map<std::string, std::string> environment;  // the complete environment of the process
  std::string stdout_path;                         // opened O_APPEND | O_CREAT; empty: inherited
  std::string stderr_path;
  enum class Isolation { kSession, kProcessGroup };
  Isolation isolation = Isolation::kSession;
  int pass_fd = -1;  // when >= 0, inherited by the process as descriptor 3
  // Open descriptors the process inherits at their own numbers (not 0-2, nor 3 with pass_fd):
  // the channels' directories, which the supervisor hands bubblewrap (supervisor.h --bind-by-fd).
  std::vector<int> keep_fds;
  std::string working_dir;  // empty: the caller's
  // cgroup.procs files the process joins (writing "0") before it execs; a failure is an error
  // like a failed exec, so a process never runs outside the limits it was given.
  std::vector<std::string> join_cgroups;
  // Starts the program with SIGTERM ignored (inherited across exec): bubblewrap, which a
  // SIGTERM to every process of a Slurm step would kill, and the job with it, before its grace.
  // The sandbox's exec step restores the default for the job (job_exec.h).
  bool ignore_sigterm = false;
  // RLIMIT_FSIZE of the program and all it starts: no file it writes grows past this many bytes
  // (the write fails with EFBIG, after SIGXFSZ, whose default kills). 0: left as it is.
  std::int64_t max_file_bytes = 0;
};

// Starts the process in a new session or a new process group (either way its pid is its process
// group id), stdin from /dev/null, every signal at its default disposition and unblocked, no
// descriptors but 0-2 (and 3, see pass_fd, and keep_fds) inherited. Returns
// its pid once exec succeeded; if it failed, the child has been reaped and the error names the
// command, e.g. "cannot run 'nosuchprog': No such file or directory".
Result<pid_t> SpawnProcess(const SpawnRequest& request);

// The server's environment (environ) as a map; entries without '=' are skipped.
std::map<std::string, std::string> CurrentEnvironment();

}  // namespace allot::exec
