// The effects that start and stop attempts, as the controller's loop runs them.
//
// A launch can take long: it restores the job's checkpoints (a copy of gigabytes from its
// CheckpointConfig.S3Uri), gives its tree to the share's user, and reads its payload. On the
// loop, which runs every effect in commit order and ticks the engine's timers, one such launch
// held up every other launch, every stop (a preemption's reclaim too) and every timeout. So
// launches run on workers of their own, at most kMaxLaunchWorkers at once. The one ordering that
// matters, a stop after the launch of the same attempt, is kept here: a stop that comes while
// its attempt waits or launches is passed on once the launch returned (the executor knows the
// attempt only then), and an attempt stopped before its launch began is not launched at all.
// The controller's rollback after a store failure waits for the launches in flight
// (RebuildIfBroken), as it waited for them when they ran on its own thread.

#include <exception>
#include <thread>

#include "server/controller.h"
#include "server/log.h"

namespace allot::server {
namespace {

// A few long restores hold up no other launch, and a burst of dispatches does not start a
// thread each.
constexpr int kMaxLaunchWorkers = 32;

}  // namespace

void Controller::StartLaunch(model::JobId seq, int attempt) {
  const LaunchKey key{seq, attempt};
  {
    std::lock_guard<std::mutex> lock(launches_mu_);
    if (!launching_.emplace(key, std::nullopt).second) return;  // one launch per attempt
    launch_queue_.push_back(key);
    if (launch_workers_ >= kMaxLaunchWorkers) return;  // a worker takes it when done
    ++launch_workers_;
  }
  try {
    std::thread([this] { LaunchWorker(); }).detach();  // AwaitLaunches waits for it
  } catch (const std::exception& e) {
    // No thread to be had: the queue is run here, as before, rather than not at all.
    log::Warn("launch.no_thread", {{"job", static_cast<std::int64_t>(seq)}, {"error", e.what()}});
    LaunchWorker();
  }
}

void Controller::LaunchWorker() {
  for (;;) {
    LaunchKey key;
    {
      std::lock_guard<std::mutex> lock(launches_mu_);
      if (launch_queue_.empty()) {
        --launch_workers_;
        launches_cv_.notify_all();  // under the lock: AwaitLaunches may destroy what it guards
        return;
      }
      key = launch_queue_.front();
      launch_queue_.pop_front();
    }
    LaunchAttempt(key.first, key.second);
    // The stops that came meanwhile, passed on before the attempt leaves launching_: a stop
    // coming after that goes to the executor itself.
    for (;;) {
      std::optional<PendingStop> stop;
      {
        std::lock_guard<std::mutex> lock(launches_mu_);
        const auto it = launching_.find(key);
        if (it != launching_.end()) std::swap(stop, it->second);
        if (!stop) {
          if (it != launching_.end()) launching_.erase(it);
          launches_cv_.notify_all();
          break;
        }
      }
      executor_->Stop(key.first, key.second, stop->grace, stop->kind);
    }
  }
}

void Controller::StopAttempt(model::JobId seq, int attempt, Duration grace, model::StopKind kind) {
  {
    std::lock_guard<std::mutex> lock(launches_mu_);
    const auto it = launching_.find({seq, attempt});
    if (it != launching_.end()) {
      it->second = PendingStop{grace, kind};  // passed on when the launch returns
      return;
    }
  }
  executor_->Stop(seq, attempt, grace, kind);
}

bool Controller::StopPending(model::JobId seq, int attempt) {
  std::lock_guard<std::mutex> lock(launches_mu_);
  const auto it = launching_.find({seq, attempt});
  return it != launching_.end() && it->second.has_value();
}

bool Controller::ShuttingDown() {
  std::lock_guard<std::mutex> lock(loop_mu_);
  return stopping_;
}

void Controller::AwaitLaunches() {
  std::unique_lock<std::mutex> lock(launches_mu_);
  launches_cv_.wait(lock, [this] { return launching_.empty() && launch_workers_ == 0; });
}

}  // namespace allot::server
