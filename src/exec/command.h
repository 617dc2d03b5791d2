#pragma once

// Running a short-lived command to completion and reading what it printed: the Slurm executor's
// sbatch, squeue, scancel and scontrol. argv only, never a shell; a deadline, never a hang.

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace allot::exec {

struct CommandRequest {
  std::vector<std::string> argv;  // argv[0] is looked up in our PATH (posix_spawnp)
  // Added to (or replacing entries of) this process's environment; with inherit_environment
  // false, the command's whole environment.
  std::map<std::string, std::string> environment;
  bool inherit_environment = true;
  Duration timeout = Seconds(30);  // then SIGKILL to its process group, and Unavailable
  std::size_t max_output = std::size_t{64} << 20;  // per stream; beyond it the rest is dropped
};

struct CommandOutput {
  int exit_code = 0;  // negative: killed by that signal
  std::string out;
  std::string err;
};

// Runs the command and waits for it. An error Status only when it could not be run at all
// (NotFound when the program does not exist) or ran past its timeout (Unavailable, naming
// the command); a nonzero exit is an ordinary CommandOutput.
Result<CommandOutput> RunCommand(const CommandRequest& request);

// "cmd arg1 arg2" for messages (arguments with spaces quoted).
std::string CommandLine(const std::vector<std::string>& argv);

}  // namespace allot::exec
