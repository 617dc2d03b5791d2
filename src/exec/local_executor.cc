#include "exec/local_executor.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "exec/spawn.h"

namespace allot::exec {

std::string HostName(int index) { return "algo-" + std::to_string(index); }

std::string HostsJson(int count) {
  std::string json = "[";
  for (int k = 1; k <= count; ++k) {
    if (k > 1) json += ",";
    json += "\"" + HostName(k) + "\"";
  }
  return json + "]";
}

std::string HostFailureReason(const std::string& host, int exit_code) {
  std::string reason = "Received status from SageMaker: AlgorithmError: " + host;
  if (exit_code < 0) return reason + " was killed by signal " + std::to_string(-exit_code);
  return reason + " exited with code " + std::to_string(exit_code);
}

namespace {

using Clock = std::chrono::steady_clock;

// How often the reaper looks at children it has no pidfd for (kernels before 5.3).
constexpr int kPollIntervalMs = 5;

// A descriptor that becomes readable when the process exits, or -1 where the kernel has none.
int OpenPidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd >= 0) return static_cast<int>(fd);  // close-on-exec, as every pidfd
#else
  (void)pid;
#endif
  return -1;
}

struct Host {
  std::string name;
  pid_t pid = 0;
  bool running = true;
  bool term_sent = false;
  bool kill_sent = false;
  int exit_code = 0;
  bool failed_on_its_own = false;  // failed before the executor began stopping the attempt
  int pidfd = -1;                  // owned by the reaper once the attempt is registered
};

struct Attempt {
  model::JobId job = 0;
  int attempt = 0;
  std::vector<Host> hosts;
  bool stopping = false;
  std::optional<Clock::time_point> kill_deadline;
};

using AttemptKey = std::pair<model::JobId, int>;

// Signals host's process group; only called while its leader is not reaped, so the group id cannot
// have been recycled.
void SignalGroup(const Host& host, int sig) {
  if (host.running) ::kill(-host.pid, sig);
}

Clock::time_point DeadlineAfter(Duration grace) {
  return Clock::now() + std::chrono::milliseconds(std::max<Duration>(grace, 0));
}

// SIGKILL immediately after the TERM for grace <= 0; then the reaper finishes it.
void BeginStop(Attempt& attempt, Duration grace) {
  attempt.stopping = true;
  for (Host& host : attempt.hosts) {
    if (host.running && !host.term_sent) {
      SignalGroup(host, SIGTERM);
      host.term_sent = true;
    }
  }
  const Clock::time_point deadline = DeadlineAfter(grace);
  if (!attempt.kill_deadline || deadline < *attempt.kill_deadline) attempt.kill_deadline = deadline;
}

int ExitCodeOf(const siginfo_t& info) {
  switch (info.si_code) {
    case CLD_EXITED:
      return info.si_status;
    case CLD_KILLED:
    case CLD_DUMPED:
      return -info.si_status;
    default:
      return -SIGKILL;  // not an exit: unexpected with WEXITED
  }
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
    if (host.exit_code == 0) continue;
    exit.succeeded = false;
    if (first_failed == nullptr) first_failed = &host;
    if (host.failed_on_its_own && first_on_its_own == nullptr) first_on_its_own = &host;
  }
  // The host that made the attempt fail is named, not one the executor stopped because of it.
  const Host* named = first_on_its_own != nullptr ? first_on_its_own : first_failed;
  if (named != nullptr) exit.reason = HostFailureReason(named->name, named->exit_code);
  return exit;
}

class LocalExecutorImpl final : public Executor {
 public:
  LocalExecutorImpl(const LocalOptions& options, Callbacks callbacks)
      : options_(options), callbacks_(std::move(callbacks)) {
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);  // -1: the reaper polls instead
    reaper_ = std::thread([this] { ReaperLoop(); });
    notifier_ = std::thread([this] { CallbackLoop(); });
  }

  ~LocalExecutorImpl() override {
    // Destroying the executor from one of its own callbacks would join the running thread.
    ALLOT_CHECK(std::this_thread::get_id() != notifier_.get_id());
    Detach();
    if (notifier_.joinable()) notifier_.join();
    for (auto& [key, attempt] : attempts_) {
      for (Host& host : attempt.hosts) {
        if (host.pidfd >= 0) ::close(host.pidfd);
      }
    }
    if (wake_fd_ >= 0) ::close(wake_fd_);
  }

  LocalExecutorImpl(const LocalExecutorImpl&) = delete;
  LocalExecutorImpl& operator=(const LocalExecutorImpl&) = delete;

  Status Launch(const LaunchSpec& spec) override;
  void Stop(model::JobId job, int attempt, Duration grace) override;
  void Detach() override;

 private:
  void ReaperLoop();
  void CallbackLoop();
  void Post(std::function<void()> callback);  // requires mu_
  void ReapOnce();                            // requires mu_
  void WakeReaper();

  const LocalOptions options_;
  const Callbacks callbacks_;

  std::mutex mu_;
  int wake_fd_ = -1;  // an eventfd the reaper polls along with the pidfds
  std::condition_variable callback_cv_;
  bool detached_ = false;
  std::map<AttemptKey, Attempt> attempts_;
  std::set<AttemptKey> launching_;  // between Launch()'s check and its registration
  std::deque<std::function<void()>> pending_;  // callbacks in order

  std::mutex detach_mu_;  // serializes Detach()
  std::thread reaper_;
  std::thread notifier_;
};

