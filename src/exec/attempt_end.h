#pragma once

// What every executor does when an attempt's last host is gone, from its callback thread: copy
// the job's checkpoint directory to CheckpointConfig.S3Uri, report a last `checkpoint` if the
// newest file time moved, then `ended`. Shared by the local and the Slurm executor.

#include <functional>
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

}  // namespace allot::exec
