#pragma once

// What the Slurm executor hands to the nodes of an attempt: <attempt_dir>/launch.json (mode 0600,
// root's) on the shared directory, read by `allot __slurmbatch` and `allot __slurmhost`
// (slurm_node.h). It carries the LaunchSpec (without host names: a node learns them from
// SLURM_JOB_NODELIST), whether the sandbox is on, and the nodes' addresses for the sandbox's
// /etc/hosts.

#include <map>
#include <string>

#include "common/status.h"
#include "exec/executor.h"

namespace allot::exec {

inline constexpr char kLaunchFile[] = "launch.json";
inline constexpr char kBatchScript[] = "batch.sh";
inline constexpr char kSlurmJobIdFile[] = "slurm-job-id";

struct SlurmLaunch {
  LaunchSpec spec;
  bool sandbox = true;
  std::string srun = "srun";                          // the srun program the batch step runs
  std::map<std::string, std::string> node_addresses;  // node name -> NodeAddr
};

Status WriteSlurmLaunch(const std::string& path, const SlurmLaunch& launch);
Result<SlurmLaunch> ReadSlurmLaunch(const std::string& path);

}  // namespace allot::exec
