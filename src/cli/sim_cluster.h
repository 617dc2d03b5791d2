#pragma once

// The cluster file `allot apply` reads, as the simulator's quota configuration.

#include <string>

#include "cli/apply.h"
#include "sim/cluster.h"

namespace allot::cli {

// Throws CliError naming `origin` for what the simulator cannot replay (a queue without a
// scheduling policy: only quota-share queues are simulated).
sim::Cluster ToSimCluster(const ClusterSpec& spec, const std::string& origin);

}  // namespace allot::cli
