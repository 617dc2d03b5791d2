#include "exec/sagemaker_layout.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "env/files.h"
#include "env/tree_walk.h"
#include "exec/as_job_user.h"
#include "exec/job_exec.h"
#include "exec/sandbox.h"
#include "exec/spawn.h"
extern "C" char** environ;  // NOLINT(readability-redundant-declaration)

namespace allot::exec {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSandboxMl = "/opt/ml";
constexpr std::size_t kFailureLimit = 1024;
// Files being copied are written under this prefix, then renamed; copies skip such names.
constexpr std::string_view kPartialPrefix = ".allot-partial-";
// What of a failed copy's own words its error carries (the job's status shows it).
constexpr std::size_t kCopyErrorLimit = 600;

// ---------------------------------------------------------------------------------------------
// JSON (nlohmann-json), written the way Python's json.dumps writes it by default (", " and ": "
// between items), as the SageMaker training toolkit does; keys keep the order they are given.

using Json = nlohmann::ordered_json;
using JsonFields = std::vector<std::pair<std::string, Json>>;

// A hyperparameter is the caller's text: one nested deeper than the request body may be is taken
// as a plain string, so that no recursion follows the caller's nesting.
constexpr int kMaxHyperparameterDepth = 64;

void AppendPythonJson(const Json& j, std::string& out) {
  if (j.is_object()) {
    out += '{';
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it != j.begin()) out += ", ";
      out += Json(it.key()).dump(-1, ' ', false, Json::error_handler_t::replace);
      out += ": ";
      AppendPythonJson(it.value(), out);
    }
    out += '}';
  } else if (j.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (i > 0) out += ", ";
      AppendPythonJson(j[i], out);
    }
    out += ']';
  } else {
    out += j.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

std::string PythonJson(const Json& j) {
  std::string out;
  AppendPythonJson(j, out);
  return out;
}

Json FieldsObject(const JsonFields& fields) {
  Json out = Json::object();
  for (const auto& [key, value] : fields) out[key] = value;
  return out;
}

// `text` as one JSON value, when it is one and nests at most kMaxHyperparameterDepth levels.
std::optional<Json> ParsedHyperparameter(const std::string& text) {
  bool too_deep = false;
  Json parsed = Json::parse(
      text,
      [&too_deep](int depth, Json::parse_event_t /*event*/, Json& /*value*/) {
        too_deep = too_deep || depth > kMaxHyperparameterDepth;
        return !too_deep;
      },
      /*allow_exceptions=*/false);
  if (too_deep || parsed.is_discarded()) return std::nullopt;
  return parsed;
}

// The value SM_HPS carries for a hyperparameter: the value decoded when it is JSON (as the
// training toolkit decodes it), else the string.
Json HpsValue(const std::string& value) {
  std::optional<Json> parsed = ParsedHyperparameter(value);
  return parsed ? *parsed : Json(value);
}

// SM_HP_<NAME>: a JSON string's contents, any other value as given.
std::string HpEnvValue(const std::string& value) {
  std::optional<Json> parsed = ParsedHyperparameter(value);
  return parsed && parsed->is_string() ? parsed->get<std::string>() : value;
}

// ---------------------------------------------------------------------------------------------
// Files.

std::string ErrorText(const std::error_code& ec) { return ec.message(); }

Status MakeDirs(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Internal("cannot create directory '" + dir.string() + "': " + ErrorText(ec));
  if (!fs::is_directory(dir, ec)) {
    return Internal("'" + dir.string() + "' exists and is not a directory");
  }
  return Status::Ok();
}

// Makes `path` an empty directory (a mount point) unless it is one already; replaces a symbolic
// link left there.
Status EnsureMountPoint(const fs::path& path) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (fs::is_symlink(st)) {
    fs::remove(path, ec);
    if (ec) return Internal("cannot remove '" + path.string() + "': " + ErrorText(ec));
  }
  return MakeDirs(path);
}

// Makes `link` a symbolic link to `target`, replacing an older link or an empty directory.
Status EnsureSymlink(const fs::path& link, const fs::path& target) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(link, ec);
  ec.clear();
  if (fs::is_symlink(st)) {
    if (fs::read_symlink(link, ec) == target && !ec) return Status::Ok();
    ec.clear();
    fs::remove(link, ec);
  } else if (fs::exists(st)) {
    fs::remove(link, ec);  // only an empty directory or a file goes
  }
  if (ec) return Internal("cannot replace '" + link.string() + "': " + ErrorText(ec));
  fs::create_directory_symlink(target, link, ec);
  if (ec) {
    return Internal("cannot link '" + link.string() + "' to '" + target.string() +
                    "': " + ErrorText(ec));
  }
  return Status::Ok();
}

struct FileInfo {
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
};

bool Lstat(const fs::path& path, struct stat* st) { return ::lstat(path.c_str(), st) == 0; }

// Nanoseconds since the epoch, saturated: a job sets what time it likes on its files (touch -d
// 2400-01-01), and the product would overflow past 2262.
std::int64_t MtimeNs(const struct stat& st) {
  constexpr std::int64_t kLimit = std::numeric_limits<std::int64_t>::max() / 1000000000LL - 1;
  const std::int64_t seconds = std::clamp<std::int64_t>(st.st_mtim.tv_sec, -kLimit, kLimit);
  return seconds * 1000000000LL + static_cast<std::int64_t>(st.st_mtim.tv_nsec);
}

