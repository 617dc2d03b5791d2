// The effects that start and stop attempts, as the controller's loop runs them.
//
// A launch can take long: it restores the job's checkpoints (a copy of gigabytes from its
// CheckpointConfig.S3Uri), gives its tree to the share's user, and reads its payload. On the
// loop, which runs every effect in commit order and ticks the engine's timers, one such launch
// held up every other launch, every stop (a preemption's reclaim too) and every timeout. So
// launches run on workers of their own (env::WorkerPool, at most kMaxLaunchWorkers at once). The
// one ordering that matters, a stop after the launch of the same attempt, is kept here: a stop
// that comes while its attempt waits or launches is passed on once the launch returned (the
// executor knows the attempt only then), and an attempt stopped before its launch began is not
// launched at all: its end is reported at once, even while its launch is held behind its
// share's others (WorkerPool's keyed tasks), so a terminate does not wait for their restores.
// The controller's rollback after a store failure waits for the launches in flight
// (RebuildIfBroken), as it waited for them when they ran on its own thread.

#include "server/controller.h"
#include "server/log.h"

namespace allot::server {

void Controller::StartLaunch(model::JobId seq, int attempt, const std::string& share) {
  {
    std::lock_guard<std::mutex> lock(launches_mu_);
    if (!launching_.emplace(LaunchKey{seq, attempt}, Launching{}).second) return;  // one each
  }
  std::string no_thread;
  if (!launch_workers_.Post(
          share, kMaxLaunchesPerShare, [this, seq, attempt] { RunLaunch(seq, attempt); },
          &no_thread)) {
    // No thread to be had: the launch runs here, as before, rather than not at all.
    log::Warn("launch.no_thread", {{"job", static_cast<std::int64_t>(seq)}, {"error", no_thread}});
    RunLaunch(seq, attempt);
  }
}

void Controller::RunLaunch(model::JobId seq, int attempt) {
  const LaunchKey key{seq, attempt};
  {
    std::lock_guard<std::mutex> lock(launches_mu_);
    const auto it = launching_.find(key);
    if (it == launching_.end()) return;  // stopped before it began: StopAttempt reported its end
    it->second.begun = true;
  }
  LaunchAttempt(seq, attempt);
  // The stops that came meanwhile, passed on before the attempt leaves launching_: a stop coming
  // after that goes to the executor itself.
  for (;;) {
    std::optional<PendingStop> stop;
    {
      std::lock_guard<std::mutex> lock(launches_mu_);
      const auto it = launching_.find(key);
      if (it != launching_.end()) std::swap(stop, it->second.stop);
      if (!stop) {
        if (it != launching_.end()) launching_.erase(it);
        return;
      }
    }
    executor_->Stop(seq, attempt, stop->grace, stop->kind);
  }
}

void Controller::StopAttempt(model::JobId seq, int attempt, Duration grace, model::StopKind kind) {
  bool held_back = false;
  {
    std::lock_guard<std::mutex> lock(launches_mu_);
    const auto it = launching_.find({seq, attempt});
    if (it != launching_.end() && it->second.begun) {
      it->second.stop = PendingStop{grace, kind};  // passed on when the launch returns
      return;
    }
    if (it != launching_.end()) {
      launching_.erase(it);  // its worker, when its turn comes, finds nothing to do
      held_back = true;
    }
  }
  if (held_back) {
    ReportNotLaunched(seq, attempt);
    return;
  }
  executor_->Stop(seq, attempt, grace, kind);
}

bool Controller::StopPending(model::JobId seq, int attempt) {
  std::lock_guard<std::mutex> lock(launches_mu_);
  const auto it = launching_.find({seq, attempt});
  return it != launching_.end() && it->second.stop.has_value();
}

bool Controller::ShuttingDown() {
  std::lock_guard<std::mutex> lock(loop_mu_);
  return stopping_;
}

void Controller::AwaitLaunches() {
  launch_workers_.AwaitIdle();  // each launch leaves launching_ before its worker ends
}

}  // namespace allot::server
