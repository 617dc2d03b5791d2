#pragma once

// The two programs the Slurm executor runs on the cluster (hidden subcommands of allot):
//
//   allot __slurmbatch --launch <attempt_dir>/launch.json
//     The batch step. Starts `srun --nodes=N --ntasks-per-node=1 ... allot __slurmhost --launch
//     FILE` (in its own process group) and exits with its status. A SIGTERM (an operator's
//     scancel --signal=TERM --full reaches only the batch script's process group) does not end
//     it: the hosts stop on their own, within their grace, and the batch step must outlive them,
//     or Slurm would end the job and kill them early.
//
//   allot __slurmhost --launch <attempt_dir>/launch.json
//     One task per node. Host algo-K is the node with SLURM_NODEID=K-1; the job sees the real
//     node names (SLURM_JOB_NODELIST, expanded) in SM_HOSTS, SM_CURRENT_HOST and
//     resourceconfig.json, and their addresses in the sandbox's /etc/hosts. It prepares the host
//     (the same SageMaker layout and sandbox as the local executor) and starts the host's
//     supervisor (supervisor.h) in <attempt_dir>/algo-K, as the local executor does, then waits
//     for it. It passes a SIGTERM on to the supervisor, and also does so when the server's
//     stop.json appears in the host's directory (the shared directory carries a stop even where
//     a signal got lost). It exits with the job's exit code (128 + signal when killed).
//     A host that cannot start writes <host_dir>/launch-error with the reason and exits 127.

namespace allot::exec {

inline constexpr char kLaunchErrorFile[] = "launch-error";

int SlurmBatchMain(int argc, char** argv);
int SlurmHostMain(int argc, char** argv);

}  // namespace allot::exec
