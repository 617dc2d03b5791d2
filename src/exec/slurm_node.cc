#include "exec/slurm_node.h"

#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "env/files.h"
#include "exec/host_files.h"
#include "exec/hostlist.h"
#include "exec/local_executor.h"
#include "exec/local_hosts.h"
#include "exec/slurm_launch.h"
#include "exec/spawn.h"

namespace allot::exec {

namespace {

// `--launch FILE`, the only argument both take.
const char* LaunchArg(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[0], "--launch") == 0) return argv[1];
  return nullptr;
}

int ExitCodeOf(int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
  return 1;
}

void OnSignal(int /*sig*/) {}

// Waits for the child; a handled signal only interrupts the wait.
int WaitFor(pid_t pid) {
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0) {
    if (errno != EINTR) return 1;
  }
  return ExitCodeOf(wstatus);
}

std::string AddressOf(const std::string& node, const SlurmLaunch& launch) {
  if (auto it = launch.node_addresses.find(node); it != launch.node_addresses.end()) {
    return it->second;
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(node.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) return "";
  char text[NI_MAXHOST] = {};
  const int ok = ::getnameinfo(found->ai_addr, found->ai_addrlen, text, sizeof text, nullptr, 0,
                               NI_NUMERICHOST);
  ::freeaddrinfo(found);
  return ok == 0 ? text : "";
}

// Names the hosts after the allocated nodes; false (said on stderr) when Slurm's variables do
// not describe this allocation.
bool NameHosts(SlurmLaunch& launch, int& host_index) {
  const char* node_id = std::getenv("SLURM_NODEID");
  const char* node_list = std::getenv("SLURM_JOB_NODELIST");
  if (node_id == nullptr || node_list == nullptr) {
    std::fprintf(stderr, "allot __slurmhost: SLURM_NODEID or SLURM_JOB_NODELIST is not set\n");
    return false;
  }
  host_index = std::atoi(node_id) + 1;
  Result<std::vector<std::string>> nodes = ExpandHostList(node_list);
  if (!nodes.ok() || nodes->size() != static_cast<std::size_t>(launch.spec.instance_count) ||
      host_index < 1 || host_index > launch.spec.instance_count) {
    std::fprintf(stderr, "allot __slurmhost: node %s of '%s' does not fit %d hosts\n", node_id,
                 node_list, launch.spec.instance_count);
    return false;
  }
  launch.spec.host_names = *nodes;
  std::vector<std::string> addresses;
  for (const std::string& node : *nodes) addresses.push_back(AddressOf(node, launch));
  bool all_known = true;
  for (const std::string& a : addresses) all_known = all_known && !a.empty();
  if (all_known) launch.spec.host_addresses = std::move(addresses);
  return true;
}

std::string HostDir(const SlurmLaunch& launch, int index) {
  return launch.spec.attempt_dir + "/" + HostName(index);
}

int LaunchError(const std::string& host_dir, const std::string& message) {
  std::fprintf(stderr, "allot __slurmhost: %s\n", message.c_str());
  ::mkdir(host_dir.c_str(), 0755);
  const Status written = env::WriteFileAtomically(host_dir + "/" + kLaunchErrorFile, message);
  if (!written.ok()) std::fprintf(stderr, "allot __slurmhost: %s\n", written.message().c_str());
  return 127;
}

// The mtime of stop.json in ns, 0 while there is none.
std::int64_t StopFileTime(const std::string& host_dir) {
  struct stat st {};
  if (::stat((host_dir + "/" + kStopFile).c_str(), &st) != 0) return 0;
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

// Passes stops on to the supervisor until it exits; its exit status.
int Watch(Host& host) {
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigaddset(&term, SIGINT);
  std::int64_t stop_seen = 0;
  while (true) {
    int wstatus = 0;
    const pid_t reaped = ::waitpid(host.pid, &wstatus, WNOHANG);
    if (reaped == host.pid || (reaped < 0 && errno != EINTR)) break;
    const std::int64_t stop = StopFileTime(host.dir);
    bool forward = stop != 0 && stop != stop_seen;
    stop_seen = stop;
    const timespec tick{0, 100'000'000};  // how soon a stop.json is seen
    siginfo_t got{};
    if (::sigtimedwait(&term, &got, &tick) > 0) forward = true;
    if (forward) ::kill(host.pid, SIGTERM);
  }
  const Result<HostStatus> status = ReadHostStatus(host.dir);
  if (!status.ok()) return 1;
  return status->exit_code < 0 ? 128 - status->exit_code : status->exit_code;
}

}  // namespace

int SlurmBatchMain(int argc, char** argv) {
  const char* file = LaunchArg(argc, argv);
  if (file == nullptr) {
    std::fprintf(stderr, "usage: allot __slurmbatch --launch FILE\n");
    return 2;
  }
  Result<SlurmLaunch> launch = ReadSlurmLaunch(file);
  if (!launch.ok()) {
    std::fprintf(stderr, "allot __slurmbatch: %s\n", launch.status().message().c_str());
    return 1;
  }
  struct sigaction ignore {};
  ignore.sa_handler = OnSignal;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGTERM, &ignore, nullptr);
  ::sigaction(SIGINT, &ignore, nullptr);
  const std::string n = std::to_string(launch->spec.instance_count);
  SpawnRequest request;
  request.argv = {launch->srun,
                  "--nodes=" + n,
                  "--ntasks=" + n,
                  "--ntasks-per-node=1",
                  "--kill-on-bad-exit=0",
                  "--export=ALL",
                  launch->spec.self_exe,
                  "__slurmhost",
                  "--launch",
                  file};
  request.environment = CurrentEnvironment();
  if (request.environment.count("PATH") == 0) {
    request.environment["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  }
  request.isolation = SpawnRequest::Isolation::kProcessGroup;
  const Result<pid_t> srun = SpawnProcess(request);
  if (!srun.ok()) {
    std::fprintf(stderr, "allot __slurmbatch: %s\n", srun.status().message().c_str());
    return 127;
  }
  return WaitFor(*srun);
}

int SlurmHostMain(int argc, char** argv) {
  const char* file = LaunchArg(argc, argv);
  if (file == nullptr) {
    std::fprintf(stderr, "usage: allot __slurmhost --launch FILE\n");
    return 2;
  }
  // Blocked from the start: a stop that arrives while the host is prepared is kept, not lost.
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigaddset(&term, SIGINT);
  ::sigprocmask(SIG_BLOCK, &term, nullptr);
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGPIPE, SIG_IGN);
  Result<SlurmLaunch> read = ReadSlurmLaunch(file);
  if (!read.ok()) {
    std::fprintf(stderr, "allot __slurmhost: %s\n", read.status().message().c_str());
    return 1;
  }
  SlurmLaunch launch = std::move(read).value();
  int index = 0;
  if (!NameHosts(launch, index)) return 1;
  // The GPUs Slurm gave this node's task (--gres) are the host's, as a host map's slot would be.
  if (const char* gpus = std::getenv("CUDA_VISIBLE_DEVICES"); gpus != nullptr && *gpus != '\0') {
    launch.spec.host_slots.resize(static_cast<std::size_t>(launch.spec.instance_count));
    launch.spec.host_slots[static_cast<std::size_t>(index) - 1].gpus = gpus;
  }
  const std::string host_dir = HostDir(launch, index);
  LayoutOptions layout;
  layout.sandbox = launch.sandbox;
  layout.die_with_parent = true;
  Result<Host> started = StartHost(launch.spec, index, layout);
  if (!started.ok()) {
    const char* node = std::getenv("SLURMD_NODENAME");
    return LaunchError(host_dir, "cannot start " + HostName(index) + " on node " +
                                     (node != nullptr ? node : "?") + ": " +
                                     started.status().message());
  }
  Host host = std::move(started).value();
  const int code = Watch(host);
  CloseHost(host);
  return code;
}

}  // namespace allot::exec