bool SameMtime(const struct stat& a, const struct stat& b) {
  return a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

// A path for a message: the job names its files, and a newline in a name must not start a line
// of the server's log.
std::string Shown(const fs::path& path) { return EscapeControls(path.string()); }

// Copies one regular file, keeping its modification time; skips it when the destination has the
// same size and modification time already.
Status CopyFileKeepingTime(const fs::path& from, const struct stat& from_st, const fs::path& to) {
  struct stat to_st {};
  if (Lstat(to, &to_st) && S_ISREG(to_st.st_mode) && to_st.st_size == from_st.st_size &&
      SameMtime(to_st, from_st)) {
    return Status::Ok();
  }
  const fs::path tmp = to.parent_path() / (std::string(kPartialPrefix) + to.filename().string());
  std::error_code ec;
  // Whatever is at the temporary name goes first: a link a job left there is never written
  // through (copies run when no process of the job runs, so nothing can put one back).
  fs::remove(tmp, ec);
  // Holes kept, and no wait on a lease a job of the share holds on a file of the location.
  // A failed copy leaves no part of the file (it is no checkpoint, and may fill the disk).
  if (const Status copied = env::CopyFileData(from.string(), tmp.string()); !copied.ok()) {
    return Internal(EscapeControls(copied.message()));  // the job named the files
  }
  // The copy is its uid's alone (the job's own mode, 0644 under its umask, is not kept), so that
  // another share's uid reads none of its checkpoints.
  if (::chmod(tmp.c_str(), from_st.st_mode & S_IRWXU) != 0) {
    const int error = errno;
    fs::remove(tmp, ec);
    return Internal("cannot set the mode of '" + Shown(to) + "': " + std::strerror(error));
  }
  const struct timespec times[2] = {from_st.st_atim, from_st.st_mtim};
  if (::utimensat(AT_FDCWD, tmp.c_str(), times, 0) != 0) {
    const int error = errno;
    fs::remove(tmp, ec);
    return Internal("cannot set the time of '" + Shown(to) + "': " + std::strerror(error));
  }
  if (fs::is_directory(fs::symlink_status(to, ec))) fs::remove_all(to, ec);
  fs::rename(tmp, to, ec);
  if (ec) {
    const std::string message = ErrorText(ec);
    fs::remove(tmp, ec);
    return Internal("cannot copy '" + Shown(from) + "' to '" + Shown(to) + "': " + message);
  }
  return Status::Ok();
}

// Whether the tree under `from` fits `budget` before a byte of it is copied: a copy writes each
// file's whole length, so a sparse file counts its length, not the blocks it holds (twenty
// files of 15 MiB made by truncate took no disk in the job and 300 MiB in the copy). Also
// refused: a tree deeper than the disk check walks, or one that cannot be read through.
Status CheckCopyBudget(const fs::path& from, const CopyBudget& budget) {
  const int top = env::OpenTreeTop(from.c_str());
  if (top < 0) return Internal("cannot read '" + Shown(from) + "': " + std::strerror(errno));
  std::int64_t bytes = 0;
  std::int64_t files = 0;
  bool over = false;
  const env::WalkEnd end = env::WalkTree(top, kMaxDiskWalkDepth, [&](const env::WalkedEntry& e) {
    if (S_ISREG(e.st.st_mode)) bytes += static_cast<std::int64_t>(e.st.st_size);
    ++files;
    over = (budget.bytes > 0 && bytes > budget.bytes) || (budget.files > 0 && files > budget.files);
    return !over;
  });
  if (end == env::WalkEnd::kTooDeep) {
    return FailedPrecondition("the checkpoints have directories deeper than " +
                              std::to_string(kMaxDiskWalkDepth) + " levels: not copied");
  }
  if (end == env::WalkEnd::kUnreadable) {
    return FailedPrecondition("the checkpoints have a directory that cannot be read: not copied");
  }
  if (over && budget.bytes > 0 && bytes > budget.bytes) {
    return FailedPrecondition("the checkpoints hold more than the job's disk limit of " +
                              FormatBytes(budget.bytes) +
                              " (files counted at their full length): not copied");
  }
  if (over) {
    return FailedPrecondition("the checkpoints hold more than the job's limit of " +
                              std::to_string(budget.files) + " files: not copied");
  }
  return Status::Ok();
}

// Copies the tree under `from` into `to` (created), keeping modification times. Files only in
// `to` stay. Symbolic links are copied as links; other special files are skipped. Its depth is
// CheckCopyBudget's to bound; each level holds the names of one directory, not their paths.
Status CopyTreeWithin(const fs::path& from, const fs::path& to) {
  ALLOT_RETURN_IF_ERROR(MakeDirs(to));
  std::error_code ec;
  fs::directory_iterator it(from, ec);
  if (ec) return Internal("cannot read '" + Shown(from) + "': " + ErrorText(ec));
  std::vector<std::string> names;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    names.push_back(it->path().filename().string());
  }
  if (ec) return Internal("cannot read '" + Shown(from) + "': " + ErrorText(ec));
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    if (name.rfind(kPartialPrefix, 0) == 0) continue;
    const fs::path src = from / name;
    const fs::path dst = to / name;
    struct stat st {};
    if (!Lstat(src, &st)) continue;  // gone meanwhile
    if (S_ISDIR(st.st_mode)) {
      struct stat dst_st {};
      if (Lstat(dst, &dst_st) && !S_ISDIR(dst_st.st_mode)) fs::remove(dst, ec);
      ALLOT_RETURN_IF_ERROR(CopyTreeWithin(src, dst));
      const struct timespec times[2] = {st.st_atim, st.st_mtim};
      ::utimensat(AT_FDCWD, dst.c_str(), times, 0);  // best effort
    } else if (S_ISREG(st.st_mode)) {
      ALLOT_RETURN_IF_ERROR(CopyFileKeepingTime(src, st, dst));
    } else if (S_ISLNK(st.st_mode)) {
      const fs::path target = fs::read_symlink(src, ec);
      if (ec) continue;
      struct stat dst_st {};
      if (Lstat(dst, &dst_st)) {
        if (S_ISDIR(dst_st.st_mode)) {
          fs::remove_all(dst, ec);
        } else {
          fs::remove(dst, ec);
        }
      }
      fs::create_symlink(target, dst, ec);
      if (ec) return Internal("cannot copy the link '" + Shown(src) + "': " + ErrorText(ec));
    }
  }
  return Status::Ok();
}

Status CopyTree(const fs::path& from, const fs::path& to, const CopyBudget& budget) {
  ALLOT_RETURN_IF_ERROR(CheckCopyBudget(from, budget));
  return CopyTreeWithin(from, to);
}

// ---------------------------------------------------------------------------------------------
// The sandbox.

// Runs argv with 0-2 on /dev/null (and `pass_fd`, when >= 0, as descriptor `pass_as`) and
// returns whether it exited 0.
bool RunQuietly(const std::vector<std::string>& argv, int pass_fd = -1, int pass_as = -1) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  if (posix_spawn_file_actions_init(&actions) != 0) return false;
  for (int fd = 0; fd <= 2; ++fd) {
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  }
  if (pass_fd >= 0) posix_spawn_file_actions_adddup2(&actions, pass_fd, pass_as);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return false;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return false;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool ProbeSandbox(const std::string& bwrap) {
  if (bwrap.empty() || ::access(bwrap.c_str(), X_OK) != 0) return false;
  // The namespaces and mounts every sandboxed host gets (sandbox.h), around /bin/true.
  std::vector<std::string> argv = {bwrap,           "--unshare-pid", "--unshare-ipc",
                                   "--unshare-uts", "--new-session", "--die-with-parent"};
  for (const RootEntry& entry : SystemRootEntries()) {
    const std::string seen = "/" + entry.name;
    if (entry.link_target.empty()) {
      argv.insert(argv.end(), {"--ro-bind", seen, seen});
    } else {
      argv.insert(argv.end(), {"--symlink", entry.link_target, seen});
    }
  }
  argv.insert(argv.end(), {"--dev", "/dev", "--proc", "/proc", "--perms", "1777", "--size",
                           "1048576", "--tmpfs", "/tmp", "--tmpfs", "/opt"});
  // Channels are bound from descriptors (`--ro-bind-fd`: bubblewrap 0.10, or a distribution's
  // backport such as Debian 12's 0.8.0-2+deb12u1); a bubblewrap without it would fail every job
  // that reads a channel, after its start.
  const int usr = ::open("/usr", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (usr < 0) return false;
  const int passed_as = usr == 3 ? 4 : 3;  // dup2 onto a number of its own clears O_CLOEXEC
  argv.insert(argv.end(),
              {"--ro-bind-fd", std::to_string(passed_as), "/opt/probe", "--", "/bin/true"});
  const bool works = RunQuietly(argv, usr, passed_as);
  ::close(usr);
  return works;
}

// The GPU device nodes a job needs to see inside the sandbox's private /dev.
std::vector<std::string> GpuDevices() {
  std::vector<std::string> devices;
  std::error_code ec;
  fs::directory_iterator it("/dev", ec);
  if (ec) return devices;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    if (name.rfind("nvidia", 0) == 0 || name == "dri" || name == "kfd") {
      devices.push_back(it->path().string());
    }
  }
  std::sort(devices.begin(), devices.end());
  return devices;
}

