#include "exec/supervisor.h"

#include <signal.h>
#include <sys/stat.h>
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
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "env/files.h"
#include "env/process.h"
#include "exec/as_job_user.h"
#include "exec/host_files.h"
#include "exec/ipc_scope.h"
#include "exec/pacing.h"
#include "exec/sandbox.h"
#include "exec/spawn.h"

namespace allot::exec {
namespace {

using Clock = std::chrono::steady_clock;

constexpr Duration kDefaultGraceMs = Seconds(120);
// Retries of a status.json that could not be written: 50 ms, doubling up to 2 s.
constexpr std::chrono::milliseconds kFirstRetry{50};
constexpr std::chrono::milliseconds kLastRetry{2000};
// How often the disk limit is checked while the job runs: every 250 ms, or less often when a
// walk of the job's trees and its open files takes long (pacing.h), at least every 20 s. A walk
// stops once a limit is passed, so the file limit bounds the trees' part. What a job writes
// between two checks is over its limit until the next: at 2 s, a job writing files of 150 MB
// one after another held 1.4 GB under a limit of 200 MiB when it was stopped. Small trees walk
// in well under a millisecond; a large one sets its own slower pace. Without cgroups each check
// also reads every process's parent (to find the job's processes' open files), which costs a
// few milliseconds on a busy machine, for every host of every job: every second then.
constexpr auto kDiskCheckInterval = std::chrono::milliseconds(250);
constexpr auto kDiskCheckIntervalWithoutCgroups = std::chrono::seconds(1);
constexpr auto kLongestDiskCheckInterval = std::chrono::seconds(20);

struct Args {
  std::string dir;
  std::string output_dir;
  Duration grace_ms = kDefaultGraceMs;
  int ready_fd = -1;
  bool sandboxed = false;  // the command is bwrap, which dies of SIGTERM and takes the job along
  std::string job_env;     // the job's environment (sandbox.h EncodeEnvironment); unsandboxed only
  std::string host = "the host";  // algo-K, for the failure messages
  std::string enforced;           // limits bwrap enforces (uid, gid, tmp), for the record
  std::string cgroup_name;
  JobLimits limits;  // memory and pids (cgroups), disk (disk_paths); tmp is bwrap's
  std::vector<std::string> disk_paths;
  std::vector<std::string> checkpoint_disk_paths;  // counted by length (DiskUsage)
  // Directories the sandbox binds by descriptor (the channels), as the server checked them.
  std::vector<std::string> bind_by_fd;
  // Whom the channels are opened as: the job's user (--bind-as UID:GID), so the job reaches no
  // directory its uid could not reach by itself. Unset: as the supervisor's own user.
  std::optional<JobUser> bind_as;
  std::vector<std::string> command;
};

template <typename T>
bool ParseNumber(const char* text, T& out) {
  const char* end = text + std::strlen(text);
  const auto [ptr, error] = std::from_chars(text, end, out);
  return error == std::errc() && ptr == end;
}

// "UID:GID"; neither may be root's 0 (a job never runs as root).
bool ParseUser(const std::string& text, std::optional<JobUser>& out) {
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) return false;
  JobUser user;
  const std::string uid = text.substr(0, colon);
  const std::string gid = text.substr(colon + 1);
  if (!ParseNumber(uid.c_str(), user.uid) || !ParseNumber(gid.c_str(), user.gid)) return false;
  if (user.uid == 0 || user.gid == 0) return false;
  out = user;
  return true;
}

// Sets the field `flag` names from `value`; false for an unknown flag or a bad value.
bool SetFlag(Args& args, const std::string& flag, const char* value) {
  if (flag == "--dir") {
    args.dir = value;
  } else if (flag == "--output-dir") {
    args.output_dir = value;
  } else if (flag == "--grace-ms") {
    return ParseNumber(value, args.grace_ms);
  } else if (flag == "--ready-fd") {
    return ParseNumber(value, args.ready_fd);
  } else if (flag == "--job-env") {
    args.job_env = value;
  } else if (flag == "--host") {
    args.host = value;
  } else if (flag == "--enforced") {
    args.enforced = value;
  } else if (flag == "--cgroup-name") {
    args.cgroup_name = value;
  } else if (flag == "--memory-limit") {
    return ParseNumber(value, args.limits.memory_bytes);
  } else if (flag == "--pids-limit") {
    return ParseNumber(value, args.limits.pids);
  } else if (flag == "--disk-limit") {
    return ParseNumber(value, args.limits.disk_bytes);
  } else if (flag == "--file-limit") {
    return ParseNumber(value, args.limits.files);
  } else if (flag == "--disk-path") {
    args.disk_paths.emplace_back(value);
  } else if (flag == "--checkpoint-disk-path") {
    args.checkpoint_disk_paths.emplace_back(value);
  } else if (flag == "--bind-by-fd") {
    args.bind_by_fd.emplace_back(value);
  } else if (flag == "--bind-as") {
    return ParseUser(value, args.bind_as);
  } else {
    return false;
  }
  return true;
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
    if (i + 1 >= argc || !SetFlag(args, argv[i], argv[i + 1])) return std::nullopt;
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

// Every descendant of `root` (not `root` itself), each after its parent. In the sandbox the job
// runs in a session and PID namespace of its own, below bwrap: its process group is not bwrap's.
std::vector<pid_t> Descendants(pid_t root) {
  std::map<pid_t, std::vector<pid_t>> children;
  for (const pid_t pid : env::AllProcesses()) {
    const Result<std::string> stat = env::ReadFile("/proc/" + std::to_string(pid) + "/stat");
    if (!stat.ok()) continue;
    const std::size_t paren = stat->rfind(')');
    if (paren == std::string::npos) continue;
    // ") S 123 ...": the state, then the parent's pid.
    std::istringstream fields(stat->substr(paren + 1));
    std::string state;
    pid_t parent = 0;
    if (fields >> state >> parent) children[parent].push_back(pid);
  }
  std::vector<pid_t> out;
  std::vector<pid_t> pending = children[root];
  while (!pending.empty()) {
    const pid_t pid = pending.back();
    pending.pop_back();
    out.push_back(pid);
    const auto it = children.find(pid);
    if (it != children.end()) pending.insert(pending.end(), it->second.begin(), it->second.end());
  }
  return out;
}

// `sig` to every descendant of `root` (Descendants).
void SignalDescendants(pid_t root, int sig) {
  for (const pid_t pid : Descendants(root)) ::kill(pid, sig);
}

// <output_dir>/<name> written without following a link the job put in its /opt/ml: the
// supervisor is root, the tree is the job's.
Status WriteJobFile(const Args& args, const std::string& name, const std::string& text) {
  const std::filesystem::path output = std::filesystem::path(args.output_dir).lexically_normal();
  const std::filesystem::path relative = output.lexically_relative(args.dir);
  if (relative.empty() || *relative.begin() == "..") {
    return env::WriteFileAtomically(args.output_dir + "/" + name, text);
  }
  ALLOT_RETURN_IF_ERROR(env::MakeDirectoriesBeneath(args.dir, relative.string()));
  return env::WriteFileBeneath(args.dir, (relative / name).string(), text);
}

int ExitCodeOf(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) return info.si_status;
  if (info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED) return -info.si_status;
  return -SIGKILL;
}

class Supervision {
 public:
  Supervision(const Args& args, pid_t child, const CgroupPlan& cgroups)
      : args_(args), child_(child), cgroups_(cgroups) {}

