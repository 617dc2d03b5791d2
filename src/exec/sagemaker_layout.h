#pragma once

// The SageMaker training container layout for one host of an attempt
// (/opt/ml/input/config/*.json, /opt/ml/input/data/<channel>, /opt/ml/model, /opt/ml/output,
// the checkpoint directory) and the SM_* variables the SageMaker training toolkit sets. With
// bubblewrap the host runs in the sealed sandbox of sandbox.h, where /opt/ml is its directory
// (owned by the job's user), only system directories are visible (read-only) and /tmp is private;
// without it (--no-sandbox) the same tree lives under the attempt directory, the variables point
// there and the job runs as the server's user.

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "exec/executor.h"

namespace allot::exec {

struct LayoutOptions {
  // Run every host in the sealed sandbox (sandbox.h). Where bubblewrap is missing or does not
  // work, PrepareHost then fails (FailedPrecondition): no sandbox, no job.
  bool sandbox = true;
  std::string bwrap = "/usr/bin/bwrap";
  // Adds --die-with-parent: the job is killed when the process that started bwrap exits (set it
  // only where that process is the supervisor; PR_SET_PDEATHSIG fires when its *thread* exits).
  bool die_with_parent = false;
};

struct HostPlan {
  std::vector<std::string> argv;  // what to exec: the job's command, wrapped in bwrap if sandboxed
  std::map<std::string, std::string> environment;  // the payload's Environment plus the SM_* set
  std::string ml_dir;       // the host-side directory that is /opt/ml for this host
  std::string output_dir;   // host-side /opt/ml/output (stop-reason, failure)
  std::string working_dir;  // host-side directory to start in (ml_dir; bwrap then uses --chdir)
  bool sandboxed = false;
  // <host_dir>/job-env (mode 0600): the job's environment, read by the supervisor (unsandboxed)
  // or by the sandbox's exec step; the supervisor itself runs with a clean one.
  std::string job_env_file;
  std::vector<std::string> disk_paths;  // the host's directory (/opt/ml, logs)
  // The job's checkpoint directory, whose files count their length, not their blocks: its copies
  // (CopyBudget) go by length, so a job learns at once what would not be saved.
  std::vector<std::string> checkpoint_disk_paths;
  std::string enforced;  // what bwrap enforces: "uid=200001 gid=200001 tmp=1 GiB"; "" unsandboxed
  // The channels' directories (sandboxed): the supervisor opens each and bwrap binds it from
  // that descriptor, not by its name (supervisor.h --bind-by-fd).
  std::vector<std::string> bind_by_fd;
  // Whom the supervisor opens them as (--bind-as): the job's user, when the server is root.
  std::optional<JobUser> bind_as;
};

bool SandboxAvailable(const LayoutOptions& options);

// Creates the host's tree (host_index 1-based) and returns what to run.
Result<HostPlan> PrepareHost(const LaunchSpec& spec, int host_index, const LayoutOptions& options);

// <job_dir>/checkpoints, created if missing.
Result<std::string> JobCheckpointDir(const std::string& job_dir);
// Whom a checkpoint copy runs as. With a user, the copy is a process of its own
// (`<exe> __copyas`, CopyAsMain) that became that user first, so a job's CheckpointConfig.S3Uri
// can only read and write what the job's own uid may; without one (no sandbox: jobs run as the
// server's user), it runs in this process.
// What a checkpoint copy may hold: the job's disk and file limits (0: none), its files counted
// at their full length, which is what a copy writes (a sparse file too). A tree over either, or
// deeper than the disk check walks, is not copied at all.
struct CopyBudget {
  std::int64_t bytes = 0;
  std::int64_t files = 0;
};
struct CopyIdentity {
  std::string exe;  // the allot binary (or the tests' stand-in)
  std::optional<JobUser> user;
  CopyBudget budget;
  // How long the copy process of the job's user may run before it is killed (its failure said
  // as any other): a copy holds a sync worker, a launch and, until it ends, the attempt's
  // capacity, which a reclaim may be waiting for. 0: the time to copy the budget's bytes at
  // 50 MB/s, at least 10 minutes and at most a week (a day without a disk limit).
  Duration timeout_ms = 0;
};
// The identity of a launched job's copies: its sandbox user, when the sandbox is on.
CopyIdentity CopyIdentityOf(const LaunchSpec& spec, const LayoutOptions& options);
// Copies checkpoint_sync_dir into the job's checkpoint directory (before the first host starts).
Status RestoreCheckpoints(const std::string& job_dir, const std::string& sync_dir,
                          const CopyIdentity& as = {});
// Copies the job's checkpoint directory to checkpoint_sync_dir (after every attempt).
Status SyncCheckpoints(const std::string& job_dir, const std::string& sync_dir,
                       const CopyIdentity& as = {});
// `allot __copyas --uid U --gid G --max-bytes N --max-files N FROM TO`: becomes the user
// (BecomeJobUser), then copies the tree FROM into TO as RestoreCheckpoints does, within the
// budget. Exits 0, 1 when the copy failed, 2 for bad
// arguments, 126 when it could not become the user (the reason on stderr).
int CopyAsMain(int argc, char** argv);
// The newest modification time of any file under `dir`, 0 if none.
Timestamp NewestFileTime(const std::string& dir);
// The contents of <output_dir>/failure (SageMaker's convention), trimmed; empty if none.
std::string FailureMessage(const std::string& output_dir);

}  // namespace allot::exec
