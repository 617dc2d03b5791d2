#include "exec/supervisor.h"

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "env/files.h"
#include "env/process.h"
#include "exec/host_files.h"
#include "exec/spawn.h"

namespace allot::exec {
namespace {

using Clock = std::chrono::steady_clock;

constexpr Duration kDefaultGraceMs = Seconds(120);
// Retries of a status.json that could not be written: 50 ms, doubling up to 2 s.
constexpr std::chrono::milliseconds kFirstRetry{50};
constexpr std::chrono::milliseconds kLastRetry{2000};

struct Args {
  std::string dir;
  std::string output_dir;
  Duration grace_ms = kDefaultGraceMs;
  int ready_fd = -1;
  bool sandboxed = false;  // the command is bwrap, which dies of SIGTERM and takes the job along
  std::vector<std::string> command;
};

template <typename T>
bool ParseNumber(const char* text, T& out) {
  const char* end = text + std::strlen(text);
  const auto [ptr, error] = std::from_chars(text, end, out);
  return error == std::errc() && ptr == end;
}

std::optional<Args> ParseArgs(int argc, char** argv) {
  Args args;
  int i = 0;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; i += 2) {
    if (std::strcmp(argv[i], "--sandboxed") == 0) {
      args.sandboxed = true;
      --i;
      continue;
    }
    if (i + 1 >= argc) return std::nullopt;
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    bool ok = true;
    if (flag == "--dir") {
      args.dir = value;
    } else if (flag == "--output-dir") {
      args.output_dir = value;
    } else if (flag == "--grace-ms") {
      ok = ParseNumber(value, args.grace_ms);
    } else if (flag == "--ready-fd") {
      ok = ParseNumber(value, args.ready_fd);
    } else {
      ok = false;
    }
    if (!ok) return std::nullopt;
  }
  for (++i; i < argc; ++i) args.command.emplace_back(argv[i]);
  if (args.dir.empty() || args.output_dir.empty() || args.command.empty()) return std::nullopt;
  return args;
}

// Tells the executor waiting on --ready-fd how the start went, then closes the descriptor.
void Report(int& ready_fd, const Status& status) {
  if (ready_fd < 0) return;
  std::string text = std::to_string(static_cast<int>(status.code()));
  if (!status.ok()) text += " " + status.message();
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(ready_fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  ::close(ready_fd);
  ready_fd = -1;
}

sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGCHLD);
  return set;
}

// SIGTERM to every process of the group but its leader.
void SignalFollowers(pid_t group, int sig) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    pid_t pid = 0;
    const std::string name = entry.path().filename().string();
    if (!ParseNumber(name.c_str(), pid) || pid == group) continue;
    if (::getpgid(pid) == group) ::kill(pid, sig);
  }
}

int ExitCodeOf(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) return info.si_status;
  if (info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED) return -info.si_status;
  return -SIGKILL;
}

class Supervision {
 public:
  Supervision(const Args& args, pid_t child) : args_(args), child_(child) {}

  // Returns the command's exit code once it exited and its group is gone.
  int Run() {
    const sigset_t signals = StopSignals();
    while (true) {
      siginfo_t info{};
      // WNOWAIT: the exited leader keeps its pid, so the group id is not recycled while the
      // leftovers are killed.
      if (::waitid(P_PID, static_cast<id_t>(child_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == child_) {
        ::kill(-child_, SIGKILL);
        siginfo_t reaped{};
        while (::waitid(P_PID, static_cast<id_t>(child_), &reaped, WEXITED) < 0 && errno == EINTR) {
        }
        return ExitCodeOf(info);
      }
      const timespec timeout = Timeout();
      siginfo_t got{};
      const int sig = ::sigtimedwait(&signals, &got, &timeout);
      if (sig == SIGTERM || sig == SIGINT) OnStop();
      if (deadline_ && !kill_sent_ && Clock::now() >= *deadline_) {
        ::kill(-child_, SIGKILL);
        kill_sent_ = true;
      }
    }
  }

 private:
  timespec Timeout() const {
    Duration ms = Seconds(3600);
    if (deadline_ && !kill_sent_) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline_ - Clock::now());
      ms = std::clamp<Duration>(left.count(), 0, ms);
    }
    return timespec{static_cast<time_t>(ms / 1000), static_cast<long>((ms % 1000) * 1'000'000)};
  }