  // Returns the command's exit code once it exited and its group is gone.
  int Run() {
    const sigset_t signals = StopSignals();
    next_disk_check_ = Clock::now() + DiskCheckInterval();
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
      if (deadline_ && !kill_sent_ && Clock::now() >= *deadline_) KillAll();
      if (Clock::now() >= next_disk_check_) CheckDisk();
    }
  }

  // After the job's processes are gone: what it left counts too, so a burst written between two
  // checks (or just before exiting) still fails the job. True when it is over a limit: now, or
  // at a check while it ran. A job that exited 0 while that check walked its trees was not
  // stopped by the check's kill, which came too late, and must fail all the same.
  bool CheckDiskAtEnd() {
    if (!limit_failure_.empty()) return true;
    // No holders: the job's pid may belong to another process by now.
    limit_failure_ = DiskOverLimit(/*with_open_files=*/false);
    return !limit_failure_.empty();
  }

  // Why the supervisor stopped the job (a limit), or empty.
  const std::string& limit_failure() const { return limit_failure_; }

 private:
  timespec Timeout() const {
    Duration ms = Seconds(3600);
    if (deadline_ && !kill_sent_) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline_ - Clock::now());
      ms = std::clamp<Duration>(left.count(), 0, ms);
    }
    if (DiskLimited() && !kill_sent_) {
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(next_disk_check_ - Clock::now());
      ms = std::clamp<Duration>(left.count(), 0, ms);
    }
    return timespec{static_cast<time_t>(ms / 1000), static_cast<long>((ms % 1000) * 1'000'000)};
  }

  void OnStop() {
    Result<StopRequest> request = ReadStopRequest(args_.dir);
    const StopRequest stop = request.ok() ? *request : StopRequest{"termination", args_.grace_ms};
    if (!reason_written_) {
      const Status written = WriteJobFile(args_, kStopReasonFile, stop.reason);
      if (!written.ok()) std::fprintf(stderr, "allot supervisor: %s\n", written.message().c_str());
      reason_written_ = true;
    }
    if (!term_sent_) {
      if (args_.sandboxed) {
        SignalDescendants(child_, SIGTERM);
      } else {
        ::kill(-child_, SIGTERM);
      }
      term_sent_ = true;
    }
    const Clock::time_point deadline =
        Clock::now() + std::chrono::milliseconds(std::max<Duration>(stop.grace_ms, 0));
    if (!deadline_ || deadline < *deadline_) deadline_ = deadline;
  }

  void KillAll() {
    if (args_.sandboxed) SignalDescendants(child_, SIGKILL);
    ::kill(-child_, SIGKILL);
    kill_sent_ = true;
  }

  bool DiskLimited() const { return args_.limits.disk_bytes > 0 || args_.limits.files > 0; }

  // Why the job's trees are over a limit, or empty; said on stderr with the figures.
  std::string DiskOverLimit(bool with_open_files = true) const {
    if (!DiskLimited()) return "";
    // The job's processes: what they deleted but hold open takes the disk all the same.
    std::vector<pid_t> holders;
    if (with_open_files && !cgroups_.dirs.empty()) {
      // Its cgroup's members: the whole tree (each joins at its fork), and daemons that left it.
      holders = CgroupMembers(cgroups_);
    } else if (with_open_files) {
      holders = Descendants(child_);  // without cgroups, a scan of every process's parent
      holders.push_back(child_);
    }
    const DiskUsed used = DiskUsage(args_.disk_paths, {args_.limits.disk_bytes, args_.limits.files},
                                    holders, args_.checkpoint_disk_paths);
    std::string failure;
    if (used.uncounted) {
      failure = args_.host + " has directories deeper than " + std::to_string(kMaxDiskWalkDepth) +
                " levels, or that cannot be opened, in /opt/ml, its logs or its checkpoint "
                "directory: they cannot be counted against its disk limit";
    } else if (args_.limits.disk_bytes > 0 && used.bytes > args_.limits.disk_bytes) {
      failure = args_.host + " exceeded its disk limit of " + FormatBytes(args_.limits.disk_bytes) +
                " in /opt/ml, its logs and its checkpoint directory";
    } else if (args_.limits.files > 0 && used.files > args_.limits.files) {
      failure = args_.host + " exceeded its limit of " + std::to_string(args_.limits.files) +
                " files in /opt/ml, its logs and its checkpoint directory";
    }
    if (!failure.empty()) {
      std::fprintf(stderr, "allot supervisor: %s (%lld bytes, %lld files)\n", failure.c_str(),
                   static_cast<long long>(used.bytes), static_cast<long long>(used.files));
    }
    return failure;
  }

  // Stops the job for good once its trees hold more than its disk or file limit.
  void CheckDisk() {
    const Clock::time_point began = Clock::now();
    if (DiskLimited() && !kill_sent_) {
      limit_failure_ = DiskOverLimit();
      if (!limit_failure_.empty()) KillAll();
    }
    const Clock::time_point ended = Clock::now();
    next_disk_check_ =
        ended + PacedInterval(ended - began, DiskCheckInterval(), kLongestDiskCheckInterval);
  }

  Clock::duration DiskCheckInterval() const {
    if (cgroups_.dirs.empty()) return kDiskCheckIntervalWithoutCgroups;
    return kDiskCheckInterval;
  }

  const Args& args_;
  const pid_t child_;
  const CgroupPlan& cgroups_;
  Clock::time_point next_disk_check_;
  std::string limit_failure_;
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

