#include "exec/local_executor.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "exec/attempt_end.h"
#include "exec/checkpoint_scan.h"
#include "exec/host_files.h"
#include "exec/local_hosts.h"

namespace allot::exec {

const char kAlgorithmError[] = "Received status from SageMaker: AlgorithmError: ";

std::string HostName(int index) { return "algo-" + std::to_string(index); }

std::string HostFailureReason(const std::string& host, int exit_code) {
  const std::string reason = kAlgorithmError + host;
  if (exit_code < 0) return reason + " was killed by signal " + std::to_string(-exit_code);
  return reason + " exited with code " + std::to_string(exit_code);
}

std::string HostVanishedReason(const std::string& host) {
  return kAlgorithmError + ("host " + host) + " vanished without an exit status";
}

std::string JobFailureReason(const std::string& failure) { return kAlgorithmError + failure; }

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kPollIntervalMs = 50;  // for supervisors without a pidfd (kernels before 5.3)

struct Attempt {
  model::JobId job = 0;
  int attempt = 0;
  std::vector<Host> hosts;
  bool stopping = false;
  std::optional<Clock::time_point> kill_deadline;  // the earliest any Stop asked for
  std::string job_dir;                             // empty: no checkpoint reports
  std::string sync_dir;
  CopyIdentity copy_as;           // whom the checkpoint copy after the attempt runs as
  Timestamp checkpoint = 0;       // the newest checkpoint file time reported (or known at launch)
  Clock::time_point next_scan{};  // of the checkpoint directory (ScanDueCheckpoints)
};

using AttemptKey = std::pair<model::JobId, int>;

// stop.json carries what is left of the earliest deadline asked for: the supervisor may read it
// after a later Stop with a longer grace replaced it.
void BeginStop(Attempt& attempt, const std::string& reason, Duration grace) {
  attempt.stopping = true;
  const Clock::time_point now = Clock::now();
  const Clock::time_point deadline = now + std::chrono::milliseconds(std::max<Duration>(grace, 0));
  if (!attempt.kill_deadline || deadline < *attempt.kill_deadline) attempt.kill_deadline = deadline;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*attempt.kill_deadline - now);
  const StopRequest request{reason, std::max<Duration>(left.count(), 0)};
  for (Host& host : attempt.hosts) SendStop(host, request);
}

std::string ReasonFor(const Host& host) {
  const std::string failure = FailureMessage(host.output_dir);
  if (!failure.empty()) return JobFailureReason(failure);
  if (host.vanished) return HostVanishedReason(host.name);
  return HostFailureReason(host.name, host.exit_code);
}

AttemptExit MakeExit(const Attempt& attempt) {
  AttemptExit exit;
  exit.job = attempt.job;
  exit.attempt = attempt.attempt;
  exit.succeeded = true;
  const Host* first_failed = nullptr;
  const Host* first_on_its_own = nullptr;
  for (const Host& host : attempt.hosts) {
    exit.exit_codes.push_back(host.exit_code);
    if (host.exit_code == 0 && !host.vanished) continue;
    exit.succeeded = false;
    if (first_failed == nullptr) first_failed = &host;
    if (host.failed_on_its_own && first_on_its_own == nullptr) first_on_its_own = &host;
  }
  // The host that made the attempt fail is named, not one the executor stopped because of it.
  const Host* named = first_on_its_own != nullptr ? first_on_its_own : first_failed;
  if (named != nullptr) exit.reason = ReasonFor(*named);
  if (!attempt.hosts.empty()) exit.enforced_limits = attempt.hosts.front().limits;
  return exit;
}

