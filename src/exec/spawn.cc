#include "exec/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

extern "C" char** environ;  // NOLINT(readability-redundant-declaration)

namespace allot::exec {
namespace {

// What the child reports through the error pipe when it cannot reach exec.
enum ChildStage : int {
  kStageSetsid = 1,
  kStageDup = 2,
  kStageChdir = 3,
  kStageExec = 4,
  kStageCgroup = 5,
  kStageRlimit = 6,
  kStageKeepFds = 7
};

struct ChildError {
  int stage = 0;
  int error = 0;
};

std::string ErrnoText(int error) { return std::strerror(error); }

// Closes a descriptor it owns.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  void Reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

Status OpenLog(const std::string& path, Fd& fd) {
  const int raw = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (raw < 0) {
    return Internal("cannot open log file '" + path + "': " + ErrnoText(errno));
  }
  fd.Reset(raw);
  return Status::Ok();
}

// Writes all of `size` bytes, retrying on EINTR; async-signal-safe.
void WriteAll(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

// Everything the child needs, prepared before fork: it may not allocate after.
struct ChildPlan {
  int error_fd = -1;
  int stdin_fd = -1;
  int stdout_fd = -1;  // -1: inherited
  int stderr_fd = -1;
  int pass_fd = -1;
  const int* keep_fds = nullptr;
  std::size_t keep_count = 0;
  bool new_session = true;
  const char* working_dir = nullptr;
  char* const* argv = nullptr;
  char** envp = nullptr;
  const char* const* cgroups = nullptr;  // null-terminated cgroup.procs paths
  bool ignore_sigterm = false;
  std::int64_t max_file_bytes = 0;
};

// Moves the calling process into each cgroup; async-signal-safe. Returns 0 or -1 (errno set).
int JoinCgroups(const char* const* cgroups) {
  for (const char* const* path = cgroups; path != nullptr && *path != nullptr; ++path) {
    const int fd = ::open(*path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    const ssize_t n = ::write(fd, "0", 1);
    const int error = errno;
    ::close(fd);
    if (n != 1) {
      errno = error;
      return -1;
    }
  }
  return 0;
}

// RLIMIT_FSIZE (soft and hard) to `bytes` when positive; async-signal-safe. 0 or -1 (errno set).
int LimitFileSize(std::int64_t bytes) {
  if (bytes <= 0) return 0;
  const auto limit = static_cast<rlim_t>(bytes);
  const rlimit fsize{limit, limit};
  return ::setrlimit(RLIMIT_FSIZE, &fsize);
}

// dup2, or for a descriptor already in place only clearing its close-on-exec flag.
int MoveTo(int fd, int target) {
  if (fd < 0) return 0;
  if (fd == target) return ::fcntl(fd, F_SETFD, 0);
  return ::dup2(fd, target);
}

// Clears close-on-exec on each descriptor; async-signal-safe. 0 or -1 (errno set).
int KeepOpen(const int* fds, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    if (::fcntl(fds[i], F_SETFD, 0) < 0) return -1;
  }
  return 0;
}

void ResetSignals() {
  // Whatever the parent ignores or blocks, the program starts with the defaults.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    ::sigaction(sig, &dfl, nullptr);  // fails harmlessly for the signals it may not change
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Runs in the child between fork and exec: only async-signal-safe calls, no allocation.
[[noreturn]] void ChildMain(const ChildPlan& plan) {
  ChildError failure;
  const int isolated = plan.new_session ? (::setsid() < 0 ? -1 : 0) : ::setpgid(0, 0);
  if (isolated < 0) {
    failure = {kStageSetsid, errno};
  } else if (::dup2(plan.stdin_fd, STDIN_FILENO) < 0 || MoveTo(plan.stdout_fd, STDOUT_FILENO) < 0 ||
             MoveTo(plan.stderr_fd, STDERR_FILENO) < 0 || MoveTo(plan.pass_fd, 3) < 0) {
    failure = {kStageDup, errno};
  } else if (plan.working_dir != nullptr && ::chdir(plan.working_dir) < 0) {
    failure = {kStageChdir, errno};
  } else if (JoinCgroups(plan.cgroups) < 0) {
    failure = {kStageCgroup, errno};
  } else if (LimitFileSize(plan.max_file_bytes) < 0) {
    failure = {kStageRlimit, errno};
  } else {
    ResetSignals();
    if (plan.ignore_sigterm) ::signal(SIGTERM, SIG_IGN);
      // Descriptors the parent opened without O_CLOEXEC do not leak into the program (Linux >=
      // 5.11; on older kernels this fails and they stay open).
#ifdef SYS_close_range
    ::syscall(SYS_close_range, plan.pass_fd >= 0 ? 4U : 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
#endif
    if (KeepOpen(plan.keep_fds, plan.keep_count) < 0) {
      failure = {kStageKeepFds, errno};
    } else {
      environ = plan.envp;  // execvp searches the program's PATH and passes this environment
      ::execvp(plan.argv[0], plan.argv);
      failure = {kStageExec, errno};
    }
  }
  WriteAll(plan.error_fd, &failure, sizeof failure);
  ::_exit(127);
}

}  // namespace

std::map<std::string, std::string> CurrentEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

namespace {

// The parent's side of the exec: the pipe closes when the child's exec succeeded, or carries
// the stage and errno where it failed (then the child is reaped, so no zombie is left).
Result<pid_t> AwaitExec(pid_t pid, int error_fd, const SpawnRequest& request) {
  const std::string& program = request.argv[0];
  ChildError failure;
  std::size_t got = 0;
  while (got < sizeof failure) {
    const ssize_t n =
        ::read(error_fd, reinterpret_cast<char*>(&failure) + got, sizeof failure - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got == 0) return pid;  // the pipe closed on exec

  // The child did not reach the program: reap it so no zombie is left.
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (got < sizeof failure) return Internal("cannot run '" + program + "': the child failed");
  switch (failure.stage) {
    case kStageSetsid:
      return Internal("cannot run '" + program + "': setsid/setpgid: " + ErrnoText(failure.error));
    case kStageDup:
      return Internal("cannot run '" + program +
                      "': redirecting output: " + ErrnoText(failure.error));
    case kStageCgroup:
      return Internal("cannot run '" + program +
                      "': cannot join its cgroup: " + ErrnoText(failure.error));
    case kStageRlimit:
      return Internal("cannot run '" + program +
                      "': cannot limit its file size: " + ErrnoText(failure.error));
    case kStageKeepFds:
      return Internal("cannot run '" + program +
                      "': cannot pass it its descriptors: " + ErrnoText(failure.error));
    case kStageChdir:
      return Internal("cannot run '" + program + "': cannot enter '" + request.working_dir +
                      "': " + ErrnoText(failure.error));
    default:
      return InvalidArgument("cannot run '" + program + "': " + ErrnoText(failure.error));
  }
}

}  // namespace

Result<pid_t> SpawnProcess(const SpawnRequest& request) {
  if (request.argv.empty() || request.argv[0].empty()) {
    return InvalidArgument("the command is empty");
  }
  const std::string& program = request.argv[0];
  for (const int fd : request.keep_fds) {
    // 0-2 are the standard streams and 3 pass_fd's place: the child's dup2 would replace them.
    if (fd <= 2 || (fd == 3 && request.pass_fd >= 0)) {
      return InvalidArgument("cannot run '" + program + "': descriptor " + std::to_string(fd) +
                             " cannot be inherited at its number");
    }
  }

  // Everything the child needs is prepared here: it may not allocate after fork.
  std::vector<std::string> argv_storage = request.argv;
  std::vector<char*> argv;
  argv.reserve(argv_storage.size() + 1);
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage;
  env_storage.reserve(request.environment.size());
  for (const auto& [key, value] : request.environment) env_storage.push_back(key + "=" + value);
  std::vector<char*> envp;
  envp.reserve(env_storage.size() + 1);
  for (std::string& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  std::vector<const char*> cgroups;
  for (const std::string& path : request.join_cgroups) cgroups.push_back(path.c_str());
  cgroups.push_back(nullptr);

  Fd stdin_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (stdin_fd.get() < 0) return Internal("cannot open /dev/null: " + ErrnoText(errno));
  Fd stdout_fd;
  Fd stderr_fd;
  if (!request.stdout_path.empty()) ALLOT_RETURN_IF_ERROR(OpenLog(request.stdout_path, stdout_fd));
  if (!request.stderr_path.empty()) ALLOT_RETURN_IF_ERROR(OpenLog(request.stderr_path, stderr_fd));

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) < 0)
    return Internal("cannot create a pipe: " + ErrnoText(errno));
  Fd error_read(pipe_fds[0]);
  Fd error_write(pipe_fds[1]);
  if (request.pass_fd >= 0 && error_write.get() <= 3) {
    // The child moves pass_fd to 3 before it may need to report an error.
    const int moved = ::fcntl(error_write.get(), F_DUPFD_CLOEXEC, 4);
    if (moved < 0) return Internal("cannot create a pipe: " + ErrnoText(errno));
    error_write.Reset(moved);
  }

  const pid_t pid = ::fork();
  if (pid < 0) return Internal("cannot run '" + program + "': fork: " + ErrnoText(errno));
  if (pid == 0) {
    ChildMain(ChildPlan{error_write.get(), stdin_fd.get(), stdout_fd.get(), stderr_fd.get(),
                        request.pass_fd, request.keep_fds.data(), request.keep_fds.size(),
                        request.isolation == SpawnRequest::Isolation::kSession,
                        request.working_dir.empty() ? nullptr : request.working_dir.c_str(),
                        argv.data(), envp.data(), cgroups.data(), request.ignore_sigterm,
                        request.max_file_bytes});
  }
  // The parent sets the group too, so the caller may signal it as soon as this returns.
  if (request.isolation == SpawnRequest::Isolation::kProcessGroup) ::setpgid(pid, pid);
  error_write.Reset();

  return AwaitExec(pid, error_read.get(), request);
}

}  // namespace allot::exec