// The command's environment: the job's (from --job-env) when it runs unsandboxed; bwrap gets
// the fixed clean one and the job's reaches the job through /run/allot/environment.
Result<std::map<std::string, std::string>> CommandEnvironment(const Args& args) {
  if (args.sandboxed || args.job_env.empty()) return CleanEnvironment();
  const Result<std::string> text = env::ReadFile(args.job_env);
  if (!text.ok()) return text.status();
  return DecodeEnvironment(*text);
}

// The host's memory and pids groups, created; none (said on stderr) where that failed.
CgroupPlan SetUpCgroups(const Args& args) {
  if (args.cgroup_name.empty()) return {};
  CgroupPlan plan =
      PlanOwnCgroups(args.cgroup_name + "-" + std::to_string(::getpid()), args.limits);
  if (plan.kind == CgroupKind::kNone) {
    std::fprintf(stderr,
                 "allot supervisor: no cgroup hierarchy for the memory and process "
                 "limits; they are not enforced\n");
    return plan;
  }
  const Status created = CreateCgroups(plan);
  if (created.ok()) return plan;
  std::fprintf(stderr, "allot supervisor: the memory and process limits are not enforced: %s\n",
               created.message().c_str());
  return {};
}

// What holds for this host: bwrap's part (--enforced) and the supervisor's.
std::string EnforcedLimits(const Args& args, const CgroupPlan& plan) {
  JobLimits applied;
  for (const auto& [file, value] : plan.writes) {
    if (file.ends_with("/memory.limit_in_bytes") || file.ends_with("/memory.max")) {
      applied.memory_bytes = args.limits.memory_bytes;
    }
    if (file.ends_with("/pids.max")) applied.pids = args.limits.pids;
  }
  if (!args.disk_paths.empty() || !args.checkpoint_disk_paths.empty()) {
    applied.disk_bytes = args.limits.disk_bytes;
    applied.files = args.limits.files;
  }
  std::string text = args.sandboxed ? args.enforced : "unsandboxed";
  const std::string own = DescribeLimits(std::nullopt, applied);
  if (!own.empty()) text += (text.empty() ? "" : " ") + own;
  // Whether this host's kernel keeps the job's abstract sockets and signals its own
  // (ipc_scope.h): the server warns of its own kernel only, and a Slurm node's may be older.
  if (args.sandboxed) text += JobIpcScopeAvailable() ? " ipc=scoped" : " ipc=unscoped";
  return text;
}

