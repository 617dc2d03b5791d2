#pragma once

// One attempt of the Slurm executor as it knows it (internal to slurm_executor.cc, apart for its
// tests): its hosts' files on the shared directory, what Slurm last said, and how its end is
// told to the server (MakeSlurmExit).

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "exec/executor.h"
#include "exec/sagemaker_layout.h"

namespace allot::exec {

inline constexpr char kPlatformError[] = "Received status from SageMaker: InternalServerError: ";

// What is known of one host of a Slurm attempt, from its files on the shared directory.
struct SlurmHost {
  std::string dir;
  std::string node;              // the Slurm node, once known
  std::optional<int> exit_code;  // status.json; negative: killed by that signal
  std::string launch_error;      // launch-error
  std::string output_dir;        // supervisor.json's output_dir
  std::string limits;            // supervisor.json's limits
  bool failed_on_its_own = false;
};

struct SlurmAttempt {
  model::JobId job = 0;
  int attempt = 0;
  std::string name;
  std::string attempt_dir;
  std::string job_dir;
  std::string sync_dir;
  CopyIdentity copy_as;
  Timestamp checkpoint = 0;
  std::chrono::steady_clock::time_point next_scan{};  // of job_dir (ScanDueCheckpoints)
  std::vector<SlurmHost> hosts;
  std::string slurm_id;  // empty while sbatch runs
  std::string job_id;    // the API's jobId: the Slurm job's --comment, checked before trusting it
  std::chrono::steady_clock::time_point submitted_at{};  // when sbatch returned (adopted: long ago)
  bool started = false;                                  // `started` reported (or adopted)
  bool stopping = false;
  std::string stop_reason;
  std::optional<std::chrono::steady_clock::time_point> kill_deadline;
  bool signalled = false;  // stop.json written for this stop
  bool cancelled = false;  // scancel sent
  std::string state;       // Slurm's, as last polled
  std::string reason;
  std::optional<std::chrono::steady_clock::time_point>
      slurm_done_at;        // first poll that found the job ended
  std::string failed_node;  // a node of the job that stopped responding while hosts lacked status
  bool gone = false;        // no longer listed by squeue
  std::string hopeless;     // the pending reason of a job Slurm will never start
  bool accounting_asked = false;  // sacct asked once the job left squeue with hosts unknown
};

// The trimmed contents of a small file; empty if it cannot be read.
std::string ReadText(const std::string& path);

// Reads what the hosts left that is not known yet: status.json, launch-error, supervisor.json.
void RefreshHosts(SlurmAttempt& attempt);

// Pending reasons that no wait cures: the request exceeds what the partition, its nodes or the
// account allow. Such a job is cancelled and its attempt fails with the reason, instead of
// holding its quota while SCHEDULED forever.
bool HopelessPendingReason(const std::string& reason);

// Whether Slurm, not the job nor Allot, ended the job: a node failed, a Slurm limit, or a
// scancel Allot did not send.
bool SlurmEndedIt(const SlurmAttempt& attempt);

// The attempt's end as the server hears it: succeeded when every host exited 0; otherwise the
// reason names Slurm's doing (a hopeless wait, a dead node, an outside scancel, a Slurm limit),
// else the first host that failed on its own, as the local executor does.
AttemptExit MakeSlurmExit(const SlurmAttempt& attempt);

}  // namespace allot::exec
