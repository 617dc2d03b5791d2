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
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "exec/sandbox.h"
#include "model/decision.h"
#include "model/job.h"

namespace allot::exec {

struct LaunchSpec {
  model::JobId job = 0;  // the engine's id
  std::string job_id;    // the API's jobId (the Slurm executor's --comment)
  std::string share;     // the quota share (the Slurm executor's --account)
  int attempt = 0;
  std::string name;               // for logs: the training job name of this attempt
  std::vector<std::string> argv;  // ContainerEntrypoint + ContainerArguments
  std::map<std::string, std::string> environment;  // the payload's Environment
  std::string instance_type;
  int instance_count = 1;   // hosts algo-1 .. algo-N, one process each
  std::string attempt_dir;  // created by the executor; logs go to <dir>/<host>/{stdout,stderr}

  // --- the SageMaker training-job layout (issue 4; see sagemaker_layout.h) ---
  // The job's own directory: <job_dir>/checkpoints is the checkpoint directory of every attempt.
  std::string job_dir;
  std::map<std::string, std::string> hyperparameters;  // HyperParameters
  struct Channel {
    std::string name;        // InputDataConfig[].ChannelName
    std::string source_dir;  // the local directory of its file:// S3Uri
  };
  std::vector<Channel> channels;
  std::string checkpoint_local_path = "/opt/ml/checkpoints";  // CheckpointConfig.LocalPath
  std::string checkpoint_sync_dir;  // CheckpointConfig.S3Uri when file://, as a local directory
  // The allot binary: each host runs under `<self_exe> __supervise ...` (supervisor.h).
  std::string self_exe;
  // The instance slot each host got from the server's host map (index = host - 1; missing or
  // empty fields = no assignment): its GPUs become CUDA_VISIBLE_DEVICES, its CPU set the host's
  // CPU affinity.
  struct HostSlot {
    std::string gpus;  // "0,1"
    std::string cpus;  // "0-3"
  };
  std::vector<HostSlot> host_slots;
  // The hosts' names as the job sees them (SM_HOSTS, SM_CURRENT_HOST, resourceconfig.json),
  // index = host - 1; empty: algo-1 .. algo-N. The Slurm executor names them after the
  // allocated nodes; the host directories stay <attempt_dir>/algo-K.
  std::vector<std::string> host_names;
  // Their addresses, for the sandbox's /etc/hosts (same index); empty: 127.0.0.1 for all.
  std::vector<std::string> host_addresses;

  // --- the sealed sandbox (issue 10; sandbox.h) ---
  // The quota share's unprivileged user the training process runs as (server/job_identity.h).
  // Unset where the server runs as root: nobody (65534). Ignored unsandboxed (--no-sandbox):
  // then the job runs as the server's user.
  std::optional<JobUser> user;
  JobLimits limits;  // per host; 0 = none
  // Host paths a job may read, bound read-only at the same place (a Python installation, say).
  std::vector<std::string> readonly_paths;
};

// A host's processes and their identities: a pid names a process only together with its start
// time (env/process.h), so nothing is signalled unless both match.
struct HostProcess {
  std::string host;  // "algo-1"
  pid_t pid = 0;  // the supervisor; also its process group id (each host runs in its own session)
  std::uint64_t start_time = 0;        // the supervisor's; 0: unknown
  pid_t child_pid = 0;                 // the job's process, the leader of the job's process group
  std::uint64_t child_start_time = 0;  // 0: unknown (it exited before it was recorded)