// The job's environment file in the host's directory (sandbox.h EncodeEnvironment).
constexpr char kJobEnvFile[] = "job-env";

Status NoSandboxError(const LayoutOptions& options) {
  return FailedPrecondition("no sandbox: bubblewrap ('" + options.bwrap +
                            "') is missing, does not work here or lacks --ro-bind-fd (bubblewrap "
                            "0.10, or a backport such as Debian 12's), and jobs run only in the "
                            "sandbox unless the server is started with --no-sandbox");
}

// Whom a sandboxed job runs as: its share's user; nobody if it has none while the server is
// root; the server's own user (in a user namespace bwrap makes) when the server is not root.
std::optional<JobUser> JobUserOf(const LaunchSpec& spec) {
  if (::geteuid() != 0) return std::nullopt;
  return spec.user.value_or(kNobodyUser);
}

// The allot binary, which the sandbox runs as its exec step.
std::string SelfExe(const LaunchSpec& spec) {
  std::error_code ec;
  const std::string exe = spec.self_exe.empty() ? "/proc/self/exe" : spec.self_exe;
  const fs::path resolved = fs::canonical(exe, ec);
  return ec ? exe : resolved.string();
}

// Gives `root` and everything under it to the job's user; links are changed, never followed.
// The job of another host of the attempt may be running and changing the tree meanwhile (the
// checkpoint directory is the job's, and what an earlier attempt left there too): each entry is
// changed through its parent's descriptor and no link is followed on the way (env::WalkTree), so
// a directory swapped for a link to a file of the server's is never reached.
Status GiveTree(const fs::path& root, const JobUser& user) {
  const auto cannot = [&](const std::string& what, int error) {
    return Internal("cannot give '" + root.string() + "'" + what + " to uid " +
                    std::to_string(user.uid) + ": " + std::strerror(error));
  };
  const int top = env::OpenTreeTop(root.c_str());
  if (top < 0 || ::fchown(top, user.uid, user.gid) != 0) {
    const int error = errno;
    if (top >= 0) ::close(top);
    return cannot("", error);
  }
  int failed = 0;
  int unreadable = 0;
  const env::WalkEnd end = env::WalkTree(
      top, kMaxDiskWalkDepth,
      [&](const env::WalkedEntry& e) {
        // A file with another name elsewhere is never the server's to give: a hard link the job
        // made (each of its writable views is a mount of its own, so link() cannot reach outside
        // them today; this does not rely on that).
        if (!S_ISDIR(e.st.st_mode) && e.st.st_nlink > 1 && e.st.st_uid != user.uid) return true;
        if (::fchownat(e.dir_fd, e.name, user.uid, user.gid, AT_SYMLINK_NOFOLLOW) == 0 ||
            errno == ENOENT) {
          return true;
        }
        failed = errno;
        return false;
      },
      &unreadable);
  if (failed != 0) return cannot(" (an entry)", failed);
  if (end == env::WalkEnd::kTooDeep) {
    return FailedPrecondition("'" + root.string() + "' has directories deeper than " +
                              std::to_string(kMaxDiskWalkDepth) +
                              " levels, which cannot be given to the job's user");
  }
  if (end == env::WalkEnd::kUnreadable) {
    return cannot(" (a directory changed or could not be read meanwhile)", unreadable);
  }
  return Status::Ok();
}

// SageMaker's pattern for channel names: [A-Za-z0-9\.\-_]+ (and never "." or "..").
bool ValidChannelName(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_';
  });
}

bool IsUnder(const fs::path& path, const fs::path& dir) {
  auto p = path.begin();
  for (auto d = dir.begin(); d != dir.end(); ++d, ++p) {
    if (d->empty()) continue;  // a trailing separator
    if (p == path.end() || *p != *d) return false;
  }
  return true;
}

int CountGpus(const std::map<std::string, std::string>& environment) {
  const auto it = environment.find("CUDA_VISIBLE_DEVICES");
  if (it == environment.end()) return 0;
  int count = 0;
  for (std::string_view part : Split(it->second, ',')) {
    const std::string_view entry = Trim(part);
    if (entry.empty() || entry[0] == '-') break;  // CUDA stops at an invalid entry ("-1")
    ++count;
  }
  return count;
}

std::string HostName(int index) { return "algo-" + std::to_string(index); }

}  // namespace

bool SandboxAvailable(const LayoutOptions& options) {
  if (!options.sandbox) return false;
  static std::mutex mu;
  static std::map<std::string, bool> cache;  // by bwrap path
  std::lock_guard<std::mutex> lock(mu);
  const auto it = cache.find(options.bwrap);
  if (it != cache.end()) return it->second;
  const bool available = ProbeSandbox(options.bwrap);
  cache.emplace(options.bwrap, available);
  return available;
}

Result<std::string> JobCheckpointDir(const std::string& job_dir) {
  if (job_dir.empty()) return InvalidArgument("the job directory is not set");
  const fs::path dir = fs::path(job_dir) / "checkpoints";
  ALLOT_RETURN_IF_ERROR(MakeDirs(dir));
  return dir.string();
}

