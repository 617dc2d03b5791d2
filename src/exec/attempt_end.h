#pragma once

// What every executor does when an attempt's last host is gone: copy the job's checkpoint
// directory to CheckpointConfig.S3Uri (on a sync worker, EndSyncs), then, from its callback
// thread, report a last `checkpoint` if the newest file time moved, then `ended`. Shared by the
// local and the Slurm executor.

#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "common/time.h"
#include "env/worker_pool.h"
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
  std::string sync_error;  // why the sync before the delivery failed (EndSyncs), or empty
};

// Syncs, reports the last checkpoint and the end. A failed sync leaves the copy behind: the
// attempt's outcome stands, and `sync_failed` is told why (for the log).
void DeliverAttemptEnd(const AttemptEnd& end, const Callbacks& callbacks,
                       const std::function<void(const std::string&)>& sync_failed);

// The checkpoint syncs of ended attempts, beside the executor's callback thread: there a copy of
// gigabytes held up every other attempt's reports (its start, its end: the capacity a reclaim
// waits for) until it was done. At most kMaxWorkers copy at once; more wait their turn.
class EndSyncs {
 public:
  static constexpr int kMaxWorkers = 8;
  // Of one share's user at once: a team whose attempts leave huge trees holds up its own syncs,
  // not every team's. The rest wait in order; each of its syncs that ends hands its next one to
  // the pool's tail, behind the other users' syncs that came meanwhile.
  static constexpr int kMaxPerUser = 2;

  EndSyncs() = default;
  ~EndSyncs() { Drain(); }  // `post` must outlive the syncs
  EndSyncs(const EndSyncs&) = delete;
  EndSyncs& operator=(const EndSyncs&) = delete;

  // Syncs `end` (its sync_dir set) on a worker, then hands `post` the delivery: `deliver` with
  // the end, its sync_dir cleared (nothing to copy again) and its sync_error set.
  // `post` takes the executor's lock itself. False where no worker could be had: the caller
  // then delivers as before, syncing on its callback thread.
  bool Start(AttemptEnd end, std::function<void(const AttemptEnd&)> deliver,
             std::function<void(std::function<void()>)> post);
  // Whether the attempt's sync is queued or running, until its delivery is posted: an adoption
  // of the attempt meanwhile (a rollback's) must not start a second copy into the same place.
  bool Syncing(model::JobId job, int attempt);
  // Drops the syncs not begun (a restart's recovery syncs those attempts again, as it did the
  // ends an executor had queued when it was detached) and waits for those running: an
  // executor's Detach, once nothing starts new ones, so that no copy outlives the server's hold
  // on its data directory.
  void Drain();

 private:
  struct Task {
    AttemptEnd end;
    std::function<void(const AttemptEnd&)> deliver;
    std::function<void(std::function<void()>)> post;
  };
  // Syncs on a worker, then posts the delivery.
  void Sync(Task task);

  std::mutex mu_;
  std::set<std::pair<model::JobId, int>> syncing_;  // guarded by mu_
  env::WorkerPool workers_{kMaxWorkers};            // last: it ends first, waiting for the syncs
};

// An executor's PostEnded, called holding its lock `mu`: the end's sync on a worker of `syncs`
// where it has one, then its delivery (DeliverAttemptEnd) on the callback thread; else the
// delivery at once, syncing there. `post` queues a callback for the callback thread and needs
// `mu` held (a worker takes it first). `mu` outlives `syncs`.
void PostAttemptEnd(AttemptEnd end, EndSyncs& syncs, const Callbacks& callbacks,
                    std::function<void(const std::string&)> sync_failed, std::mutex& mu,
                    const std::function<void(std::function<void()>)>& post);

}  // namespace allot::exec
