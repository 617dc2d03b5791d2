#pragma once

// What every executor does when an attempt's last host is gone, from its callback thread: copy
// the job's checkpoint directory to CheckpointConfig.S3Uri, report a last `checkpoint` if the
// newest file time moved, then `ended`. Shared by the local and the Slurm executor.

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

#include "common/time.h"
#include "exec/executor.h"
#include "exec/sagemaker_layout.h"

namespace allot::exec {

// The newest file time under the job's checkpoint directory (epoch ms), 0 if none.
Timestamp NewestCheckpoint(const std::string& job_dir);

struct AttemptEnd {
  AttemptExit exit;
  std::string job_dir;  // empty: no checkpoints to sync or report
  std::string sync_dir;
  CopyIdentity copy_as;
  Timestamp reported = 0;  // the newest checkpoint time already reported
};

// Syncs, reports the last checkpoint and the end. A failed sync leaves the copy behind: the
// attempt's outcome stands, and `sync_failed` is told why (for the log).
void DeliverAttemptEnd(const AttemptEnd& end, const Callbacks& callbacks,
                       const std::function<void(const std::string&)>& sync_failed);

// The checkpoint syncs of ended attempts, each on a thread of its own: on the executor's callback
// thread a copy of gigabytes held up every other attempt's reports (its start, its end: the
// capacity a reclaim waits for) until it was done.
class EndSyncs {
 public:
  EndSyncs() = default;
  ~EndSyncs();  // waits for the syncs in flight: `post` must outlive them
  EndSyncs(const EndSyncs&) = delete;
  EndSyncs& operator=(const EndSyncs&) = delete;

  // Syncs `end` (its sync_dir set) on a thread of its own, then hands `post` the delivery:
  // `deliver` with the end, its sync_dir cleared (nothing to copy again), and why the sync
  // failed, or "". `post` takes the executor's lock itself. False where no thread could be had:
  // the caller then delivers as before, syncing on its callback thread.
  bool Start(AttemptEnd end, std::function<void(const AttemptEnd&, const std::string&)> deliver,
             std::function<void(std::function<void()>)> post);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int running_ = 0;
};

}  // namespace allot::exec
