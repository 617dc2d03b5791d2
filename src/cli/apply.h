#pragma once

// `allot apply -f FILE`: a YAML file that lists service environments, scheduling policies, job
// queues and quota shares, in fields that mirror the AWS Batch API:
//
//   serviceEnvironments:
//     - name: local-gpus
//       capacityLimits: [{capacityUnit: ml.g5.xlarge, maxCapacity: 3}]
//       state: ENABLED                      # optional
//   schedulingPolicies:
//     - name: teams                         # quotaSharePolicy FIFO is implied
//   jobQueues:
//     - name: training
//       serviceEnvironment: local-gpus
//       schedulingPolicy: teams             # name or ARN; optional (a plain FIFO queue)
//       priority: 1
//       state: ENABLED                      # optional
//       jobStateTimeLimitActions: [...]     # optional, as in CreateJobQueue
//   quotaShares:
//     - name: team-a
//       jobQueue: training
//       capacityLimits: [{capacityUnit: ml.g5.xlarge, maxCapacity: 1}]
//       strategy: LEND_AND_BORROW           # RESERVE | LEND | LEND_AND_BORROW
//       borrowLimit: 200                    # percent, -1 = unlimited; LEND_AND_BORROW only
//       inSharePreemption: true
//       state: ENABLED                      # optional
//
// Each object is looked up first (Describe/List): what is missing is created, what differs is
// updated, the rest is reported "unchanged", so applying the same file twice changes nothing.
// A field left out of the file takes the API default when the object is created and is left
// as it is when the object already exists. Nothing that is absent from the file is deleted.

#include <ostream>
#include <string>
#include <vector>

#include "cli/client.h"

namespace allot::cli {

// The file, checked and normalized (every list present, every entry with the fields above).
struct ClusterSpec {
  std::vector<Json> service_environments;
  std::vector<Json> scheduling_policies;
  std::vector<Json> job_queues;
  std::vector<Json> quota_shares;
};

// Throws CliError naming `origin`, the entry and the field for anything malformed.
ClusterSpec ParseClusterSpec(const std::string& yaml_text, const std::string& origin);
ClusterSpec LoadClusterSpec(const std::string& path);

struct ApplyCounts {
  int created = 0;
  int updated = 0;
  int unchanged = 0;
};

// Warnings about the configuration the file leaves on the server (the file's objects over the
// server's): per job queue and capacity unit, quota-share limits that add up to more than the
// service environment's capacity, so that the shares cannot all use their quota at once.
std::vector<std::string> CapacityWarnings(Client& client, const ClusterSpec& spec);

// Makes the server match `spec`, one line per object on `out` ("jobQueue training: created").
// The whole file is checked against the server first: if any object would be refused (a queue
// or policy it names exists nowhere, a queue's environment differs), nothing is changed and
// CliError lists every problem. With dry_run nothing is changed and the lines say what would be
// done. Capacity warnings (CapacityWarnings) come first, as "warning: ..." lines.
ApplyCounts ApplySpec(Client& client, const ClusterSpec& spec, std::ostream& out,
                      bool dry_run = false);

}  // namespace allot::cli
