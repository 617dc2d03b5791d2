// The effects that start and stop attempts, as the controller's loop runs them.
//
// A launch can take long: it restores the job's checkpoints (a copy of gigabytes from its
// CheckpointConfig.S3Uri), gives its tree to the share's user, and reads its payload. On the
// loop, which runs every effect in commit order and ticks the engine's timers, one such launch
// held up every other launch, every stop (a preemption's reclaim too) and every timeout. So each
// launch runs on a thread of its own. The one ordering that matters, a stop after the launch of
// the same attempt, is kept here: a stop that comes while its attempt launches is passed on once
// the launch returned (the executor knows the attempt only then).

#include <system_error>
#include <thread>

#include "server/controller.h"
#include "server/log.h"

namespace allot::server {

void Controller::StartLaunch(model::JobId seq, int attempt) {
  const std::pair<model::JobId, int> key{seq, attempt};
  {
    std::lock_guard<std::mutex> lock(launches_mu_);
    launching_[key] = std::nullopt;
  }
  auto launch = [this, key] {
    LaunchAttempt(key.first, key.second);
    // The stops that came meanwhile, passed on before the attempt leaves launching_: a stop
    // coming after that goes to the executor itself, and Shutdown detaches the executor only
    // once launching_ is empty.
    for (;;) {
      std::optional<PendingStop> stop;
      {
        std::lock_guard<std::mutex> lock(launches_mu_);
        const auto it = launching_.find(key);
        if (it != launching_.end()) std::swap(stop, it->second);
        if (!stop) {
          if (it != launching_.end()) launching_.erase(it);
          launches_cv_.notify_all();  // under the lock: AwaitLaunches may destroy what it guards
          return;
        }
      }
      executor_->Stop(key.first, key.second, stop->grace, stop->kind);
    }
  };
  try {
    std::thread(launch).detach();  // AwaitLaunches waits for it
  } catch (const std::system_error& e) {
    // No thread to be had: launched here, as before, rather than not at all.
    log::Warn("launch.no_thread", {{"job", static_cast<std::int64_t>(seq)}, {"error", e.what()}});
    launch();
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

void Controller::AwaitLaunches() {
  std::unique_lock<std::mutex> lock(launches_mu_);
  launches_cv_.wait(lock, [this] { return launching_.empty(); });
}

}  // namespace allot::server
