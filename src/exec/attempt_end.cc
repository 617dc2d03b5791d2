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

EndSyncs::~EndSyncs() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return running_ == 0; });
}

bool EndSyncs::Start(AttemptEnd end,
                     std::function<void(const AttemptEnd&, const std::string&)> deliver,
                     std::function<void(std::function<void()>)> post) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++running_;
  }
  auto sync = [this, end = std::move(end), deliver = std::move(deliver),
               post = std::move(post)]() mutable {
    const Status synced = SyncCheckpoints(end.job_dir, end.sync_dir, end.copy_as);
    end.sync_dir.clear();
    post([deliver = std::move(deliver), end = std::move(end),
          error = synced.ok() ? std::string() : synced.message()] { deliver(end, error); });
    std::lock_guard<std::mutex> lock(mu_);
    --running_;
    cv_.notify_all();  // under the lock: the destructor may run as soon as it is released
  };
  try {
    std::thread(std::move(sync)).detach();  // the destructor waits for it
    return true;
  } catch (const std::exception&) {
    std::lock_guard<std::mutex> lock(mu_);
    --running_;
    return false;
  }
}

}  // namespace allot::exec