namespace {

// CPUs in a list such as "0-3,8,10-11".
unsigned CountCpus(const std::string& list) {
  unsigned n = 0;
  std::size_t pos = 0;
  while (pos < list.size()) {
    std::size_t end = list.find(',', pos);
    if (end == std::string::npos) end = list.size();
    const std::string part = list.substr(pos, end - pos);
    const auto dash = part.find('-');
    if (dash == std::string::npos) {
      ++n;
    } else {
      const auto lo = std::strtoul(part.substr(0, dash).c_str(), nullptr, 10);
      const auto hi = std::strtoul(part.substr(dash + 1).c_str(), nullptr, 10);
      n += hi >= lo ? static_cast<unsigned>(hi - lo + 1) : 0U;
    }
    pos = end + 1;
  }
  return n;
}

using Channels = std::vector<std::pair<std::string, fs::path>>;  // name, absolute source

// Why `channel`'s directory cannot be bound, from the failure to open it without following a
// link (env::OpenPathBeneath) as `as` (errno `error`).
Status ChannelRefused(const LaunchSpec::Channel& channel, const Status& opened,
                      const std::optional<JobUser>& as = std::nullopt, int error = 0) {
  const std::string what = "channel '" + channel.name + "': ";
  if (as && (error == EACCES || error == EPERM)) {
    return ChannelUnreachable(what, *as, channel.source_dir, opened);
  }
  switch (opened.code()) {
    case StatusCode::kNotFound:
      return FailedPrecondition(what + "the directory '" + channel.source_dir + "' does not exist");
    case StatusCode::kFailedPrecondition:
      return FailedPrecondition(
          what + "the directory '" + channel.source_dir +
          "' has a symbolic link on its path, or something not a directory, which was put there "
          "after the server checked it (on a Slurm node, the path must also lead there without "
          "links, as on the server)");
    default:
      return FailedPrecondition(what + opened.message());
  }
}

// Channels: names valid and distinct, sources existing directories with no symbolic link on
// their paths, which `as` (the job's user, when it has one) may reach (env/acting_as.h: this
// thread only; the supervisor checks again as it opens each for good).
Result<Channels> ResolveChannels(const LaunchSpec& spec, const std::optional<JobUser>& as) {
  std::set<std::string> seen;
  Channels channels;
  const AsJobUser acting(spec.channels.empty() ? std::nullopt : as);
  ALLOT_RETURN_IF_ERROR(acting.Taken("check its channels"));
  for (const auto& channel : spec.channels) {
    if (!ValidChannelName(channel.name)) {
      return InvalidArgument("invalid channel name '" + channel.name + "'");
    }
    if (!seen.insert(channel.name).second) {
      return InvalidArgument("channel '" + channel.name + "' is given twice");
    }
    std::error_code ec;
    fs::path source = fs::absolute(channel.source_dir, ec).lexically_normal();
    if (source.has_parent_path() && source.filename().empty()) source = source.parent_path();
    // The server resolved every link on the path before it checked it against its file roots.
    // A link found on it now was put there since, and leads where nobody checked: bind nothing.
    // No link is followed here, so the refusal tells nothing of where one leads.
    if (channel.source_dir.empty() || ec) return ChannelRefused(channel, NotFound("no path"));
    int error = 0;
    const Result<int> fd = env::OpenPathBeneath("/", source.string(), &error);
    if (!fd.ok()) return ChannelRefused(channel, fd.status(), as, error);
    ::close(*fd);
    channels.emplace_back(channel.name, std::move(source));
  }
  return channels;
}

// Where the job sees the checkpoint directory: CheckpointConfig.LocalPath (in the sandbox, an
// absolute path outside /opt/ml that bwrap can mount), else /opt/ml/checkpoints.
Result<fs::path> CheckpointLocalPath(const LaunchSpec& spec, bool sandboxed) {
  fs::path local_path = spec.checkpoint_local_path.empty()
                            ? fs::path("/opt/ml/checkpoints")
                            : fs::path(spec.checkpoint_local_path).lexically_normal();
  if (!sandboxed) return local_path;
  if (!local_path.is_absolute() || std::any_of(local_path.begin(), local_path.end(),
                                               [](const fs::path& p) { return p == ".."; })) {
    return InvalidArgument("CheckpointConfig.LocalPath '" + spec.checkpoint_local_path +
                           "' must be an absolute path");
  }
  if (local_path.filename().empty()) local_path = local_path.parent_path();  // trailing '/'
  if (local_path == "/" || IsUnder(kSandboxMl, local_path) ||
      IsUnder(local_path, fs::path(kSandboxMl) / "input")) {
    return InvalidArgument("CheckpointConfig.LocalPath '" + spec.checkpoint_local_path +
                           "' cannot be used as the checkpoint directory");
  }
  // The sandbox's root is its own (bwrap makes the directories on the way); the system's
  // directories are refused at submission. Inside (or over) a directory the admin shares
  // read-only from the machine the mount point would have to exist there: refused by the paths
  // alone, so that the answer never tells what exists on the machine.
  for (const std::string& shared : spec.readonly_paths) {
    if (IsUnder(local_path, shared) || IsUnder(shared, local_path)) {
      return InvalidArgument("CheckpointConfig.LocalPath '" + spec.checkpoint_local_path +
                             "' overlaps '" + shared +
                             "', which the sandbox shares read-only from the machine");
    }
  }
  return local_path;
}

// What PrepareHost has worked out for one host before it writes anything.
struct HostLayout {
  bool sandboxed = false;
  int host_index = 1;
  std::string host;                    // algo-<host_index>, or its LaunchSpec::host_names entry
  std::vector<std::string> hosts;      // algo-1 .. algo-N, or LaunchSpec::host_names
  std::vector<std::string> addresses;  // LaunchSpec::host_addresses; empty: all 127.0.0.1
  Channels channels;
  std::string checkpoint_dir;   // the job's checkpoint directory on the machine
  fs::path local_path;          // where the job sees it
  fs::path ml;                  // <attempt_dir>/<host>/ml, the host's /opt/ml
  fs::path host_dir;            // <attempt_dir>/<host>: root's, never seen by the job
  std::optional<JobUser> user;  // sandboxed only: whom the job runs as
};

// The host's tree: /opt/ml's directories, a mount point or a symlink per channel, and in the
// sandbox a mount point for a checkpoint directory under /opt/ml.
Status MakeHostTree(const HostLayout& layout) {
  const fs::path data = layout.ml / "input" / "data";
  ALLOT_RETURN_IF_ERROR(MakeDirs(layout.ml / "input" / "config"));
  ALLOT_RETURN_IF_ERROR(MakeDirs(data));
  ALLOT_RETURN_IF_ERROR(MakeDirs(layout.ml / "model"));
  ALLOT_RETURN_IF_ERROR(MakeDirs(layout.ml / "output" / "data"));
  ALLOT_RETURN_IF_ERROR(MakeDirs(layout.ml / "output" / "intermediate"));
  for (const auto& [name, source] : layout.channels) {
    if (layout.sandboxed) {
      ALLOT_RETURN_IF_ERROR(EnsureMountPoint(data / name));
    } else {
      ALLOT_RETURN_IF_ERROR(EnsureSymlink(data / name, source));
    }
  }
  if (layout.sandboxed && IsUnder(layout.local_path, kSandboxMl)) {
    ALLOT_RETURN_IF_ERROR(
        EnsureMountPoint(layout.ml / layout.local_path.lexically_relative(kSandboxMl)));
  }
  return Status::Ok();
}

// Paths as the job sees them.
struct SeenPaths {
  std::string ml;
  std::string checkpoints;
  std::string input_dir;
  std::string config_dir;
  std::string model_dir;
  std::string output_dir;
  std::string output_data_dir;
  std::string intermediate_dir;