class LocalExecutorImpl final : public Executor {
 public:
  LocalExecutorImpl(const LocalOptions& options, const LayoutOptions& layout, Callbacks callbacks)
      : options_(options), layout_(layout), callbacks_(std::move(callbacks)) {
    layout_.die_with_parent = true;
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);  // -1: the watcher polls instead
    watcher_ = std::thread([this] { WatchLoop(); });
    notifier_ = std::thread([this] { CallbackLoop(); });
  }

  ~LocalExecutorImpl() override {
    // Destroying the executor from one of its own callbacks would join the running thread.
    ALLOT_CHECK(std::this_thread::get_id() != notifier_.get_id());
    Detach();
    if (notifier_.joinable()) notifier_.join();
    for (auto& [key, attempt] : attempts_) {
      for (Host& host : attempt.hosts) CloseHost(host);
    }
    if (wake_fd_ >= 0) ::close(wake_fd_);
  }

  LocalExecutorImpl(const LocalExecutorImpl&) = delete;
  LocalExecutorImpl& operator=(const LocalExecutorImpl&) = delete;

  Status Launch(const LaunchSpec& spec) override;
  void Stop(model::JobId job, int attempt, Duration grace, model::StopKind kind) override;
  Status Adopt(const AdoptSpec& spec) override;
  void Detach() override;
  bool SandboxActive() const override { return layout_.sandbox && SandboxAvailable(layout_); }

 private:
  Status Reserve(const AttemptKey& key, const std::string& name);
  void Unreserve(const AttemptKey& key);
  void Register(Attempt attempt, std::vector<HostProcess> started);
  void WatchLoop();
  void CallbackLoop();
  void Post(std::function<void()> callback);  // requires mu_
  void WatchOnce();                           // requires mu_
  void ScanCheckpoints(std::unique_lock<std::mutex>& lock);
  void PostEnded(const Attempt& attempt);  // requires mu_
  void WakeWatcher();

  const LocalOptions options_;
  LayoutOptions layout_;
  const Callbacks callbacks_;

  std::mutex mu_;
  int wake_fd_ = -1;  // an eventfd the watcher polls along with the pidfds
  std::condition_variable callback_cv_;
  bool detached_ = false;
  std::map<AttemptKey, Attempt> attempts_;
  std::set<AttemptKey> reserved_;  // between Launch()'s or Adopt()'s check and registration
  std::deque<std::function<void()>> pending_;               // callbacks in order
  Clock::time_point next_scan_ = Clock::time_point::max();  // the earliest attempt's

  std::mutex detach_mu_;  // serializes Detach()
  std::thread watcher_;
  std::thread notifier_;
  EndSyncs syncs_;  // last: destroyed first, it waits for the syncs that post into pending_
};

Status LocalExecutorImpl::Reserve(const AttemptKey& key, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (detached_) return FailedPrecondition("the executor is detached");
  // An attempt whose end is syncing is still the executor's: a second copy would race the first.
  if (attempts_.count(key) != 0 || syncs_.Syncing(key.first, key.second) ||
      !reserved_.insert(key).second) {
    return AlreadyExists("attempt " + std::to_string(key.second) + " of job " + name +
                         " is running");
  }
  return Status::Ok();
}

void LocalExecutorImpl::Unreserve(const AttemptKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  reserved_.erase(key);
}

Status LocalExecutorImpl::Launch(const LaunchSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return InvalidArgument("job " + spec.name + ": the command is empty");
  }
  if (spec.instance_count < 1) {
    return InvalidArgument("job " + spec.name + ": the instance count must be at least 1");
  }
  if (spec.attempt_dir.empty())
    return InvalidArgument("job " + spec.name + ": no attempt directory");
  const AttemptKey key{spec.job, spec.attempt};
  ALLOT_RETURN_IF_ERROR(Reserve(key, spec.name));
  struct Unreserver {
    LocalExecutorImpl* self;
    AttemptKey key;
    ~Unreserver() { self->Unreserve(key); }
  } unreserve{this, key};

  const CopyIdentity copy_as = CopyIdentityOf(spec, layout_);
  ALLOT_RETURN_IF_ERROR(RestoreCheckpoints(spec.job_dir, spec.checkpoint_sync_dir, copy_as));
  Attempt attempt;
  attempt.job = spec.job;
  attempt.attempt = spec.attempt;
  attempt.job_dir = spec.job_dir;
  attempt.sync_dir = spec.checkpoint_sync_dir;
  attempt.copy_as = copy_as;
  if (!spec.job_dir.empty()) attempt.checkpoint = NewestCheckpoint(spec.job_dir);
  for (int k = 1; k <= spec.instance_count; ++k) {
    Result<Host> host = StartHost(spec, k, layout_);
    if (!host.ok()) {
      // The hosts already started go too: the attempt did not start.
      for (Host& started : attempt.hosts) Abandon(started);
      return host.status();
    }
    attempt.hosts.push_back(std::move(host).value());  // *host would copy: it is const
  }
  std::vector<HostProcess> processes;
  for (const Host& h : attempt.hosts) {
    processes.push_back(HostProcess{h.name, h.pid, h.start_time, h.child_pid, h.child_start_time});
  }
  Register(std::move(attempt), std::move(processes));
  return Status::Ok();
}

