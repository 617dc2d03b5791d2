#include "exec/local_hosts.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "env/process.h"
#include "exec/local_executor.h"
#include "exec/sandbox.h"
#include "exec/spawn.h"

namespace allot::exec {
namespace {

namespace fs = std::filesystem;

// waitid's P_PIDFD (Linux 5.4), spelled out for older headers.
constexpr int kPidfdIdType = 3;

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

// Reaps the exited process behind `pidfd` if it is this process's child; a no-op otherwise.
void ReapByPidfd(int pidfd) {
  siginfo_t info{};
  ::waitid(static_cast<idtype_t>(kPidfdIdType), static_cast<id_t>(pidfd), &info, WEXITED | WNOHANG);
}

void Signal(const Host& host, int sig) {
#ifdef SYS_pidfd_send_signal
  if (!host.is_child && host.pidfd >= 0) {
    ::syscall(SYS_pidfd_send_signal, host.pidfd, sig, nullptr, 0U);
    return;
  }
#endif
  // A child is not reaped, so its pid is still ours; another process must still be the same one.
  if (host.is_child || env::SameProcessRunning(host.pid, host.start_time)) ::kill(host.pid, sig);
}

// SIGKILLs the process group led by `leader` if the leader runs and started at `start_time`: a
// group id is not recycled while its leader lives, so the group is the one recorded.
void KillVerifiedGroup(pid_t leader, std::uint64_t start_time) {
  if (leader > 1 && start_time != 0 && env::SameProcessRunning(leader, start_time)) {
    ::kill(-leader, SIGKILL);
  }
}

// SIGKILLs `pid` if it runs and started at `start_time`, through a pidfd opened before the check
// where the kernel has them, so a pid recycled after the check is not signalled.
void KillVerifiedProcess(pid_t pid, std::uint64_t start_time) {
  if (pid <= 1 || start_time == 0) return;
  const int pidfd = OpenPidfd(pid);
  if (env::SameProcessRunning(pid, start_time)) {
#ifdef SYS_pidfd_send_signal
    if (pidfd >= 0) {
      ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0U);
    } else {
      ::kill(pid, SIGKILL);
    }
#else
    ::kill(pid, SIGKILL);
#endif
  }
  if (pidfd >= 0) ::close(pidfd);
}

// The host is gone: its status, or vanished (then its job's group goes too).
void Finish(Host& host) {
  host.running = false;
  CloseHost(host);
  const Result<HostStatus> status = ReadHostStatus(host.dir);
  if (status.ok()) {
    host.exit_code = status->exit_code;
    return;
  }
  host.vanished = true;
  host.exit_code = -SIGKILL;
  KillVerifiedGroup(host.child_pid, host.child_start_time);
}

void RemoveStaleFiles(const std::string& dir) {
  std::error_code error;
  for (const char* name : {kSupervisorFile, kStatusFile, kStopFile}) {
    fs::remove(dir + "/" + name, error);
  }
}

// What the supervisor wrote on its ready descriptor: "0", or "<code> <message>".
Status ReadReady(int fd, const Host& host, const std::string& self_exe) {
  std::string text;
  char buffer[512];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  if (text == "0") return Status::Ok();
  if (text.empty()) {
    return Internal(host.name + ": the supervisor '" + self_exe +
                    "' exited before the job started");
  }
  const std::size_t space = text.find(' ');
  const int code = std::atoi(text.substr(0, space).c_str());
  const std::string message = space == std::string::npos ? text : text.substr(space + 1);
  // The job's own mistakes, which the supervisor found (its command, its channels): as said.
  if (code == static_cast<int>(StatusCode::kInvalidArgument)) return InvalidArgument(message);
  if (code == static_cast<int>(StatusCode::kFailedPrecondition)) {
    return FailedPrecondition(message);
  }
  return Internal(host.name + ": " + message);
}

// The supervisor's limits: cgroups for memory and processes, the disk walk (sandbox.h).
void AddLimitArgs(const LaunchSpec& spec, const Host& host, const HostPlan& plan,
                  std::vector<std::string>& argv) {
  argv.insert(argv.end(), {"--host", host.name});
  if (!plan.enforced.empty()) argv.insert(argv.end(), {"--enforced", plan.enforced});
  const JobLimits& limits = spec.limits;
  if (limits.memory_bytes > 0 || limits.pids > 0) {
    argv.insert(argv.end(), {"--cgroup-name", "j" + std::to_string(spec.job) + "-a" +
                                                  std::to_string(spec.attempt) + "-" + host.name});
    if (limits.memory_bytes > 0) {
      argv.insert(argv.end(), {"--memory-limit", std::to_string(limits.memory_bytes)});
    }
    if (limits.pids > 0) argv.insert(argv.end(), {"--pids-limit", std::to_string(limits.pids)});
  }
  if (limits.disk_bytes > 0) {
    argv.insert(argv.end(), {"--disk-limit", std::to_string(limits.disk_bytes)});
  }
  if (limits.files > 0) argv.insert(argv.end(), {"--file-limit", std::to_string(limits.files)});
  if (limits.disk_bytes > 0 || limits.files > 0) {
    for (const auto& path : plan.disk_paths) argv.insert(argv.end(), {"--disk-path", path});
    for (const auto& path : plan.checkpoint_disk_paths) {
      argv.insert(argv.end(), {"--checkpoint-disk-path", path});
    }
  }
}

// The supervisor runs with a fixed, clean environment: nothing of the server's or the payload's
// (an LD_PRELOAD in a job's Environment must not reach root's processes). The job's environment
// travels in plan.job_env_file.
SpawnRequest SupervisorRequest(const LaunchSpec& spec, const Host& host, const HostPlan& plan) {
  SpawnRequest request;
  const std::string self_exe = spec.self_exe.empty() ? "/proc/self/exe" : spec.self_exe;
  request.argv = {self_exe,       "__supervise",   "--dir",      host.dir,
                  "--output-dir", plan.output_dir, "--ready-fd", "3"};
  if (plan.sandboxed) request.argv.emplace_back("--sandboxed");
  if (!plan.job_env_file.empty())
    request.argv.insert(request.argv.end(), {"--job-env", plan.job_env_file});
  for (const std::string& source : plan.bind_by_fd) {
    request.argv.insert(request.argv.end(), {"--bind-by-fd", source});
  }
  if (!plan.bind_by_fd.empty() && plan.bind_as) {
    request.argv.insert(request.argv.end(), {"--bind-as", std::to_string(plan.bind_as->uid) + ":" +
                                                              std::to_string(plan.bind_as->gid)});
  }
  AddLimitArgs(spec, host, plan, request.argv);
  request.argv.emplace_back("--");
  request.argv.insert(request.argv.end(), plan.argv.begin(), plan.argv.end());
  request.environment = CleanEnvironment();
  request.stdout_path = host.dir + "/stdout";
  request.stderr_path = host.dir + "/stderr";
  request.working_dir = plan.working_dir;
  return request;
}

}  // namespace