// A limit that ended the job becomes its failure (/opt/ml/output/failure, SageMaker's file).
void RecordLimitFailure(const Args& args, const std::string& limit_failure, const CgroupPlan& plan,
                        int exit_code) {
  std::string failure = limit_failure;
  if (failure.empty() && exit_code != 0 && CgroupOomKills(plan) > 0) {
    failure =
        args.host + " ran out of memory: its limit is " + FormatBytes(args.limits.memory_bytes);
  }
  // SIGXFSZ: a write past RLIMIT_FSIZE (bubblewrap reports a signal as 128 + its number).
  const bool file_too_large =
      exit_code == -SIGXFSZ || (args.sandboxed && exit_code == 128 + SIGXFSZ);
  if (failure.empty() && file_too_large && args.limits.disk_bytes > 0) {
    failure = args.host + " wrote a file as large as its disk limit of " +
              FormatBytes(args.limits.disk_bytes) + " and was stopped (SIGXFSZ)";
  }
  if (failure.empty()) return;
  const Status written = WriteJobFile(args, "failure", failure);
  if (!written.ok()) std::fprintf(stderr, "allot supervisor: %s\n", written.message().c_str());
}

// The refusal of a channel directory that cannot be opened where the server checked it.
Status NotTheCheckedOne(const std::string& path, const Status& opened) {
  return FailedPrecondition("the channel directory '" + path +
                            "' is no longer the one the server checked (" + opened.message() +
                            "): it is not bound");
}

