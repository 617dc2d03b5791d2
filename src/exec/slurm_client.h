#pragma once

// Slurm as the Slurm executor sees it: submit a batch job, signal or cancel it, list jobs,
// nodes and partitions. The interface is small on purpose, so that a slurmrestd client can
// replace the command-line one (NewSlurmCli) without touching the executor.
//
// The command-line client runs sbatch, squeue, scancel and sinfo --json with argv only
// (no shell), each under a deadline, and SLURM_CONF from the options when given. Every failure is
// a Status naming the command and what it printed on stderr.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace allot::exec {

struct SlurmJobRequest {
  std::string script_path;  // the batch script, on the shared directory
  std::string name;         // -J: the training job's name
  std::string comment;      // --comment: the Allot job id
  std::string account;      // --account: the quota share (empty: none)
  std::string partition;
  std::string constraint;               // empty: none
  std::string gres;                     // per node, e.g. "gpu:1"; empty: none
  int nodes = 1;                        // one task per node
  int cpus_per_node = 0;                // 0: Slurm's default
  std::int64_t memory_mb_per_node = 0;  // 0: Slurm's default
  std::string work_dir;                 // --chdir: the attempt directory
  std::string output;                   // -o/-e: the batch step's own output
};

// One job as squeue reports it.
struct SlurmJob {
  std::string id;
  std::string name;
  std::string comment;
  std::string state;   // RUNNING, PENDING, COMPLETED, CANCELLED, FAILED, NODE_FAIL, TIMEOUT, ...
  std::string reason;  // state_reason
  std::string nodes;   // host list notation, e.g. "n[1-3]"
  std::string work_dir;
};

struct SlurmNode {
  std::string name;
  std::string address;  // NodeAddr
  std::string state;    // IDLE, ALLOCATED, MIXED, DOWN, DRAIN, ... (with +FLAGS)
  std::vector<std::string> partitions;
  int cpus = 0;
  std::int64_t memory_mb = 0;  // RealMemory
  // Whether Slurm may place jobs on it now (not DOWN, DRAIN, FAIL, NOT_RESPONDING, ...).
  bool usable = false;
};

// Whether a job in `state` will never run again (COMPLETED, FAILED, CANCELLED, TIMEOUT,
// NODE_FAIL, PREEMPTED, BOOT_FAIL, OUT_OF_MEMORY, DEADLINE).
bool SlurmStateEnded(const std::string& state);
// PENDING, REQUEUED, ... : waits for nodes.
bool SlurmStatePending(const std::string& state);

class SlurmClient {
 public:
  virtual ~SlurmClient() = default;
  // The Slurm job id.
  virtual Result<std::string> Submit(const SlurmJobRequest& request) = 0;
  // scancel --signal=<signal> [--full] <id>.
  virtual Status Signal(const std::string& id, const std::string& signal, bool full) = 0;
  // scancel <id>.
  virtual Status Cancel(const std::string& id) = 0;
  // Every job slurmctld still holds (running, pending and recently ended).
  virtual Result<std::vector<SlurmJob>> Jobs() = 0;
  // A job from Slurm's accounting (sacct), for one that left slurmctld's memory: its state and
  // nodes. NotFound when accounting does not know it; FailedPrecondition when the cluster keeps
  // no accounting.
  virtual Result<SlurmJob> Accounting(const std::string& id) = 0;
  // FailedPrecondition when the Slurm command `program` (sbatch, squeue, ...) cannot be run.
  virtual Status CheckProgram(const std::string& program) = 0;
  // Every node with its partitions (a partition without nodes is not seen).
  virtual Result<std::vector<SlurmNode>> Nodes() = 0;
};

struct SlurmCliOptions {
  std::string slurm_conf;  // SLURM_CONF for every command; empty: the environment's
  Duration timeout = Seconds(20);
  std::string bin_dir;  // where sbatch etc. live; empty: PATH
};

std::unique_ptr<SlurmClient> NewSlurmCli(const SlurmCliOptions& options);

// The parsers behind the command-line client, public for the tests: squeue --noheader
// --format='%i|%T|%r|%N|%k|%Z' and sinfo --json. InvalidArgument for what Slurm does not write;
// sinfo's "errors" beside an empty list (it exits 0 when slurmctld does not answer) Unavailable.
Result<std::vector<SlurmJob>> ParseSqueueText(const std::string& text);
// sacct --noheader --parsable2 --allocations --format=JobID,State,NodeList: the allocation's line.
Result<SlurmJob> ParseSacctLine(const std::string& text, const std::string& id);
Result<std::vector<SlurmNode>> ParseNodesJson(const std::string& text);

}  // namespace allot::exec
