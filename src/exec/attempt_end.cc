#include "exec/attempt_end.h"

namespace allot::exec {

Timestamp NewestCheckpoint(const std::string& job_dir) {
  const Result<std::string> dir = JobCheckpointDir(job_dir);
  return dir.ok() ? NewestFileTime(*dir) : 0;
}

void DeliverAttemptEnd(const AttemptEnd& end, const Callbacks& callbacks,
                       const std::function<void(const std::string&)>& sync_failed) {
  const AttemptExit& exit = end.exit;
  if (!end.job_dir.empty()) {
    if (const Status synced = SyncCheckpoints(end.job_dir, end.sync_dir, end.copy_as);
        !synced.ok()) {
      sync_failed("job " + std::to_string(exit.job) + " attempt " + std::to_string(exit.attempt) +
                  ": checkpoint sync failed: " + synced.message());
    }
    const Timestamp newest = NewestCheckpoint(end.job_dir);
    if (newest > end.reported && callbacks.checkpoint) {
      callbacks.checkpoint(exit.job, exit.attempt, newest);
    }
  }
  if (callbacks.ended) callbacks.ended(exit);
}

}  // namespace allot::exec