  std::string ChannelDir(const std::string& name) const { return input_dir + "/data/" + name; }
};

SeenPaths SeenPathsOf(const HostLayout& layout) {
  SeenPaths seen;
  seen.ml = layout.sandboxed ? std::string(kSandboxMl) : layout.ml.string();
  seen.checkpoints = layout.sandboxed ? layout.local_path.string() : layout.checkpoint_dir;
  seen.input_dir = seen.ml + "/input";
  seen.config_dir = seen.input_dir + "/config";
  seen.model_dir = seen.ml + "/model";
  seen.output_dir = seen.ml + "/output";
  seen.output_data_dir = seen.output_dir + "/data";
  seen.intermediate_dir = seen.output_dir + "/intermediate";
  return seen;
}

// The documents of input/config/*.json, which SM_* variables repeat. (Its implicit constructor
// is noexcept but builds null JSON values, whose constructor nlohmann does not mark noexcept;
// a null value allocates nothing, so nothing can throw.)
struct ConfigDocs {  // NOLINT(bugprone-exception-escape)
  JsonFields hps;    // name, hyperparameter as SM_HPS gives it
  Json resource;
  Json data_config;
  std::vector<std::string> channel_names;
  JsonFields channel_dirs;  // name, the channel's directory
};

ConfigDocs MakeConfigDocs(const LaunchSpec& spec, const HostLayout& layout, const SeenPaths& seen) {
  ConfigDocs docs;
  for (const auto& [name, value] : spec.hyperparameters)
    docs.hps.emplace_back(name, HpsValue(value));
  docs.resource = FieldsObject(
      {{"current_host", layout.host}, {"hosts", layout.hosts}, {"network_interface_name", "lo"}});
  JsonFields data_config;
  for (const auto& [name, source] : layout.channels) {
    data_config.emplace_back(name, FieldsObject({{"TrainingInputMode", "File"},
                                                 {"S3DistributionType", "FullyReplicated"},
                                                 {"RecordWrapperType", "None"}}));
    docs.channel_names.push_back(name);
    docs.channel_dirs.emplace_back(name, seen.ChannelDir(name));
  }
  docs.data_config = FieldsObject(data_config);
  return docs;
}

// input/config/*.json
Status WriteConfigFiles(const LaunchSpec& spec, const HostLayout& layout, const SeenPaths& seen,
                        const ConfigDocs& docs) {
  const fs::path config = layout.ml / "input" / "config";
  JsonFields hp_file;
  for (const auto& [name, value] : spec.hyperparameters) hp_file.emplace_back(name, value);
  JsonFields checkpoint_config = {{"LocalPath", seen.checkpoints}};
  if (!spec.checkpoint_sync_dir.empty()) {
    std::error_code ec;
    const fs::path sync = fs::absolute(spec.checkpoint_sync_dir, ec).lexically_normal();
    checkpoint_config.emplace_back("S3Uri", "file://" + sync.string());
  }
  ALLOT_RETURN_IF_ERROR(
      env::WriteFileAtomically(config / "hyperparameters.json", PythonJson(FieldsObject(hp_file))));
  ALLOT_RETURN_IF_ERROR(
      env::WriteFileAtomically(config / "resourceconfig.json", PythonJson(docs.resource)));
  ALLOT_RETURN_IF_ERROR(
      env::WriteFileAtomically(config / "inputdataconfig.json", PythonJson(docs.data_config)));
  ALLOT_RETURN_IF_ERROR(env::WriteFileAtomically(config / "checkpointconfig.json",
                                                 PythonJson(FieldsObject(checkpoint_config))));
  return Status::Ok();
}

// /etc/hosts for the sandbox: the machine's, plus algo-1..N on the loopback interface. Returns
// its path, or an empty path where there is none to bind.
Result<fs::path> WriteEtcHosts(const HostLayout& layout) {
  std::error_code ec;
  if (!layout.sandboxed || !fs::is_regular_file("/etc/hosts", ec)) return fs::path();
  Result<std::string> machine_hosts = env::ReadFile("/etc/hosts");
  std::string text = machine_hosts.ok() ? *machine_hosts : "";
  if (!text.empty() && text.back() != '\n') text += '\n';
  if (layout.addresses.size() == layout.hosts.size()) {
    for (std::size_t i = 0; i < layout.hosts.size(); ++i) {
      text += layout.addresses[i] + " " + layout.hosts[i] + "\n";
    }
  } else {
    text += "127.0.0.1";
    for (const auto& h : layout.hosts) text += " " + h;
    text += "\n";
  }
  fs::path hosts_file = layout.ml.parent_path() / "etc-hosts";
  ALLOT_RETURN_IF_ERROR(env::WriteFileAtomically(hosts_file, text));
  return hosts_file;
}

// SM_TRAINING_ENV: SageMaker's summary of the training environment.
std::string TrainingEnvJson(const LaunchSpec& spec, const HostLayout& layout, const SeenPaths& seen,
                            const ConfigDocs& docs, const Json& hps, int num_gpus, unsigned cpus) {
  return PythonJson(FieldsObject({
      {"channel_input_dirs", FieldsObject(docs.channel_dirs)},
      {"current_host", layout.host},
      {"current_instance_type", spec.instance_type},
      {"hosts", layout.hosts},
      {"hyperparameters", hps},
      {"input_config_dir", seen.config_dir},
      {"input_data_config", docs.data_config},
      {"input_dir", seen.input_dir},
      {"is_master", layout.host_index == 1},
      {"job_name", spec.name},
      {"master_hostname", layout.hosts.front()},
      {"model_dir", seen.model_dir},
      {"network_interface_name", "lo"},
      {"num_cpus", cpus},
      {"num_gpus", num_gpus},
      {"output_data_dir", seen.output_data_dir},
      {"output_dir", seen.output_dir},
      {"output_intermediate_dir", seen.intermediate_dir},
      {"resource_config", docs.resource},
  }));
}

// The payload's Environment with the host's GPUs and the SM_* variables added.
std::map<std::string, std::string> HostEnvironment(const LaunchSpec& spec, const HostLayout& layout,
                                                   const SeenPaths& seen, const ConfigDocs& docs,
                                                   const LaunchSpec::HostSlot& slot) {
  std::map<std::string, std::string> env = spec.environment;
  if (!slot.gpus.empty()) env["CUDA_VISIBLE_DEVICES"] = slot.gpus;
  const int num_gpus = CountGpus(env);
  unsigned cpus = slot.cpus.empty() ? std::thread::hardware_concurrency() : CountCpus(slot.cpus);
  if (cpus == 0) cpus = 1;
  env["SM_HOSTS"] = PythonJson(layout.hosts);
  env["SM_CURRENT_HOST"] = layout.host;
  env["SM_NUM_HOSTS"] = std::to_string(spec.instance_count);
  env["SM_NETWORK_INTERFACE_NAME"] = "lo";
  if (!spec.instance_type.empty()) env["SM_CURRENT_INSTANCE_TYPE"] = spec.instance_type;
  env["SM_MODEL_DIR"] = seen.model_dir;
  env["SM_INPUT_DIR"] = seen.input_dir;
  env["SM_INPUT_CONFIG_DIR"] = seen.config_dir;
  env["SM_INPUT_DATA_CONFIG"] = PythonJson(docs.data_config);
  env["SM_OUTPUT_DIR"] = seen.output_dir;
  env["SM_OUTPUT_DATA_DIR"] = seen.output_data_dir;
  env["SM_OUTPUT_INTERMEDIATE_DIR"] = seen.intermediate_dir;
  env["SM_CHANNELS"] = PythonJson(docs.channel_names);
  for (const auto& name : docs.channel_names) {
    env["SM_CHANNEL_" + AsciiUpper(name)] = seen.ChannelDir(name);
  }
  const Json hps = FieldsObject(docs.hps);
  env["SM_HPS"] = PythonJson(hps);
  for (const auto& [name, value] : spec.hyperparameters)
    env["SM_HP_" + AsciiUpper(name)] = HpEnvValue(value);
  env["SM_NUM_GPUS"] = std::to_string(num_gpus);
  env["SM_NUM_CPUS"] = std::to_string(cpus);
  env["SM_RESOURCE_CONFIG"] = PythonJson(docs.resource);
  env["SM_TRAINING_ENV"] = TrainingEnvJson(spec, layout, seen, docs, hps, num_gpus, cpus);
  if (!spec.name.empty()) env["TRAINING_JOB_NAME"] = spec.name;
  env["ALLOT_CHECKPOINT_DIR"] = seen.checkpoints;
  return env;
}

// The command: the job's, pinned to the slot's CPUs, and in the sandbox wrapped in bwrap and
// the exec step that drops to the job's user (sandbox.h).
std::vector<std::string> HostCommand(const LaunchSpec& spec, const LayoutOptions& options,
                                     const HostLayout& layout, const SeenPaths& seen,
                                     const std::vector<std::pair<std::string, std::string>>& etc,
                                     const LaunchSpec::HostSlot& slot) {
  std::vector<std::string> command;
  if (!slot.cpus.empty()) command.insert(command.end(), {"taskset", "--cpu-list", slot.cpus});
  command.insert(command.end(), spec.argv.begin(), spec.argv.end());
  if (!layout.sandboxed) return command;
  BwrapPlan plan;
  plan.bwrap = options.bwrap;
  plan.hostname = layout.host;
  plan.die_with_parent = options.die_with_parent;
  plan.system = SystemRootEntries();
  plan.etc_files = EtcFiles();
  plan.generated = etc;
  plan.readonly_paths = spec.readonly_paths;
  plan.devices = GpuDevices();
  plan.tmp_bytes = spec.limits.tmp_bytes;
  plan.ml_dir = layout.ml.string();
  plan.checkpoint_dir = layout.checkpoint_dir;
  plan.checkpoint_seen = layout.local_path.string();
  for (const auto& [name, source] : layout.channels) {
    plan.channels.emplace_back(source.string(), seen.ChannelDir(name));
  }
  plan.exec = SelfExe(spec);
  plan.environment_file = (layout.host_dir / kJobEnvFile).string();
  plan.user = layout.user;
  plan.command = std::move(command);
  return BwrapArgs(plan);
}

// The job's environment file (root's, mode 0600): the supervisor or the exec step reads it.
Status WriteJobEnvironment(const HostLayout& layout,
                           const std::map<std::string, std::string>& environment) {
  Result<std::string> encoded = EncodeEnvironment(environment);
  if (!encoded.ok()) return encoded.status();
  return env::WriteFileAtomically((layout.host_dir / kJobEnvFile).string(), *encoded, 0600);
}

// /etc/passwd, /etc/group and /etc/hosts for the sandbox, in <host_dir>/etc; returns what to bind
// where.
Result<std::vector<std::pair<std::string, std::string>>> WriteSandboxEtc(const HostLayout& layout) {
  std::vector<std::pair<std::string, std::string>> files;
  if (!layout.sandboxed) return files;
  const fs::path etc = layout.host_dir / "etc";
  ALLOT_RETURN_IF_ERROR(MakeDirs(etc));
  const JobUser user = layout.user.value_or(kNobodyUser);
  ALLOT_RETURN_IF_ERROR(env::WriteFileAtomically((etc / "passwd").string(), PasswdFor(user)));
  ALLOT_RETURN_IF_ERROR(env::WriteFileAtomically((etc / "group").string(), GroupFor(user)));
  files.emplace_back((etc / "passwd").string(), "/etc/passwd");
  files.emplace_back((etc / "group").string(), "/etc/group");
  Result<fs::path> hosts_file = WriteEtcHosts(layout);
  if (!hosts_file.ok()) return hosts_file.status();
  if (!hosts_file->empty()) files.emplace_back(hosts_file->string(), "/etc/hosts");
  return files;
}

// Everything PrepareHost can check before it writes anything but the job's checkpoint directory.
Result<HostLayout> PlanHost(const LaunchSpec& spec, int host_index, const LayoutOptions& options) {
  HostLayout layout;
  layout.sandboxed = options.sandbox;
  if (layout.sandboxed && !SandboxAvailable(options)) return NoSandboxError(options);
  if (layout.sandboxed) layout.user = JobUserOf(spec);
  layout.host_index = host_index;
  const bool named = spec.host_names.size() == static_cast<std::size_t>(spec.instance_count);
  for (int i = 1; i <= spec.instance_count; ++i) {
    layout.hosts.push_back(named ? spec.host_names[static_cast<std::size_t>(i) - 1] : HostName(i));
  }
  if (host_index < 1 || host_index > spec.instance_count) {
    return InvalidArgument("host " + std::to_string(host_index) + " of " +
                           std::to_string(spec.instance_count));
  }
  layout.host = layout.hosts[static_cast<std::size_t>(host_index) - 1];
  if (named) layout.addresses = spec.host_addresses;
  Result<Channels> channels = ResolveChannels(spec, layout.user);
  if (!channels.ok()) return channels.status();
  layout.channels = std::move(channels).value();
  // The checkpoint directory: the job's, seen at CheckpointConfig.LocalPath in the sandbox.
  Result<std::string> checkpoint_dir = JobCheckpointDir(spec.job_dir);
  if (!checkpoint_dir.ok()) return checkpoint_dir.status();
  layout.checkpoint_dir = std::move(checkpoint_dir).value();
  Result<fs::path> local_path = CheckpointLocalPath(spec, layout.sandboxed);
  if (!local_path.ok()) return local_path.status();
  layout.local_path = std::move(local_path).value();
  std::error_code ec;
  const fs::path host_dir =
      fs::absolute(fs::path(spec.attempt_dir) / HostName(host_index), ec).lexically_normal();
  if (ec) return Internal("bad attempt directory '" + spec.attempt_dir + "'");
  layout.ml = host_dir / "ml";
  layout.host_dir = host_dir;
  return layout;
}

}  // namespace