  void OnStop() {
    Result<StopRequest> request = ReadStopRequest(args_.dir);
    const StopRequest stop = request.ok() ? *request : StopRequest{"termination", args_.grace_ms};
    if (!reason_written_) {
      std::error_code error;
      std::filesystem::create_directories(args_.output_dir, error);
      const Status written =
          env::WriteFileAtomically(args_.output_dir + "/" + kStopReasonFile, stop.reason);
      if (!written.ok()) std::fprintf(stderr, "allot supervisor: %s\n", written.message().c_str());
      reason_written_ = true;
    }
    if (!term_sent_) {
      if (args_.sandboxed) {
        SignalFollowers(child_, SIGTERM);
      } else {
        ::kill(-child_, SIGTERM);
      }
      term_sent_ = true;
    }
    const Clock::time_point deadline =
        Clock::now() + std::chrono::milliseconds(std::max<Duration>(stop.grace_ms, 0));
    if (!deadline_ || deadline < *deadline_) deadline_ = deadline;
  }

  const Args& args_;
  const pid_t child_;
  bool reason_written_ = false;
  bool term_sent_ = false;
  bool kill_sent_ = false;
  std::optional<Clock::time_point> deadline_;
};

// Writes status.json, retrying while it cannot be written (a full disk): the status is kept in
// memory until it is on disk, so the executor never finds this supervisor gone without one. Says
// so once on stderr. Gives up (returns 1) only when the host's directory is gone; returns 0 once
// written.
int RecordStatus(const std::string& dir, const HostStatus& status) {
  std::chrono::milliseconds backoff = kFirstRetry;
  bool said = false;
  while (true) {
    const Status written = WriteHostStatus(dir, status);
    if (written.ok()) return 0;
    std::error_code error;
    const bool dir_gone = !std::filesystem::is_directory(dir, error);
    if (!said || dir_gone) {
      std::fprintf(stderr, "allot supervisor: %s%s\n", written.message().c_str(),
                   dir_gone ? "; the host directory is gone, giving up" : "; retrying");
      said = true;
    }
    if (dir_gone) return 1;
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, kLastRetry);
  }
}

}  // namespace

int SuperviseMain(int argc, char** argv) {
  std::optional<Args> args = ParseArgs(argc, argv);
  if (!args) {
    std::fprintf(stderr,
                 "usage: allot __supervise --dir DIR --output-dir DIR [--grace-ms N] "
                 "[--ready-fd N] [--sandboxed] -- COMMAND...\n");
    return 2;
  }
  // Blocked before the command starts, so a stop is never lost; the command gets the defaults.
  const sigset_t signals = StopSignals();
  ::sigprocmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGPIPE, SIG_IGN);

  SpawnRequest request;
  request.argv = args->command;
  request.environment = CurrentEnvironment();
  request.isolation = SpawnRequest::Isolation::kProcessGroup;
  const Timestamp started_at = EpochMillisNow();
  const Result<pid_t> child = SpawnProcess(request);
  if (!child.ok()) {
    std::fprintf(stderr, "allot supervisor: %s\n", child.status().message().c_str());
    Report(args->ready_fd, child.status());
    return 127;
  }
  SupervisorRecord record;
  record.pid = ::getpid();
  record.start_time = env::RunningStartTime(record.pid).value_or(0);
  record.child_pid = *child;
  record.child_start_time = env::RunningStartTime(*child).value_or(0);  // 0: it already exited
  record.output_dir = args->output_dir;
  const Status recorded = WriteSupervisorRecord(args->dir, record);
  if (!recorded.ok()) std::fprintf(stderr, "allot supervisor: %s\n", recorded.message().c_str());
  Report(args->ready_fd, recorded);  // without supervisor.json it could not be adopted

  if (!recorded.ok()) {
    ::kill(-*child, SIGKILL);
    while (::waitpid(*child, nullptr, 0) < 0 && errno == EINTR) {
    }
    return 1;
  }
  const int exit_code = Supervision(*args, *child).Run();
  return RecordStatus(args->dir, HostStatus{exit_code, started_at, EpochMillisNow()});
}

}  // namespace allot::exec