Status LocalExecutorImpl::Launch(const LaunchSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return InvalidArgument("job " + spec.name + ": the command is empty");
  }
  if (spec.instance_count < 1) {
    return InvalidArgument("job " + spec.name + ": the instance count must be at least 1");
  }
  if (spec.attempt_dir.empty()) return InvalidArgument("job " + spec.name + ": no attempt directory");
  const AttemptKey key{spec.job, spec.attempt};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (detached_) return FailedPrecondition("the executor is detached");
    if (attempts_.count(key) != 0 || !launching_.insert(key).second) {
      return AlreadyExists("attempt " + std::to_string(spec.attempt) + " of job " + spec.name +
                           " is running");
    }
  }

  struct Unreserve {
    LocalExecutorImpl* self;
    AttemptKey key;
    ~Unreserve() {
      std::lock_guard<std::mutex> lock(self->mu_);
      self->launching_.erase(key);
    }
  } unreserve{this, key};

  const std::filesystem::path dir(spec.attempt_dir);
  std::vector<std::string> hosts;
  for (int k = 1; k <= spec.instance_count; ++k) {
    hosts.push_back(HostName(k));
    std::error_code error;
    std::filesystem::create_directories(dir / hosts.back(), error);
    if (error) {
      return Internal("cannot create '" + (dir / hosts.back()).string() + "': " + error.message());
    }
  }

  SpawnRequest request;
  request.argv = spec.argv;
  request.environment = CurrentEnvironment();
  for (const auto& [name, value] : spec.environment) request.environment[name] = value;
  request.environment["SM_HOSTS"] = HostsJson(spec.instance_count);

  Attempt attempt;
  attempt.job = spec.job;
  attempt.attempt = spec.attempt;
  for (const std::string& host : hosts) {
    request.environment["SM_CURRENT_HOST"] = host;
    request.stdout_path = (dir / host / "stdout").string();
    request.stderr_path = (dir / host / "stderr").string();
    Result<pid_t> pid = SpawnProcess(request);
    if (!pid.ok()) {
      // The hosts already started go too: the attempt did not start.
      for (const Host& started : attempt.hosts) ::kill(-started.pid, SIGKILL);
      for (const Host& started : attempt.hosts) {
        int wstatus = 0;
        while (::waitpid(started.pid, &wstatus, 0) < 0 && errno == EINTR) {
        }
      }
      // An exec failure is the same on every host: its message stands alone.
      if (pid.status().code() == StatusCode::kInvalidArgument) return pid.status();
      return Status(pid.status().code(), host + ": " + pid.status().message());
    }
    Host h;
    h.name = host;
    h.pid = *pid;
    attempt.hosts.push_back(std::move(h));
  }

  std::vector<HostProcess> processes;
  for (Host& h : attempt.hosts) {
    processes.push_back(HostProcess{h.name, h.pid});
    h.pidfd = OpenPidfd(h.pid);
  }
  std::lock_guard<std::mutex> lock(mu_);
  attempts_.emplace(key, std::move(attempt));
  // Queued before the reaper can see the attempt, so `started` comes before `ended`.
  if (callbacks_.started) {
    Post([this, job = spec.job, n = spec.attempt, processes = std::move(processes)] {
      callbacks_.started(job, n, processes);
    });
  }
  WakeReaper();
  return Status::Ok();
}

void LocalExecutorImpl::Stop(model::JobId job, int attempt, Duration grace) {
  std::lock_guard<std::mutex> lock(mu_);
  if (detached_) return;
  const auto it = attempts_.find(AttemptKey{job, attempt});
  if (it == attempts_.end()) return;
  BeginStop(it->second, grace);
  WakeReaper();
}