  bool operator==(const HostProcess&) const = default;
};

struct AttemptExit {
  model::JobId job = 0;
  int attempt = 0;
  bool succeeded = false;  // every host exited 0
  // For a failure: "Received status from SageMaker: AlgorithmError: algo-2 exited with code 3"
  // (or "... was killed by signal 9").
  std::string reason;
  std::vector<int> exit_codes;  // per host, -signal when killed by a signal
  // What the sandbox enforced, from the first host's supervisor (sandbox.h DescribeLimits), e.g.
  // "uid=200001 gid=200001 tmp=1 GiB memory=8 GiB pids=4096 disk=10 GiB"; "unsandboxed" for a
  // job run without the sandbox; empty where no supervisor recorded it.
  std::string enforced_limits;
  // Why the checkpoints were not saved to CheckpointConfig.S3Uri after the attempt, or empty:
  // the attempt's outcome stands, and its status says so.
  std::string checkpoint_error;
};

struct Callbacks {
  // The attempt was handed to an external scheduler, which named it `ref` ("slurm:4242"). The
  // server records it with the attempt, so that a restart can adopt the attempt by it
  // (AdoptSpec::executor_ref). The local executor never calls it. May be unset.
  std::function<void(model::JobId, int attempt, const std::string& ref)> submitted;
  // Every host process was started.
  std::function<void(model::JobId, int attempt, const std::vector<HostProcess>&)> started;
  // Every host process is gone: the attempt's capacity is free.
  std::function<void(const AttemptExit&)> ended;
  // The newest file time under the job's checkpoint directory moved forward (epoch ms).
  std::function<void(model::JobId, int attempt, Timestamp newest)> checkpoint;
};

// An attempt an earlier server started, to be watched again after a restart.
struct AdoptSpec {
  model::JobId job = 0;
  int attempt = 0;
  std::string attempt_dir;
  int instance_count = 1;
  std::string job_dir;
  std::string checkpoint_sync_dir;
  // The hosts' identities as `started` reported them when the attempt started (empty: unknown).
  // Used only where the attempt's files no longer name its processes.
  std::vector<HostProcess> recorded_hosts;
  // The job's user, for the checkpoint copy after the attempt (as LaunchSpec::user).
  std::optional<JobUser> user;
  JobLimits limits;  // the host's, as LaunchSpec::limits: what its checkpoint copy may hold
  // What `submitted` reported for the attempt; empty if nothing was reported.
  std::string executor_ref;
  std::string job_id;  // the API's jobId (LaunchSpec::job_id): the Slurm job's comment
};

class Executor {
 public:
  virtual ~Executor() = default;

  // Starts the attempt's host processes; returns an error if they could not be started (then
  // `ended` is not called).
  virtual Status Launch(const LaunchSpec& spec) = 0;

  // Stops every host of the attempt: writes `kind` ("preemption", "termination", "timeout") to
  // each host's /opt/ml/output/stop-reason, then SIGTERM to each process group, SIGKILL after
  // `grace`. `ended` follows once they are gone. Unknown attempts are ignored.
  virtual void Stop(model::JobId job, int attempt, Duration grace, model::StopKind kind) = 0;

  // Re-attaches to the supervisors of an attempt started before a restart. A host whose
  // supervisor still runs (same pid and process start time) is watched again; one that finished
  // meanwhile reports the exit status its supervisor recorded; one that vanished without a
  // status fails the attempt with a clear reason. `started` is not called again; `ended` follows
  // as for a launched attempt. Fails (and nothing follows) if the attempt left nothing to adopt.
  // Where a host's directory or its supervisor record is gone (the attempt's directory was
  // removed, say), its leftovers are killed by spec.recorded_hosts: the supervisor and the job's
  // process group, each only if its pid still runs with the recorded start time. No process is
  // ever signalled by pid alone.
  virtual Status Adopt(const AdoptSpec& spec) = 0;

  // Stops reporting and returns; processes keep running (the server is shutting down).
  virtual void Detach() = 0;

  // The service environments changed (or were loaded at start): an executor that checks its
  // capacity against them (the Slurm executor: nodes per partition) checks again.
  virtual void ConfigurationChanged() {}

  // Whether jobs run in the sealed sandbox (bubblewrap works and --no-sandbox was not given).
  virtual bool SandboxActive() const { return false; }

  // For the server's metrics: whether the executor answers, and when an executor that polls a
  // cluster (Slurm's squeue) last did so successfully (epoch ms; unset where it does not poll).
  struct Health {
    bool answering = true;
    std::optional<Timestamp> last_poll;
  };
  virtual Health health() const { return {}; }
};

struct LocalOptions {
  // When one host of an attempt fails, the others are stopped with this grace.
  Duration failure_grace = Seconds(10);
};

std::unique_ptr<Executor> NewLocalExecutor(const LocalOptions& options, Callbacks callbacks);

}  // namespace allot::exec