Result<HostPlan> PrepareHost(const LaunchSpec& spec, int host_index, const LayoutOptions& options) {
  if (spec.instance_count < 1) return InvalidArgument("InstanceCount must be at least 1");
  if (host_index < 1 || host_index > spec.instance_count) {
    return InvalidArgument("host " + std::to_string(host_index) + " is not one of 1.." +
                           std::to_string(spec.instance_count));
  }
  if (spec.argv.empty()) return InvalidArgument("the job has no command to run");
  if (spec.attempt_dir.empty()) return InvalidArgument("the attempt directory is not set");
  Result<HostLayout> planned = PlanHost(spec, host_index, options);
  if (!planned.ok()) return planned.status();
  const HostLayout& layout = *planned;

  ALLOT_RETURN_IF_ERROR(MakeHostTree(layout));
  const SeenPaths seen = SeenPathsOf(layout);
  const ConfigDocs docs = MakeConfigDocs(spec, layout, seen);
  ALLOT_RETURN_IF_ERROR(WriteConfigFiles(spec, layout, seen, docs));
  Result<std::vector<std::pair<std::string, std::string>>> etc = WriteSandboxEtc(layout);
  if (!etc.ok()) return etc.status();

  // The host's slot of the host map, if it has one.
  const auto slot_index = static_cast<std::size_t>(host_index - 1);
  const LaunchSpec::HostSlot slot =
      slot_index < spec.host_slots.size() ? spec.host_slots[slot_index] : LaunchSpec::HostSlot{};
  HostPlan plan;
  plan.environment = BaseJobEnvironment();
  for (auto& [name, value] : HostEnvironment(spec, layout, seen, docs, slot)) {
    plan.environment[name] = std::move(value);
  }
  ALLOT_RETURN_IF_ERROR(WriteJobEnvironment(layout, plan.environment));
  if (layout.user) {
    ALLOT_RETURN_IF_ERROR(GiveTree(layout.ml, *layout.user));
    ALLOT_RETURN_IF_ERROR(GiveTree(layout.checkpoint_dir, *layout.user));
  }
  plan.argv = HostCommand(spec, options, layout, seen, *etc, slot);
  plan.ml_dir = layout.ml.string();
  plan.output_dir = (layout.ml / "output").string();
  plan.working_dir = layout.ml.string();
  plan.sandboxed = layout.sandboxed;
  plan.job_env_file = (layout.host_dir / kJobEnvFile).string();
  // The host's directory holds its /opt/ml and its stdout and stderr, which the job writes too.
  plan.disk_paths = {layout.host_dir.string()};
  plan.checkpoint_disk_paths = {layout.checkpoint_dir};
  if (layout.sandboxed) {
    JobLimits tmp;
    tmp.tmp_bytes = spec.limits.tmp_bytes;
    plan.enforced = DescribeLimits(layout.user, tmp);
    for (const auto& [name, source] : layout.channels) plan.bind_by_fd.push_back(source.string());
    plan.bind_as = layout.user;
  }
  return plan;
}