// The directory at `path`, opened only if no symbolic link is on the way: each component is
// opened without following a link (env::OpenPathBeneath), so a refusal says nothing of where
// a link leads or whether that exists. The server resolved the path's links and checked it
// against its file roots; a link put on it since would lead elsewhere.
Result<int> OpenAsChecked(const std::string& path) {
  Result<int> fd = env::OpenPathBeneath("/", path);
  if (fd.ok()) return fd;
  return NotTheCheckedOne(path, fd.status());
}

// OpenAsChecked as `user`: a directory the job's own uid could not reach is not bound, and the
// refusal says so; other refusals as OpenAsChecked's.
Result<int> OpenAsUser(const std::optional<JobUser>& user, const std::string& path) {
  if (!user) return OpenAsChecked(path);
  // The kernel checks each directory on the way as the job's (env/acting_as.h); bwrap, which
  // mounts as root, then binds what that user reached. The supervisor has no other thread.
  const AsJobUser as(user);
  ALLOT_RETURN_IF_ERROR(as.Taken("open the channel directory '" + path + "'"));
  int error = 0;
  Result<int> fd = env::OpenPathBeneath("/", path, &error);
  if (fd.ok()) return fd;
  if (error == EACCES || error == EPERM) return ChannelUnreachable("", *user, path, fd.status());
  const StatusCode code = fd.status().code();
  if (code == StatusCode::kNotFound || code == StatusCode::kFailedPrecondition) {
    return NotTheCheckedOne(path, fd.status());  // as root's: a link, or nothing, is there now
  }
  return fd.status();
}

void CloseAll(const std::vector<int>& fds) {
  for (const int fd : fds) ::close(fd);
}

// Each `--ro-bind SOURCE DEST` of bwrap's arguments for a source in `sources` becomes
// `--ro-bind-fd FD DEST`, with a descriptor of its own (bwrap closes each once it mounted it);
// the descriptors go into request.keep_fds.
Status BindByDescriptors(const std::vector<std::string>& sources,
                         const std::optional<JobUser>& user, SpawnRequest& request) {
  // A directory named twice (two channels of one directory) is bound at both places.
  for (const std::string& source : std::set<std::string>(sources.begin(), sources.end())) {
    std::size_t at = FindReadOnlyBind(request.argv, source);
    if (at == std::string::npos) return Internal("the sandbox binds nothing from '" + source + "'");
    for (; at != std::string::npos; at = FindReadOnlyBind(request.argv, source)) {
      Result<int> fd = OpenAsUser(user, source);
      if (!fd.ok()) return fd.status();
      request.keep_fds.push_back(*fd);
      request.argv[at] = "--ro-bind-fd";
      request.argv[at + 1] = std::to_string(*fd);
    }
  }
  return Status::Ok();
}

