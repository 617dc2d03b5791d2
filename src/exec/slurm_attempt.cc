#include "exec/slurm_attempt.h"

#include <algorithm>
#include <set>
#include <string>

#include "common/strings.h"
#include "env/files.h"
#include "exec/host_files.h"
#include "exec/local_executor.h"
#include "exec/slurm_node.h"

namespace allot::exec {

namespace {

std::string HostLabel(const SlurmAttempt& attempt, std::size_t index) {
  const std::string name = HostName(static_cast<int>(index) + 1);
  const std::string& node = attempt.hosts[index].node;
  return node.empty() ? name : name + " (node " + node + ")";
}

// The last line of a small text file, at most 300 characters; empty if none.
std::string LastLine(const std::string& path) {
  const std::string text = ReadText(path);
  std::string last(text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1));
  if (last.size() > 300) last = last.substr(0, 300) + "...";
  return last;
}

// Why a host that left no exit status is gone, from what Slurm says of the job.
std::string MissingHostReason(const SlurmAttempt& attempt, std::size_t index) {
  const std::string base(Split(attempt.state, '+').front());
  const std::string job = "Slurm job " + attempt.slurm_id;
  const std::string node = attempt.hosts[index].node;
  if (base == "NODE_FAIL" || base == "BOOT_FAIL") {
    return kPlatformError + job + " ended with " + base + (node.empty() ? "" : " on " + node);
  }
  if (base == "CANCELLED") {
    return kPlatformError + job + " was cancelled outside Allot (scancel)";
  }
  if (base == "TIMEOUT" || base == "DEADLINE" || base == "PREEMPTED" || base == "OUT_OF_MEMORY") {
    return kPlatformError + job + " ended with " + base + " (Slurm's own limit)";
  }
  if (base.empty()) {
    return kPlatformError + job + " is no longer known to Slurm and " + HostLabel(attempt, index) +
           " left no exit status";
  }
  std::string reason = kPlatformError + job + " ended " + base + " and " +
                       HostLabel(attempt, index) + " left no exit status";
  // What the batch step said (srun's own errors: a missing program on a node, a failed launch).
  const std::string said = LastLine(attempt.attempt_dir + "/slurm-" + attempt.slurm_id + ".out");
  return said.empty() ? reason : reason + " (the batch step said: " + said + ")";
}

}  // namespace

std::string ReadText(const std::string& path) {
  Result<std::string> text = env::ReadFile(path);
  return text.ok() ? std::string(Trim(*text)) : std::string();
}

// Reads what the hosts left: status, launch error, supervisor record.
void RefreshHosts(SlurmAttempt& attempt) {
  for (SlurmHost& host : attempt.hosts) {
    if (host.exit_code) continue;
    if (Result<HostStatus> status = ReadHostStatus(host.dir); status.ok()) {
      host.exit_code = status->exit_code;
    }
    if (host.output_dir.empty()) {
      if (Result<SupervisorRecord> record = ReadSupervisorRecord(host.dir); record.ok()) {
        host.output_dir = record->output_dir;
        host.limits = record->limits;
      }
    }
    if (host.launch_error.empty()) {
      host.launch_error = ReadText(host.dir + "/" + kLaunchErrorFile);
      if (!host.launch_error.empty()) host.exit_code = 127;
    }
  }
}

// Pending reasons that no wait cures: the request exceeds what the partition, its nodes or the
// account allow. Such a job is cancelled and its attempt fails with the reason, instead of
// holding its quota while SCHEDULED forever.
bool HopelessPendingReason(const std::string& reason) {
  static const std::set<std::string> kHopeless = {
      "PartitionConfig",   "PartitionNodeLimit", "PartitionTimeLimit",
      "BadConstraints",    "InvalidAccount",     "InvalidQOS",
      "AccountNotAllowed", "QOSNotAllowed",      "DependencyNeverSatisfied"};
  return kHopeless.count(reason) != 0;
}

// Whether Slurm, not the job nor Allot, ended the job: a node failed, a Slurm limit, or a
// scancel Allot did not send.
bool SlurmEndedIt(const SlurmAttempt& attempt) {
  const std::string base(Split(attempt.state, '+').front());
  if (base == "CANCELLED") return !attempt.signalled && !attempt.cancelled;
  return base == "NODE_FAIL" || base == "BOOT_FAIL" || base == "TIMEOUT" || base == "DEADLINE" ||
         base == "PREEMPTED" || base == "OUT_OF_MEMORY";
}

AttemptExit MakeSlurmExit(const SlurmAttempt& attempt) {
  AttemptExit exit;
  exit.job = attempt.job;
  exit.attempt = attempt.attempt;
  exit.succeeded = true;
  std::optional<std::size_t> first_failed;
  std::optional<std::size_t> first_on_its_own;
  for (std::size_t i = 0; i < attempt.hosts.size(); ++i) {
    const SlurmHost& host = attempt.hosts[i];
    const int code = host.exit_code.value_or(-9);
    exit.exit_codes.push_back(code);
    if (host.exit_code && code == 0) continue;
    exit.succeeded = false;
    if (!first_failed) first_failed = i;
    if (host.failed_on_its_own && !first_on_its_own) first_on_its_own = i;
  }
  const std::optional<std::size_t> named = first_on_its_own ? first_on_its_own : first_failed;
  // Slurm ended it on its own (a node failed, an operator's scancel, a time limit): that is the
  // reason, whatever the hosts said as they were killed.
  if (named && !attempt.hopeless.empty() && !attempt.stopping) {
    exit.reason = kPlatformError + ("Slurm cannot run job " + attempt.slurm_id +
                                    ": it waited with reason " + attempt.hopeless +
                                    " (the request exceeds what the partition or account "
                                    "allows; see --slurm-map)");
  } else if (named && !attempt.failed_node.empty() && !attempt.stopping) {
    exit.reason = kPlatformError + ("Slurm job " + attempt.slurm_id + " ended " +
                                    std::string(Split(attempt.state, '+').front()) + ": node " +
                                    attempt.failed_node + " stopped responding (NODE_FAIL on " +
                                    attempt.failed_node + ")");
  } else if (named && SlurmEndedIt(attempt)) {
    std::size_t missing = *named;
    for (std::size_t i = 0; i < attempt.hosts.size(); ++i) {
      if (!attempt.hosts[i].exit_code) {
        missing = i;
        break;
      }
    }
    exit.reason = MissingHostReason(attempt, missing);
  } else if (named) {
    const SlurmHost& host = attempt.hosts[*named];
    const std::string failure = host.output_dir.empty() ? "" : FailureMessage(host.output_dir);
    if (!host.launch_error.empty()) {
      exit.reason = kPlatformError + host.launch_error;
    } else if (!failure.empty()) {
      exit.reason = JobFailureReason(failure);
    } else if (host.exit_code) {
      exit.reason = HostFailureReason(HostName(static_cast<int>(*named) + 1), *host.exit_code);
    } else if (attempt.stopping && attempt.started) {
      exit.reason = HostFailureReason(HostName(static_cast<int>(*named) + 1), -9);
    } else if (attempt.stopping) {
      exit.reason = std::string(kPlatformError) + "stopped before Slurm started it";
    } else {
      exit.reason = MissingHostReason(attempt, *named);
    }
  }
  if (!attempt.hosts.empty()) exit.enforced_limits = attempt.hosts.front().limits;
  return exit;
}

}  // namespace allot::exec
