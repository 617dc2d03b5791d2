#include "exec/attempt_end.h"

#include <utility>

namespace allot::exec {

Timestamp NewestCheckpoint(const std::string& job_dir) {
  const Result<std::string> dir = JobCheckpointDir(job_dir);
  return dir.ok() ? NewestFileTime(*dir) : 0;
}

void DeliverAttemptEnd(const AttemptEnd& end, const Callbacks& callbacks,
                       const std::function<void(const std::string&)>& sync_failed) {
  const AttemptExit& exit = end.exit;
  std::string sync_error = end.sync_error;  // a worker's sync (EndSyncs), or the one here
  if (!end.job_dir.empty()) {
    if (const Status synced = SyncCheckpoints(end.job_dir, end.sync_dir, end.copy_as);
        !synced.ok()) {
      sync_error = synced.message();
    }
  }
  if (!sync_error.empty()) {
    sync_failed("job " + std::to_string(exit.job) + " attempt " + std::to_string(exit.attempt) +
                ": checkpoint sync failed: " + sync_error);
  }
  if (!end.job_dir.empty()) {
    const Timestamp newest = NewestCheckpoint(end.job_dir);
    if (newest > end.reported && callbacks.checkpoint) {
      callbacks.checkpoint(exit.job, exit.attempt, newest);
    }
  }
  if (!callbacks.ended) return;
  AttemptExit ended = exit;
  ended.checkpoint_error = sync_error;  // empty when the checkpoints were saved
  callbacks.ended(ended);
}

namespace {

// The share's user, whose syncs are counted together; none without the sandbox: one trusted
// user, whose syncs take any worker.
std::string SyncKey(const AttemptEnd& end) {
  return end.copy_as.user ? "uid " + std::to_string(end.copy_as.user->uid) : std::string();
}

}  // namespace

bool EndSyncs::Start(AttemptEnd end, std::function<void(const AttemptEnd&)> deliver,
                     std::function<void(std::function<void()>)> post) {
  const std::pair<model::JobId, int> key{end.exit.job, end.exit.attempt};
  std::string user = SyncKey(end);
  {
    std::lock_guard<std::mutex> lock(mu_);
    syncing_.insert(key);
  }
  if (workers_.Post(std::move(user), kMaxPerUser,
                    [this, task = Task{std::move(end), std::move(deliver),
                                       std::move(post)}]() mutable { Sync(std::move(task)); })) {
    return true;
  }
  std::lock_guard<std::mutex> lock(mu_);  // no worker: the caller syncs it on its callback thread
  syncing_.erase(key);
  return false;
}

void EndSyncs::Sync(Task task) {
  AttemptEnd& end = task.end;
  const Status synced = SyncCheckpoints(end.job_dir, end.sync_dir, end.copy_as);
  end.sync_dir.clear();
  if (!synced.ok()) end.sync_error = synced.message();
  const std::pair<model::JobId, int> key{end.exit.job, end.exit.attempt};
  task.post([deliver = std::move(task.deliver), done = std::move(end)] { deliver(done); });
  std::lock_guard<std::mutex> lock(mu_);
  syncing_.erase(key);
}

bool EndSyncs::Syncing(model::JobId job, int attempt) {
  std::lock_guard<std::mutex> lock(mu_);
  return syncing_.count({job, attempt}) != 0;
}

void EndSyncs::Drain() {
  workers_.Drain();
  std::lock_guard<std::mutex> lock(mu_);
  syncing_.clear();  // what is left are the syncs dropped before they began (held ones too)
}

void PostAttemptEnd(AttemptEnd end, EndSyncs& syncs, const Callbacks& callbacks,
                    std::function<void(const std::string&)> sync_failed, std::mutex& mu,
                    const std::function<void(std::function<void()>)>& post) {
  auto deliver = [&callbacks, sync_failed = std::move(sync_failed)](const AttemptEnd& e) {
    DeliverAttemptEnd(e, callbacks, sync_failed);
  };
  if (!end.job_dir.empty() && !end.sync_dir.empty() &&
      syncs.Start(end, deliver, [&mu, post](std::function<void()> delivery) {
        std::lock_guard<std::mutex> lock(mu);  // a worker holds no lock
        post(std::move(delivery));
      })) {
    return;
  }
  post([deliver, end = std::move(end)] { deliver(end); });  // the caller holds mu
}

}  // namespace allot::exec