Status LocalExecutorImpl::Adopt(const AdoptSpec& spec) {
  const AttemptKey key{spec.job, spec.attempt};
  ALLOT_RETURN_IF_ERROR(Reserve(key, std::to_string(spec.job)));
  struct Unreserver {
    LocalExecutorImpl* self;
    AttemptKey key;
    ~Unreserver() { self->Unreserve(key); }
  } unreserve{this, key};

  Attempt attempt;
  attempt.job = spec.job;
  attempt.attempt = spec.attempt;
  attempt.job_dir = spec.job_dir;
  attempt.sync_dir = spec.checkpoint_sync_dir;
  {
    // As at launch (CopyIdentityOf): the share's user (sandboxed); this binary runs the copy,
    // within the host's limits.
    LaunchSpec as_launched;
    as_launched.user = spec.user;
    as_launched.limits = spec.limits;
    attempt.copy_as = CopyIdentityOf(as_launched, layout_);
  }
  bool any_dir = false;
  std::set<std::string> identified;  // hosts whose supervisor.json names their processes
  for (int k = 1; k <= std::max(spec.instance_count, 1); ++k) {
    Result<Host> host = AdoptHost(spec.attempt_dir, k);
    any_dir = any_dir || host.ok();
    if (host.ok()) {
      if (host->pid > 0) identified.insert(host->name);
      attempt.hosts.push_back(std::move(host).value());
      continue;
    }
    Host missing;  // a host that never started: it vanished too
    missing.name = HostName(k);
    missing.running = false;
    missing.vanished = true;
    missing.exit_code = -SIGKILL;
    attempt.hosts.push_back(std::move(missing));
  }
  // The files are gone: what the server recorded is all that names the processes left behind.
  for (const HostProcess& recorded : spec.recorded_hosts) {
    if (identified.count(recorded.host) == 0) KillRecorded(recorded);
  }
  if (!any_dir) {
    return NotFound("attempt " + std::to_string(spec.attempt) + " of job " +
                    std::to_string(spec.job) + " left nothing to adopt in '" + spec.attempt_dir +
                    "'");
  }
  for (Host& host : attempt.hosts) {
    // A host stopped by the earlier server did not fail on its own.
    const bool stopped = !host.dir.empty() && ReadStopRequest(host.dir).ok();
    attempt.stopping = attempt.stopping || stopped;
    host.stop_sent = stopped;
    host.failed_on_its_own = !host.running && !stopped && (host.exit_code != 0 || host.vanished);
  }
  Register(std::move(attempt), {});
  return Status::Ok();
}

void LocalExecutorImpl::Register(Attempt attempt, std::vector<HostProcess> started) {
  std::lock_guard<std::mutex> lock(mu_);
  const model::JobId job = attempt.job;
  const int n = attempt.attempt;
  attempts_.emplace(AttemptKey{job, n}, std::move(attempt));
  // Queued before the watcher can see the attempt, so `started` comes before `ended`.
  if (!started.empty() && callbacks_.started) {
    Post([this, job, n, processes = std::move(started)] { callbacks_.started(job, n, processes); });
  }
  WakeWatcher();
}

void LocalExecutorImpl::Stop(model::JobId job, int attempt, Duration grace, model::StopKind kind) {
  std::lock_guard<std::mutex> lock(mu_);
  if (detached_) return;
  const auto it = attempts_.find(AttemptKey{job, attempt});
  if (it == attempts_.end()) return;
  BeginStop(it->second, StopReasonWord(kind), grace);
  WakeWatcher();
}

void LocalExecutorImpl::Detach() {
  std::lock_guard<std::mutex> detach_lock(detach_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    detached_ = true;
    pending_.clear();
    callback_cv_.notify_all();
  }
  WakeWatcher();
  if (watcher_.joinable()) watcher_.join();
  syncs_.Drain();  // the watcher, which starts them, is gone
  // From a callback the callback thread ends when the callback returns; the destructor joins it.
  if (notifier_.joinable() && std::this_thread::get_id() != notifier_.get_id()) notifier_.join();
}

