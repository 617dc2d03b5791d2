#pragma once

// Shared by the executor tests: a callback recorder, a scratch directory and file helpers.

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "exec/executor.h"
#include "exec/sagemaker_layout.h"

namespace allot::exec::testing {

// Generous upper bound for anything the tests wait for; never a timing assertion.
inline constexpr std::chrono::seconds kWaitLimit{20};

struct StartedEvent {
  model::JobId job = 0;
  int attempt = 0;
  std::vector<HostProcess> hosts;
  std::thread::id thread;
};

// Records every callback; Callbacks() gives functions that feed it.
class Recorder {
 public:
  exec::Callbacks Callbacks();

  // Waits up to kWaitLimit for `ended` of the attempt.
  std::optional<AttemptExit> WaitEnded(model::JobId job, int attempt);
  std::optional<StartedEvent> WaitStarted(model::JobId job, int attempt);
  // Waits up to kWaitLimit for a `checkpoint` of the attempt at or after `at_least`.
  std::optional<Timestamp> WaitCheckpoint(model::JobId job, int attempt, Timestamp at_least);

  std::vector<StartedEvent> started() const;
  std::vector<AttemptExit> ended() const;
  // The order callbacks came in: "started 7/1", "checkpoint 7/1", "ended 7/1".
  std::vector<std::string> log() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<StartedEvent> started_;
  std::vector<AttemptExit> ended_;
  std::vector<std::tuple<model::JobId, int, Timestamp>> checkpoints_;
  std::vector<std::string> log_;
};

// A fresh directory removed with everything in it when the object goes.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The whole file, or "" when it cannot be read.
std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& text);

// Waits up to kWaitLimit for the file to contain `text`.
bool WaitForFileContaining(const std::string& path, const std::string& text);

// Waits up to kWaitLimit until `pid` no longer runs (gone, or a zombie left to its new parent).
bool WaitUntilGone(pid_t pid);

// The integer after "<key>=" in text, e.g. FindNumber("child=123\n", "child") = 123.
std::optional<std::int64_t> FindNumber(const std::string& text, const std::string& key);

// The tests' `allot __supervise` stand-in, built next to the test programs.
std::string SupervisorExe();

// Unsandboxed: the layout lives under the attempt directory.
LayoutOptions NoSandbox();

// The job's (not the supervisor's) process in supervisor.json of the host directory, 0 if none.
pid_t JobPid(const std::string& host_dir);

// Ends a host left running by a detached executor: SIGKILLs the job's group, then reaps the
// supervisor (a child of the test).
void KillHost(const std::string& host_dir, pid_t supervisor);

// /bin/sh -c script on `hosts` hosts; job_dir is <attempt_dir>.job, self_exe SupervisorExe().
LaunchSpec ShellSpec(model::JobId job, int attempt, const std::string& script, int hosts,
                     const std::string& attempt_dir);

}  // namespace allot::exec::testing
