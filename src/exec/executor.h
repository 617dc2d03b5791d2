#pragma once

// Executors run the attempts the engine dispatches and report how they end. The server calls
// Launch() and Stop(); the executor calls back from its own threads.
//
// Thread-safety: every method may be called from any thread; callbacks may run concurrently with
// calls into the executor and must not block for long.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "model/job.h"

namespace allot::exec {

struct LaunchSpec {
  model::JobId job = 0;  // the engine's id
  int attempt = 0;
  std::string name;      // for logs: the training job name of this attempt
  std::vector<std::string> argv;  // ContainerEntrypoint + ContainerArguments
  std::map<std::string, std::string> environment;  // the payload's Environment
  std::string instance_type;
  int instance_count = 1;         // hosts algo-1 .. algo-N, one process each
  std::string attempt_dir;        // created by the executor; logs go to <dir>/<host>/{stdout,stderr}
};

struct HostProcess {
  std::string host;  // "algo-1"
  pid_t pid = 0;     // also the process group id (each host runs in its own session)
};

struct AttemptExit {
  model::JobId job = 0;
  int attempt = 0;
  bool succeeded = false;  // every host exited 0
  // For a failure: "Received status from SageMaker: AlgorithmError: algo-2 exited with code 3"
  // (or "... was killed by signal 9").
  std::string reason;
  std::vector<int> exit_codes;  // per host, -signal when killed by a signal
};

struct Callbacks {
  // Every host process was started.
  std::function<void(model::JobId, int attempt, const std::vector<HostProcess>&)> started;
  // Every host process is gone: the attempt's capacity is free.
  std::function<void(const AttemptExit&)> ended;
};

class Executor {
 public:
  virtual ~Executor() = default;

  // Starts the attempt's host processes; returns an error if they could not be started (then
  // `ended` is not called).
  virtual Status Launch(const LaunchSpec& spec) = 0;

  // Stops every host of the attempt: SIGTERM to each process group, SIGKILL after `grace`.
  // `ended` follows once they are gone. Unknown attempts are ignored.
  virtual void Stop(model::JobId job, int attempt, Duration grace) = 0;

  // Stops reporting and returns; processes keep running (the server is shutting down).
  virtual void Detach() = 0;
};

struct LocalOptions {
  // When one host of an attempt fails, the others are stopped with this grace.
  Duration failure_grace = Seconds(10);
};

std::unique_ptr<Executor> NewLocalExecutor(const LocalOptions& options, Callbacks callbacks);

}  // namespace allot::exec