// Starts the command; 0 and its pid, or the exit code the supervisor ends with.
Result<pid_t> StartCommand(Args& args, const CgroupPlan& cgroups) {
  Result<std::map<std::string, std::string>> environment = CommandEnvironment(args);
  if (!environment.ok()) return environment.status();
  SpawnRequest request;
  request.argv = args.command;
  request.environment = std::move(environment).value();
  request.isolation = SpawnRequest::Isolation::kProcessGroup;
  request.join_cgroups = cgroups.procs;
  request.ignore_sigterm = args.sandboxed;  // bwrap; the job gets the default back (job_exec)
  request.max_file_bytes = args.limits.disk_bytes;
  const Status bound = BindByDescriptors(args.bind_by_fd, args.bind_as, request);
  if (!bound.ok()) {
    CloseAll(request.keep_fds);
    return bound;
  }
  Result<pid_t> pid = SpawnProcess(request);
  CloseAll(request.keep_fds);  // bwrap has its own; it closes them once it mounted each
  return pid;
}

}  // namespace

int SuperviseMain(int argc, char** argv) {
  std::optional<Args> args = ParseArgs(argc, argv);
  if (!args) {
    std::fprintf(stderr,
                 "usage: allot __supervise --dir DIR --output-dir DIR [--grace-ms N] "
                 "[--ready-fd N] [--sandboxed] [--job-env FILE] [--host NAME] [--enforced TEXT] "
                 "[--cgroup-name NAME --memory-limit BYTES --pids-limit N] "
                 "[--disk-limit BYTES --file-limit N --disk-path DIR... --checkpoint-disk-path "
                 "DIR...] [--bind-by-fd DIR...] "
                 "[--bind-as UID:GID] -- COMMAND...\n");
    return 2;
  }
  // Blocked before the command starts, so a stop is never lost; the command gets the defaults.
  const sigset_t signals = StopSignals();
  ::sigprocmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGPIPE, SIG_IGN);
  // Whatever the server's umask, the sandbox's directories (which bwrap makes) are readable by
  // the job's user, and the job starts with the usual 022.
  ::umask(022);

  const CgroupPlan cgroups = SetUpCgroups(*args);
  const Timestamp started_at = EpochMillisNow();
  const Result<pid_t> child = StartCommand(*args, cgroups);
  if (!child.ok()) {
    std::fprintf(stderr, "allot supervisor: %s\n", child.status().message().c_str());
    Report(args->ready_fd, child.status());
    RemoveCgroups(cgroups);
    return 127;
  }
  SupervisorRecord record;
  record.pid = ::getpid();
  record.start_time = env::RunningStartTime(record.pid).value_or(0);
  record.child_pid = *child;
  record.child_start_time = env::RunningStartTime(*child).value_or(0);  // 0: it already exited
  record.output_dir = args->output_dir;
  record.limits = EnforcedLimits(*args, cgroups);
  const Status recorded = WriteSupervisorRecord(args->dir, record);
  if (!recorded.ok()) std::fprintf(stderr, "allot supervisor: %s\n", recorded.message().c_str());
  Report(args->ready_fd, recorded);  // without supervisor.json it could not be adopted

  if (!recorded.ok()) {
    ::kill(-*child, SIGKILL);
    while (::waitpid(*child, nullptr, 0) < 0 && errno == EINTR) {
    }
    RemoveCgroups(cgroups);
    return 1;
  }
  Supervision supervision(*args, *child, cgroups);
  int exit_code = supervision.Run();
  // A host that exited 0 over its limit did not succeed: it fails as if stopped then.
  if (supervision.CheckDiskAtEnd() && exit_code == 0) exit_code = 1;
  RecordLimitFailure(*args, supervision.limit_failure(), cgroups, exit_code);
  RemoveCgroups(cgroups);
  return RecordStatus(args->dir, HostStatus{exit_code, started_at, EpochMillisNow()});
}

}  // namespace allot::exec
