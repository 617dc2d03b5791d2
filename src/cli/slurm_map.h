#pragma once

// `allot server --executor slurm --slurm-map FILE`: where each instance type runs on Slurm. One
// instance is one node of the partition:
//
//   ml.g5.xlarge:    {partition: gpu, gres: "gpu:1", cpus: 4, memory: 16G}
//   ml.p4d.24xlarge: {partition: gpu, constraint: a100, gres: "gpu:8", cpus: 96, memory: 1T}
//   ml.m5.large:     {partition: cpu}        # cpus, memory, gres, constraint are optional
//
// cpus and memory are per node (sbatch --cpus-per-task, --mem); memory takes the sizes of
// --job-memory-limit (16G, 512M, ...).

#include <map>
#include <string>

#include "exec/slurm_executor.h"

namespace allot::cli {

// Throws std::runtime_error naming the entry and field at fault (an unknown field, a missing
// partition, a bad size).
std::map<std::string, exec::SlurmPlacement> ReadSlurmMap(const std::string& path);

}  // namespace allot::cli