namespace {

// The part files a killed copy left below `dir` (a copy that fails removes its own): they are no
// checkpoint, and they would count against the next copy's budget. As the job's user.
void RemovePartFiles(const std::string& dir, const std::optional<JobUser>& user) {
  const AsJobUser acting(user);
  if (!acting.Taken("remove what a stopped copy left").ok()) return;
  const int top = env::OpenTreeTop(dir.c_str());
  if (top < 0) return;
  (void)env::WalkTree(top, kMaxDiskWalkDepth, [](const env::WalkedEntry& e) {
    if (S_ISREG(e.st.st_mode) && std::string_view(e.name).rfind(kPartialPrefix, 0) == 0) {
      ::unlinkat(e.dir_fd, e.name, 0);
    }
    return true;
  });
}

// CopyIdentity::timeout_ms, or what it stands for.
Duration CopyDeadline(const CopyIdentity& as) {
  if (as.timeout_ms > 0) return as.timeout_ms;
  // No disk limit: no size to go by, so a day. Never more than a week, whatever the limit.
  if (as.budget.bytes <= 0) return Seconds(std::int64_t{24} * 3600);
  constexpr std::int64_t kBytesPerSecond = 50'000'000;
  const Duration at_disk_speed =
      std::min(as.budget.bytes / kBytesPerSecond, std::int64_t{7} * 24 * 3600) * kMillisPerSecond;
  return std::max(at_disk_speed, Seconds(600));
}

// Waits for the copy process `pid` (the leader of its process group) until `deadline_ms` has
// passed, then kills its group; its wait status either way.
Result<int> AwaitCopy(pid_t pid, Duration deadline_ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(deadline_ms);
  const long pidfd = ::syscall(SYS_pidfd_open, pid, 0);  // -1 before Linux 5.3: polled
  bool killed = false;
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, killed ? 0 : WNOHANG);
    if (done == pid) {
      if (pidfd >= 0) ::close(static_cast<int>(pidfd));
      return status;
    }
    if (done < 0 && errno != EINTR) {
      const int error = errno;
      if (pidfd >= 0) ::close(static_cast<int>(pidfd));
      return Internal(std::string("waitpid: ") + std::strerror(error));
    }
    if (killed) continue;
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(-pid, SIGKILL);  // the copy and anything it started
      killed = true;
      continue;
    }
    const int wait_ms =
        static_cast<int>(std::min<std::int64_t>(left.count(), pidfd >= 0 ? 60'000 : 50));
    if (pidfd >= 0) {
      pollfd fd{static_cast<int>(pidfd), POLLIN, 0};
      ::poll(&fd, 1, wait_ms);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    }
  }
}

// The copy between the job's checkpoint directory `job_side` and `other` (`inbound`: into the
// job's), as `as` says: here, or in a process of the job's user. That process starts in
// `job_side` (entered while still root) and names it ".", so the job's user needs no way through
// the data directory above it.
Status CopyTreeAs(const CopyIdentity& as, const std::string& job_side, const std::string& other,
                  bool inbound) {
  const std::string what = inbound ? "restoring the checkpoints from '" + Shown(other) + "'"
                                   : "saving the checkpoints to '" + Shown(other) + "'";
  if (!as.user) {
    Status copied =
        inbound ? CopyTree(other, job_side, as.budget) : CopyTree(job_side, other, as.budget);
    if (copied.ok()) return copied;
    return Status(copied.code(), what + " failed: " + copied.message());
  }
  const std::string from = inbound ? other : ".";
  const std::string to = inbound ? "." : other;
  // What the copy says goes into the error (the job's status shows it), not only to the log: the
  // file is root's, beside the job's checkpoint directory, in the job's directory.
  const fs::path said = fs::path(job_side).parent_path() / "checkpoint-copy.err";
  std::error_code ec;
  fs::remove(said, ec);
  SpawnRequest request;
  request.argv = {as.exe,        "__copyas",
                  "--uid",       std::to_string(as.user->uid),
                  "--gid",       std::to_string(as.user->gid),
                  "--max-bytes", std::to_string(as.budget.bytes),
                  "--max-files", std::to_string(as.budget.files),
                  from,          to};
  request.working_dir = job_side;
  request.environment = CleanEnvironment();
  request.isolation = SpawnRequest::Isolation::kProcessGroup;
  request.stderr_path = said.string();
  request.max_file_bytes = as.budget.bytes;  // no file past the budget, should the tree change
  const Result<pid_t> pid = SpawnProcess(request);
  if (!pid.ok()) return pid.status();
  const Duration deadline = CopyDeadline(as);
  const Result<int> status = AwaitCopy(*pid, deadline);
  if (!status.ok()) return status.status();
  if (WIFEXITED(*status) && WEXITSTATUS(*status) == 0) {
    fs::remove(said, ec);
    return Status::Ok();
  }
  std::string why = WIFEXITED(*status) ? "exit " + std::to_string(WEXITSTATUS(*status))
                                       : "signal " + std::to_string(WTERMSIG(*status));
  if (WIFSIGNALED(*status)) RemovePartFiles(inbound ? job_side : other, as.user);
  if (WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL) {
    why = "it ran past its deadline of " + std::to_string(deadline / kMillisPerSecond) +
          " s and was stopped";
  }
  if (Result<std::string> text = env::ReadFile(said.string()); text.ok()) {
    std::string_view line = Trim(*text);
    const std::string prefix = "allot __copyas (uid " + std::to_string(as.user->uid) + "): ";
    if (line.starts_with(prefix)) line.remove_prefix(prefix.size());
    if (line.size() > kCopyErrorLimit) line = line.substr(0, kCopyErrorLimit);
    std::string said_line(line);  // its names escaped by the copy (Shown); nothing else may pass
    for (char& c : said_line) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    }
    if (!said_line.empty()) why += ": " + said_line;
  }
  fs::remove(said, ec);
  return Internal(what + " as uid " + std::to_string(as.user->uid) + " failed (" + why + ")");
}

}  // namespace

