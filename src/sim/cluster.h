#pragma once

// The quota configuration a simulation runs under, and the policy variants derived from it
// (docs/sim.md, Policies).

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "engine/engine.h"
#include "model/config.h"

namespace allot::sim {

struct Cluster {
  std::vector<model::ServiceEnvironmentConfig> environments;
  std::vector<model::JobQueueConfig> queues;
  std::vector<model::QuotaShareConfig> shares;
};

struct Policy {
  std::string name;
  Cluster cluster;
  engine::VictimOrder victim_order = engine::VictimOrder::kLeastWorkLost;
};

// Derives a policy from `base`:
//   configured  the cluster as given, Allot's victim order
//   reserve     every share RESERVE (static partitions)
//   kueue       every share LEND_AND_BORROW (a RESERVE or LEND share borrows without limit),
//               checkpoint-blind victim order (lower priority, then most recently started)
//   allot       the same shares as kueue, Allot's checkpoint-aware victim order
// An unknown kind is an InvalidArgument naming the allowed ones.
Result<Policy> DerivePolicy(const Cluster& base, std::string_view kind);

}  // namespace allot::sim
