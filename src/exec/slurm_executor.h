#pragma once

// The Slurm executor: one attempt is one Slurm batch job, placed and run by Slurm; Allot keeps
// every decision (quota, borrowing, reclaim, preemption, retries). Slurm's own preemption and
// requeue stay off (sbatch --no-requeue; the cluster should run PreemptType=preempt/none).
//
// Launch(): restores the checkpoints on the shared directory, writes <attempt_dir>/launch.json
// and batch.sh (`allot __slurmbatch`, slurm_node.h) and returns; a pool of submitters runs
// `sbatch --parsable --nodes=N --ntasks-per-node=1 -J <name> --comment=<job id>
// --account=<share> -p <partition> [--constraint] [--gres] [--cpus-per-task] [--mem]` and
// reports the Slurm job id through `submitted` ("slurm:<id>"), also kept in
// <attempt_dir>/slurm-job-id. An sbatch that fails ends the attempt, failed, with its message.
//
// State: one poller runs `squeue --json` every poll_interval, or fast_poll_interval while an
// attempt waits to start or to end. RUNNING reports `started` (hosts named after their nodes).
// Once Slurm no longer runs the job (an ended state, or gone from squeue) and every host's
// status.json is on the shared directory, `ended` follows, as the local executor builds it
// (the first host that failed on its own is named). A host without a status after
// missing_status_wait failed with the reason Slurm gives: "Slurm ended job 42 with NODE_FAIL on
// n3", "... was cancelled outside Allot", "... TIMEOUT". A host that fails on its own while the
// others run stops them ("termination", failure_grace), as locally.
//
// Stop(): writes stop.json {reason, grace} into each host's directory on the shared directory;
// each node's __slurmhost sees it within 100 ms and SIGTERMs the host's supervisor, which writes
// the reason to /opt/ml/output/stop-reason, SIGTERMs the job and kills it after the grace. No
// `scancel --signal=TERM`: in Slurm 22.05 it reaches every process of the step at once, the job
// included, before the supervisor wrote the stop reason (a preempted job would read
// "termination"), and with --full it reaches only the batch script, never the tasks (measured,
// docs/slurm.md). After the grace plus kill_margin a job that still runs gets `scancel <id>`. A
// job still pending in Slurm is cancelled at once.
//
// Adopt(): finds the Slurm job by the reference the server stored (AdoptSpec::executor_ref),
// else <attempt_dir>/slurm-job-id, else the squeue entry whose working directory is the attempt
// directory; Slurm jobs that Allot did not submit are never touched.
//
// Detach(): stops the threads; Slurm jobs keep running.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "exec/executor.h"
#include "exec/slurm_client.h"

namespace allot::exec {

// Where one instance type runs: one instance is one host, on a node of the partition, with the
// CPUs, memory and GPUs given here (a whole node's worth to have one instance a node).
struct SlurmPlacement {
  std::string partition;
  std::string constraint;      // --constraint; empty: none
  std::string gres;            // --gres per node, e.g. "gpu:1"; empty: none
  int cpus = 0;                // per node (--cpus-per-task); 0: Slurm's default
  std::int64_t memory_mb = 0;  // per node (--mem); 0: Slurm's default
};

struct SlurmOptions {
  std::map<std::string, SlurmPlacement> placements;  // by instance type
  bool sandbox = true;        // the nodes run the hosts in the sealed sandbox
  std::string srun = "srun";  // as the batch step finds it
  Duration poll_interval = 1000;
  Duration fast_poll_interval = 200;
  Duration kill_margin = Seconds(2);
  Duration failure_grace = Seconds(10);
  Duration missing_status_wait = Seconds(5);  // for a shared file system that lags
  // How long an ended job whose end Slurm does not explain may wait for a node of it to be seen
  // not responding (then: NODE_FAIL on that node). Above SlurmdTimeout + MessageTimeout.
  Duration node_failure_wait = Seconds(40);
  Duration node_check_interval = Seconds(30);
  int submitters = 4;  // sbatch calls in flight
  // Per instance type, the most instances the service environments allow (their maxCapacity);
  // checked against the usable nodes of its partition at start and every node check. Unset: no
  // check.
  std::function<std::map<std::string, int>()> required_instances;
  // Problems that reach no caller: a failed squeue, a partition short of nodes. Unset: stderr.
  std::function<void(const std::string& event, const std::string& message)> warn;
};

// How many instances of the placement fit on the usable nodes of its partition, by CPUs and
// memory (one a node where neither is given).
std::int64_t InstancesThatFit(const std::vector<SlurmNode>& nodes, const SlurmPlacement& p);

// Checks at start: the Slurm commands exist, the cluster answers, every placement's partition
// exists. FailedPrecondition naming what is wrong.
Status CheckSlurmCluster(SlurmClient& client, const SlurmOptions& options);

std::unique_ptr<Executor> NewSlurmExecutor(const SlurmOptions& options,
                                           std::unique_ptr<SlurmClient> client,
                                           Callbacks callbacks);

}  // namespace allot::exec
