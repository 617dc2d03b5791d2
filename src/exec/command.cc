#include "exec/command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "exec/spawn.h"

namespace allot::exec {

namespace {

using Clock = std::chrono::steady_clock;

struct Pipe {
  int read = -1;
  int write = -1;
  ~Pipe() {
    if (read >= 0) ::close(read);
    if (write >= 0) ::close(write);
  }
};

Status MakePipe(Pipe& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + std::strerror(errno));
  p.read = fds[0];
  p.write = fds[1];
  return Status::Ok();
}

// Reads what is there; false at end of file.
bool Drain(int fd, std::string& into, std::size_t max) {
  char buffer[65536];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  if (n > 0) {
    const std::size_t keep =
        into.size() < max ? std::min(max - into.size(), static_cast<std::size_t>(n)) : 0;
    into.append(buffer, keep);
    return true;
  }
  return n < 0 && (errno == EINTR || errno == EAGAIN);
}

int ExitCodeOf(int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return -WTERMSIG(wstatus);
  return -1;
}

}  // namespace

std::string CommandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& a : argv) {
    if (!line.empty()) line += ' ';
    line += a.find_first_of(" \t'\"") == std::string::npos ? a : "'" + a + "'";
  }
  return line;
}

namespace {

// Starts the command with stdin from /dev/null and stdout/stderr on the pipes, in its own process
// group (a timeout kills whatever it started too), with default signals.
Result<pid_t> Spawn(const CommandRequest& request, Pipe& out, Pipe& err) {
  std::map<std::string, std::string> environment;
  if (request.inherit_environment) environment = CurrentEnvironment();
  for (const auto& [k, v] : request.environment) environment[k] = v;
  std::vector<std::string> env_storage;
  env_storage.reserve(environment.size());
  for (const auto& [k, v] : environment) env_storage.push_back(k + "=" + v);
  std::vector<char*> envp;
  envp.reserve(env_storage.size() + 1);
  for (std::string& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_storage = request.argv;
  std::vector<char*> argv;
  argv.reserve(argv_storage.size() + 1);
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write, 1);
  posix_spawn_file_actions_adddup2(&actions, err.write, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t all;
  sigset_t none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;  // posix_spawnp looks the program up in this process's PATH
  const int spawned = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(out.write);
  ::close(err.write);
  out.write = err.write = -1;
  if (spawned != 0) {
    const std::string why = "cannot run '" + request.argv[0] + "': " + std::strerror(spawned);
    return spawned == ENOENT ? NotFound(why) : Internal(why);
  }
  return pid;
}

// Reads both pipes until they close or the deadline passes; false when it passed.
bool Collect(const CommandRequest& request, Pipe& out, Pipe& err, CommandOutput& result) {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(request.timeout);
  bool out_open = true;
  bool err_open = true;
  while (out_open || err_open) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd fds[2] = {{out_open ? out.read : -1, POLLIN, 0}, {err_open ? err.read : -1, POLLIN, 0}};
    const int ready = ::poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      out_open = Drain(out.read, result.out, request.max_output);
    }
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      err_open = Drain(err.read, result.err, request.max_output);
    }
  }
  return true;
}

}  // namespace

Result<CommandOutput> RunCommand(const CommandRequest& request) {
  if (request.argv.empty()) return InvalidArgument("no command");
  Pipe out;
  Pipe err;
  ALLOT_RETURN_IF_ERROR(MakePipe(out));
  ALLOT_RETURN_IF_ERROR(MakePipe(err));
  const Result<pid_t> pid = Spawn(request, out, err);
  if (!pid.ok()) return pid.status();
  CommandOutput result;
  const bool finished = Collect(request, out, err, result);
  if (!finished) ::kill(-*pid, SIGKILL);
  int wstatus = 0;
  while (::waitpid(*pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (!finished) {
    return Status(StatusCode::kUnavailable, "'" + CommandLine(request.argv) +
                                                "' did not finish within " +
                                                std::to_string(request.timeout / 1000) + " s");
  }
  result.exit_code = ExitCodeOf(wstatus);
  return result;
}

}  // namespace allot::exec