Result<Host> StartHost(const LaunchSpec& spec, int index, const LayoutOptions& layout) {
  Host host;
  host.name = HostName(index);
  std::error_code error;
  const fs::path dir = fs::absolute(fs::path(spec.attempt_dir) / host.name, error);
  if (!error) fs::create_directories(dir, error);
  if (error) return Internal("cannot create '" + dir.string() + "': " + error.message());
  host.dir = dir.lexically_normal().string();
  RemoveStaleFiles(host.dir);
  Result<HostPlan> plan = PrepareHost(spec, index, layout);
  if (!plan.ok()) return plan.status();
  host.output_dir = plan->output_dir;

  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) < 0) {
    return Internal("cannot create a pipe: " + std::string(std::strerror(errno)));
  }
  SpawnRequest request = SupervisorRequest(spec, host, *plan);
  request.pass_fd = ready[1];
  const Result<pid_t> pid = SpawnProcess(request);
  ::close(ready[1]);
  if (!pid.ok()) {
    ::close(ready[0]);
    return pid.status();
  }
  host.pid = *pid;
  host.is_child = true;
  const Status started = ReadReady(ready[0], host, request.argv[0]);
  ::close(ready[0]);
  if (!started.ok()) {
    while (::waitpid(host.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return started;
  }
  const Result<SupervisorRecord> record = ReadSupervisorRecord(host.dir);
  if (record.ok()) {
    host.start_time = record->start_time;
    host.child_pid = record->child_pid;
    host.child_start_time = record->child_start_time;
    host.limits = record->limits;
  }
  host.pidfd = OpenPidfd(host.pid);
  return host;
}

Result<Host> AdoptHost(const std::string& attempt_dir, int index) {
  Host host;
  host.name = HostName(index);
  std::error_code error;
  host.dir = fs::absolute(fs::path(attempt_dir) / host.name, error).lexically_normal().string();
  if (error || !fs::is_directory(host.dir, error)) return NotFound("no directory " + host.dir);
  const Result<SupervisorRecord> record = ReadSupervisorRecord(host.dir);
  if (record.ok()) {
    host.pid = record->pid;
    host.start_time = record->start_time;
    host.child_pid = record->child_pid;
    host.child_start_time = record->child_start_time;
    host.output_dir = record->output_dir;
    host.limits = record->limits;
    host.pidfd = OpenPidfd(host.pid);
    // Checked after the pidfd pinned the process: a recycled pid is not taken for it.
    if (env::SameProcessRunning(host.pid, host.start_time)) return host;
    // Gone; if it was this process's child (started before a Detach), its zombie goes too.
    if (host.pidfd >= 0 && env::StartTime(host.pid) == host.start_time) ReapByPidfd(host.pidfd);
  }
  Finish(host);
  return host;
}

void KillRecorded(const HostProcess& recorded) {
  KillVerifiedProcess(recorded.pid, recorded.start_time);
  KillVerifiedGroup(recorded.child_pid, recorded.child_start_time);
}

bool CheckGone(Host& host) {
  if (!host.running) return true;
  bool gone = false;
  if (host.is_child) {
    int wstatus = 0;
    const pid_t reaped = ::waitpid(host.pid, &wstatus, WNOHANG);
    if (reaped == host.pid || (reaped < 0 && errno == ECHILD)) {
      host.is_child = false;  // ECHILD: someone else reaped it (SIGCHLD ignored?)
      gone = true;
    }
  } else if (host.pidfd >= 0) {
    pollfd exited{host.pidfd, POLLIN, 0};
    gone = ::poll(&exited, 1, 0) > 0;
    if (gone) ReapByPidfd(host.pidfd);
  } else {
    gone = !env::SameProcessRunning(host.pid, host.start_time);
  }
  if (gone) Finish(host);
  return gone;
}

void SendStop(Host& host, const StopRequest& request) {
  if (!host.running) return;
  // Without stop.json the supervisor stops with "termination" and its default grace.
  [[maybe_unused]] const Status written = WriteStopRequest(host.dir, request);
  Signal(host, SIGTERM);
  host.stop_sent = true;
}

void Abandon(Host& host) {
  SendStop(host, StopRequest{"termination", 0});
  if (host.is_child) {
    while (::waitpid(host.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    host.is_child = false;
  }
  host.running = false;
  CloseHost(host);
}

void CloseHost(Host& host) {
  if (host.pidfd >= 0) ::close(host.pidfd);
  host.pidfd = -1;
}

}  // namespace allot::exec