void LocalExecutorImpl::Detach() {
  std::lock_guard<std::mutex> detach_lock(detach_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    detached_ = true;
    pending_.clear();
    callback_cv_.notify_all();
  }
  WakeReaper();
  if (reaper_.joinable()) reaper_.join();
  // From a callback the callback thread ends when the callback returns; the destructor joins it.
  if (notifier_.joinable() && std::this_thread::get_id() != notifier_.get_id()) notifier_.join();
}

void LocalExecutorImpl::WakeReaper() {
  if (wake_fd_ < 0) return;
  const std::uint64_t one = 1;
  // EAGAIN: the counter is saturated, the reaper wakes anyway.
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

void LocalExecutorImpl::Post(std::function<void()> callback) {
  pending_.push_back(std::move(callback));
  callback_cv_.notify_all();
}

void LocalExecutorImpl::ReapOnce() {
  const Clock::time_point now = Clock::now();
  for (auto it = attempts_.begin(); it != attempts_.end();) {
    Attempt& attempt = it->second;
    bool new_failure = false;
    for (Host& host : attempt.hosts) {
      if (!host.running) continue;
      siginfo_t info;
      std::memset(&info, 0, sizeof info);
      // WNOWAIT: the exited leader stays a zombie, holding its pid and group id, while the
      // leftovers of its group are killed.
      if (::waitid(P_PID, static_cast<id_t>(host.pid), &info, WEXITED | WNOHANG | WNOWAIT) < 0) {
        if (errno == EINTR) continue;
        // ECHILD: someone else reaped it (SIGCHLD ignored?); its status is lost.
        host.running = false;
        host.exit_code = -SIGKILL;
      } else if (info.si_pid == 0) {
        continue;  // still running
      } else {
        ::kill(-host.pid, SIGKILL);
        host.exit_code = ExitCodeOf(info);
        host.running = false;
        siginfo_t reaped;
        while (::waitid(P_PID, static_cast<id_t>(host.pid), &reaped, WEXITED) < 0 &&
               errno == EINTR) {
        }
      }
      if (host.pidfd >= 0) {
        ::close(host.pidfd);
        host.pidfd = -1;
      }
      if (host.exit_code != 0 && !attempt.stopping) {
        host.failed_on_its_own = true;
        new_failure = true;
      }
    }
    const bool all_gone = std::none_of(attempt.hosts.begin(), attempt.hosts.end(),
                                       [](const Host& h) { return h.running; });
    if (all_gone) {
      if (callbacks_.ended) {
        Post([this, exit = MakeExit(attempt)] { callbacks_.ended(exit); });
      }
      it = attempts_.erase(it);
      continue;
    }
    if (new_failure) BeginStop(attempt, options_.failure_grace);
    if (attempt.kill_deadline && *attempt.kill_deadline <= now) {
      for (Host& host : attempt.hosts) {
        if (host.running && !host.kill_sent) {
          SignalGroup(host, SIGKILL);
          host.kill_sent = true;
        }
      }
    }
    ++it;
  }
}

void LocalExecutorImpl::ReaperLoop() {
  std::vector<pollfd> fds;
  std::unique_lock<std::mutex> lock(mu_);
  while (!detached_) {
    ReapOnce();
    // Sleep until a host exits (its pidfd), Launch/Stop/Detach write the eventfd, or the next
    // SIGKILL is due.
    fds.clear();
    bool must_poll = wake_fd_ < 0;
    if (wake_fd_ >= 0) fds.push_back(pollfd{wake_fd_, POLLIN, 0});
    std::optional<Clock::time_point> next_kill;
    for (const auto& [key, attempt] : attempts_) {
      bool kill_pending = false;
      for (const Host& host : attempt.hosts) {
        if (!host.running) continue;
        if (host.pidfd >= 0) {
          fds.push_back(pollfd{host.pidfd, POLLIN, 0});
        } else {
          must_poll = true;
        }
        kill_pending = kill_pending || !host.kill_sent;
      }
      if (kill_pending && attempt.kill_deadline &&
          (!next_kill || *attempt.kill_deadline < *next_kill)) {
        next_kill = attempt.kill_deadline;
      }
    }
    int timeout_ms = must_poll ? kPollIntervalMs : -1;
    if (next_kill) {
      const auto until = std::chrono::ceil<std::chrono::milliseconds>(*next_kill - Clock::now());
      const int kill_ms = static_cast<int>(std::clamp<std::int64_t>(until.count(), 0, 60'000));
      timeout_ms = timeout_ms < 0 ? kill_ms : std::min(timeout_ms, kill_ms);
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

std::unique_ptr<Executor> NewLocalExecutor(const LocalOptions& options, Callbacks callbacks) {
  return std::make_unique<LocalExecutorImpl>(options, std::move(callbacks));
}

}  // namespace allot::exec