void LocalExecutorImpl::WakeWatcher() {
  if (wake_fd_ < 0) return;
  const std::uint64_t one = 1;
  // EAGAIN: the counter is saturated, the watcher wakes anyway.
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

void LocalExecutorImpl::Post(std::function<void()> callback) {
  pending_.push_back(std::move(callback));
  callback_cv_.notify_all();
}

void LocalExecutorImpl::PostEnded(const Attempt& attempt) {
  // A sync of gigabytes runs on a worker of its own (EndSyncs), not on the callback thread.
  PostAttemptEnd(
      {MakeExit(attempt), attempt.job_dir, attempt.sync_dir, attempt.copy_as, attempt.checkpoint},
      syncs_, callbacks_,
      [](const std::string& why) { std::fprintf(stderr, "allot: %s\n", why.c_str()); }, mu_,
      [this](std::function<void()> callback) { Post(std::move(callback)); });
}

void LocalExecutorImpl::WatchOnce() {
  for (auto it = attempts_.begin(); it != attempts_.end();) {
    Attempt& attempt = it->second;
    bool all_gone = true;
    for (Host& host : attempt.hosts) {
      const bool was_running = host.running;
      all_gone = CheckGone(host) && all_gone;
      if (was_running && !host.running && !attempt.stopping &&
          (host.exit_code != 0 || host.vanished)) {
        host.failed_on_its_own = true;
      }
    }
    if (all_gone) {
      PostEnded(attempt);
      it = attempts_.erase(it);
      continue;
    }
    const bool failed = std::any_of(attempt.hosts.begin(), attempt.hosts.end(),
                                    [](const Host& h) { return h.failed_on_its_own; });
    if (failed && !attempt.stopping) {
      BeginStop(attempt, "termination", options_.failure_grace);
    }
    ++it;
  }
}

void LocalExecutorImpl::ScanCheckpoints(std::unique_lock<std::mutex>& lock) {
  next_scan_ = ScanDueCheckpoints(
      attempts_, lock, [](const Attempt&) { return true; },
      [this](const AttemptKey& key, Timestamp time) {
        if (!callbacks_.checkpoint) return;
        Post([this, key, time] { callbacks_.checkpoint(key.first, key.second, time); });
      });
}

void LocalExecutorImpl::WatchLoop() {
  std::vector<pollfd> fds;
  std::unique_lock<std::mutex> lock(mu_);
  while (!detached_) {
    WatchOnce();
    ScanCheckpoints(lock);
    if (detached_) break;
    // Sleep until a supervisor exits (its pidfd), Launch/Adopt/Stop/Detach write the eventfd,
    // or the next checkpoint scan is due.
    fds.clear();
    bool must_poll = wake_fd_ < 0;
    const bool scan = next_scan_ != Clock::time_point::max();
    if (wake_fd_ >= 0) fds.push_back(pollfd{wake_fd_, POLLIN, 0});
    for (const auto& [key, attempt] : attempts_) {
      for (const Host& host : attempt.hosts) {
        if (!host.running) continue;
        if (host.pidfd >= 0) {
          fds.push_back(pollfd{host.pidfd, POLLIN, 0});
        } else {
          must_poll = true;
        }
      }
    }
    int timeout_ms = must_poll ? kPollIntervalMs : -1;
    if (scan) {
      const auto until = std::chrono::ceil<std::chrono::milliseconds>(next_scan_ - Clock::now());
      const int scan_ms = static_cast<int>(std::clamp<std::int64_t>(until.count(), 0, 60'000));
      timeout_ms = timeout_ms < 0 ? scan_ms : std::min(timeout_ms, scan_ms);
    }
    lock.unlock();
    ::poll(fds.data(), fds.size(), timeout_ms);
    if (wake_fd_ >= 0) {
      std::uint64_t count = 0;
      [[maybe_unused]] const ssize_t n = ::read(wake_fd_, &count, sizeof count);
    }
    lock.lock();
  }
}

void LocalExecutorImpl::CallbackLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    callback_cv_.wait(lock, [this] { return detached_ || !pending_.empty(); });
    if (detached_) return;
    std::function<void()> callback = std::move(pending_.front());
    pending_.pop_front();
    lock.unlock();
    callback();
    lock.lock();
  }
}

}  // namespace

std::unique_ptr<Executor> NewLocalExecutor(const LocalOptions& options, const LayoutOptions& layout,
                                           Callbacks callbacks) {
  return std::make_unique<LocalExecutorImpl>(options, layout, std::move(callbacks));
}

std::unique_ptr<Executor> NewLocalExecutor(const LocalOptions& options, Callbacks callbacks) {
  return NewLocalExecutor(options, LayoutOptions{}, std::move(callbacks));
}

}  // namespace allot::exec