CopyIdentity CopyIdentityOf(const LaunchSpec& spec, const LayoutOptions& options) {
  const CopyBudget budget{spec.limits.disk_bytes, spec.limits.files};
  if (!options.sandbox) return {SelfExe(spec), std::nullopt, budget, 0};
  return {SelfExe(spec), JobUserOf(spec), budget, 0};
}

Status RestoreCheckpoints(const std::string& job_dir, const std::string& sync_dir,
                          const CopyIdentity& as) {
  if (sync_dir.empty()) return Status::Ok();
  // Asked as the job's user, who copies it in: what root alone could see is nothing to restore,
  // and a location that user may not reach could not be synced back either.
  struct stat st {};
  int error = 0;
  {
    const AsJobUser acting(as.user);
    ALLOT_RETURN_IF_ERROR(acting.Taken("look for its checkpoints in '" + sync_dir + "'"));
    if (::stat(sync_dir.c_str(), &st) != 0) error = errno;
  }
  if (error == ENOENT) return Status::Ok();  // nothing saved yet
  if (error != 0) {
    return FailedPrecondition("the checkpoint location '" + sync_dir + "' cannot be read" +
                              (as.user
                                   ? " as the job's user (uid " + std::to_string(as.user->uid) + ")"
                                   : std::string()) +
                              ": " + std::strerror(error));
  }
  if (!S_ISDIR(st.st_mode)) return Status::Ok();
  const auto dir = JobCheckpointDir(job_dir);
  if (!dir.ok()) return dir.status();
  // The job's user writes into its own checkpoint directory.
  if (as.user) ALLOT_RETURN_IF_ERROR(GiveTree(*dir, *as.user));
  return CopyTreeAs(as, *dir, sync_dir, /*inbound=*/true);
}

Status SyncCheckpoints(const std::string& job_dir, const std::string& sync_dir,
                       const CopyIdentity& as) {
  if (sync_dir.empty()) return Status::Ok();
  const auto dir = JobCheckpointDir(job_dir);
  if (!dir.ok()) return dir.status();
  return CopyTreeAs(as, *dir, sync_dir, /*inbound=*/false);
}

int CopyAsMain(int argc, char** argv) {
  const std::vector<std::string_view> args(argv, argv + argc);
  auto number = [](std::string_view text, auto& out) {
    const auto [ptr, error] = std::from_chars(text.data(), text.data() + text.size(), out);
    return error == std::errc() && ptr == text.data() + text.size() && !text.empty();
  };
  unsigned uid = 0;
  unsigned gid = 0;
  CopyBudget budget;
  if (args.size() != 10 || args[0] != "--uid" || args[2] != "--gid" || args[4] != "--max-bytes" ||
      args[6] != "--max-files" || !number(args[1], uid) || !number(args[3], gid) ||
      !number(args[5], budget.bytes) || !number(args[7], budget.files)) {
    std::fprintf(stderr,
                 "usage: allot __copyas --uid U --gid G --max-bytes N --max-files N FROM TO\n");
    return 2;
  }
  if (Status s = BecomeJobUser({static_cast<uid_t>(uid), static_cast<gid_t>(gid)}); !s.ok()) {
    std::fprintf(stderr, "allot __copyas: %s\n", s.message().c_str());
    return 126;
  }
  // The directories it makes are the share's alone, whatever the server's umask: another
  // share's jobs run as other uids and list none of them (the files: CopyFileKeepingTime).
  ::umask(077);
  if (Status s = CopyTree(std::string(args[8]), std::string(args[9]), budget); !s.ok()) {
    std::fprintf(stderr, "allot __copyas (uid %u): %s\n", uid, s.message().c_str());
    return 1;
  }
  return 0;
}

Timestamp NewestFileTime(const std::string& dir) {
  Timestamp newest = 0;
  const int top = env::OpenTreeTop(dir.c_str());
  if (top < 0) return 0;
  // The job's tree: links are not followed and the depth is capped (a job's chain of thousands of
  // directories took gigabytes and thousands of descriptors of the server's with
  // std::filesystem's iterator). The walk ends at the first directory below the cap, so files
  // listed after it are not seen either; the disk limit fails such a job anyway.
  (void)env::WalkTree(top, kMaxDiskWalkDepth, [&](const env::WalkedEntry& e) {
    if (S_ISREG(e.st.st_mode) && std::string_view(e.name).rfind(kPartialPrefix, 0) != 0) {
      newest = std::max(newest, static_cast<Timestamp>(MtimeNs(e.st) / 1000000));
    }
    return true;
  });
  return newest;
}

std::string FailureMessage(const std::string& output_dir) {
  if (output_dir.empty()) return "";
  // <host_dir>/ml/output/failure: the host's directory is root's, ml/ the job's, whose links are
  // never followed (a link to the data directory's credentials must not end up in statusReason).
  const fs::path output = fs::path(output_dir).lexically_normal();
  const fs::path host_dir = output.parent_path().parent_path();
  const std::string relative =
      (output.parent_path().filename() / output.filename() / "failure").string();
  Result<std::string> read = env::ReadFileBeneath(host_dir.string(), relative, kFailureLimit);
  if (!read.ok()) return "";
  std::string text = std::move(read).value();
  if (text.size() == kFailureLimit) {
    // Do not end inside a UTF-8 sequence.
    std::size_t end = text.size();
    std::size_t lead = end;
    while (lead > 0 && (static_cast<unsigned char>(text[lead - 1]) & 0xC0U) == 0x80U) --lead;
    if (lead > 0) {
      const auto c = static_cast<unsigned char>(text[lead - 1]);
      std::size_t need = 1;
      if ((c & 0xE0U) == 0xC0U) {
        need = 2;
      } else if ((c & 0xF0U) == 0xE0U) {
        need = 3;
      } else if ((c & 0xF8U) == 0xF0U) {
        need = 4;
      }
      if (c >= 0x80U && end - (lead - 1) < need) end = lead - 1;
    }
    text.resize(end);
  }
  return std::string(Trim(text));
}

}  // namespace allot::exec
