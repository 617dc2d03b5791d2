#include "exec/attempt_end.h"

#include <exception>
#include <thread>
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
  if (callbacks.ended) callbacks.ended(exit);
}

bool EndSyncs::Start(AttemptEnd end, std::function<void(const AttemptEnd&)> deliver,
                     std::function<void(std::function<void()>)> post) {
  const std::pair<model::JobId, int> key{end.exit.job, end.exit.attempt};
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back({std::move(end), std::move(deliver), std::move(post)});
    syncing_.insert(key);
    if (workers_ >= kMaxWorkers) return true;  // a worker takes it when done
    ++workers_;
  }
  try {
    std::thread([this] { Work(); }).detach();  // Drain() waits for it
    return true;
  } catch (const std::exception&) {
    std::lock_guard<std::mutex> lock(mu_);
    --workers_;
    if (workers_ > 0) return true;  // the others take it
    queue_.pop_back();              // none: the caller syncs it on its callback thread
    syncing_.erase(key);
    return false;
  }
}

void EndSyncs::Work() {
  for (;;) {
    Task task;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (queue_.empty()) {
        --workers_;
        cv_.notify_all();  // under the lock: Drain's caller may destroy this once it is released
        return;
      }
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    const Status synced = SyncCheckpoints(task.end.job_dir, task.end.sync_dir, task.end.copy_as);
    task.end.sync_dir.clear();
    if (!synced.ok()) task.end.sync_error = synced.message();
    const std::pair<model::JobId, int> key{task.end.exit.job, task.end.exit.attempt};
    task.post([deliver = std::move(task.deliver), end = std::move(task.end)] { deliver(end); });
    std::lock_guard<std::mutex> lock(mu_);
    syncing_.erase(key);
  }
}

bool EndSyncs::Syncing(model::JobId job, int attempt) {
  std::lock_guard<std::mutex> lock(mu_);
  return syncing_.count({job, attempt}) != 0;
}

void EndSyncs::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  for (const Task& task : queue_) syncing_.erase({task.end.exit.job, task.end.exit.attempt});
  queue_.clear();
  cv_.wait(lock, [this] { return workers_ == 0; });
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
