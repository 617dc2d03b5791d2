#include "exec/sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <initializer_list>
#include <limits>
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

namespace allot::exec {
namespace {

constexpr std::int64_t kKiB = 1024;

struct Unit {
  const char* name;
  std::int64_t size;
};
constexpr std::array<Unit, 4> kUnits = {{{"TiB", kKiB* kKiB* kKiB* kKiB},
                                         {"GiB", kKiB* kKiB* kKiB},
                                         {"MiB", kKiB* kKiB},
                                         {"KiB", kKiB}}};

// The multiplier of a unit suffix ("", "k", "KiB", "MB", "g"...), 0 if unknown.
std::int64_t UnitSize(std::string_view unit) {
  std::string u;
  for (char c : unit) u += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (u.empty() || u == "B") return 1;
  if (u.size() == 3 && u[1] == 'I' && u[2] == 'B') u = u.substr(0, 1);
  if (u.size() == 2 && u[1] == 'B') u = u.substr(0, 1);
  if (u == "K") return kKiB;
  if (u == "M") return kKiB * kKiB;
  if (u == "G") return kKiB * kKiB * kKiB;
  if (u == "T") return kKiB * kKiB * kKiB * kKiB;
  return 0;
}

// The cgroup path of `controller` ("memory"; "" for the v2 line "0::/x") in /proc/self/cgroup.
std::optional<std::string> OwnCgroup(std::string_view own_cgroups, std::string_view controller) {
  for (std::string_view line : Split(own_cgroups, '\n')) {
    const std::size_t first = line.find(':');
    if (first == std::string_view::npos) continue;
    const std::size_t second = line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const std::string path(Trim(line.substr(second + 1)));
    if (controller.empty()) {
      if (controllers.empty()) return path;
      continue;
    }
    for (std::string_view c : Split(controllers, ',')) {
      if (c == controller) return path;
    }
  }
  return std::nullopt;
}

std::string JoinPath(const std::string& base, const std::string& own, const std::string& rest) {
  std::string path = base;
  if (!own.empty() && own != "/") path += own.front() == '/' ? own : "/" + own;
  return path + "/" + rest;
}

void AddV1(CgroupPlan& plan, const std::string& mount, std::string_view own_cgroups,
           const std::string& controller, const std::string& name,
           const std::vector<std::pair<std::string, std::string>>& values) {
  const std::string own = OwnCgroup(own_cgroups, controller).value_or("/");
  const std::string parent = JoinPath(mount + "/" + controller, own, "allot-jobs");
  const std::string dir = parent + "/" + name;
  plan.parents.push_back(parent);
  plan.dirs.push_back(dir);
  for (const auto& [file, value] : values) plan.writes.emplace_back(dir + "/" + file, value);
  plan.procs.push_back(dir + "/cgroup.procs");
  if (controller == "memory") plan.oom_events = dir + "/memory.oom_control";
}

bool HasWord(std::string_view text, std::string_view word) {
  for (std::string_view w : Split(text, ' ')) {
    if (Trim(w) == word) return true;
  }
  return false;
}

}  // namespace

std::string FormatBytes(std::int64_t bytes) {
  for (const Unit& unit : kUnits) {
    if (bytes >= unit.size && bytes % unit.size == 0) {
      return std::to_string(bytes / unit.size) + " " + unit.name;
    }
  }
  return std::to_string(bytes) + " B";
}

Result<std::int64_t> ParseBytes(std::string_view text) {
  const std::string_view trimmed = Trim(text);
  std::int64_t number = 0;
  const char* begin = trimmed.data();
  const char* end = begin + trimmed.size();
  const auto [ptr, error] = std::from_chars(begin, end, number);
  if (error != std::errc() || ptr == begin || number < 0) {
    return InvalidArgument("'" + std::string(text) + "' is not a size (e.g. 512M, 8G, 1048576)");
  }
  const std::int64_t unit =
      UnitSize(Trim(std::string_view(ptr, static_cast<std::size_t>(end - ptr))));
  if (unit == 0) {
    return InvalidArgument("'" + std::string(text) + "': unknown unit (use K, M, G or T)");
  }
  if (number > std::numeric_limits<std::int64_t>::max() / unit) {
    return InvalidArgument("'" + std::string(text) + "' is too large");
  }
  return number * unit;
}

std::string DescribeLimits(const std::optional<JobUser>& user, const JobLimits& limits) {
  std::vector<std::string> parts;
  if (user) {
    parts.push_back("uid=" + std::to_string(user->uid));
    parts.push_back("gid=" + std::to_string(user->gid));
  }
  if (limits.memory_bytes > 0) parts.push_back("memory=" + FormatBytes(limits.memory_bytes));
  if (limits.pids > 0) parts.push_back("pids=" + std::to_string(limits.pids));
  if (limits.tmp_bytes > 0) parts.push_back("tmp=" + FormatBytes(limits.tmp_bytes));
  if (limits.disk_bytes > 0) parts.push_back("disk=" + FormatBytes(limits.disk_bytes));
  if (limits.files > 0) parts.push_back("files=" + std::to_string(limits.files));
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : " ") + part;
  return text;
}

Result<std::string> EncodeEnvironment(const std::map<std::string, std::string>& environment) {
  std::string out;
  for (const auto& [name, value] : environment) {
    if (name.empty() || name.find('=') != std::string::npos ||
        name.find('\0') != std::string::npos || value.find('\0') != std::string::npos) {
      return InvalidArgument("the environment variable '" + name + "' cannot be passed on");
    }
    out += name;
    out += '=';
    out += value;
    out += '\0';
  }
  return out;
}

std::map<std::string, std::string> DecodeEnvironment(std::string_view text) {
  std::map<std::string, std::string> environment;
  while (!text.empty()) {
    const std::size_t end = text.find('\0');
    const std::string_view entry = text.substr(0, end);
    const std::size_t eq = entry.find('=');
    if (eq != std::string_view::npos && eq > 0) {
      environment[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
    }
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return environment;
}

std::map<std::string, std::string> CleanEnvironment() {
  return {{"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
          {"LANG", "C.UTF-8"}};
}

std::map<std::string, std::string> BaseJobEnvironment() {
  std::map<std::string, std::string> env = CleanEnvironment();
  env["HOME"] = "/tmp";
  return env;
}

std::vector<RootEntry> SystemRootEntries() {
  std::vector<RootEntry> entries;
  for (const char* name : {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"}) {
    const std::string path = std::string("/") + name;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      std::array<char, 4096> target{};
      const ssize_t n = ::readlink(path.c_str(), target.data(), target.size() - 1);
      if (n > 0) entries.push_back({name, std::string(target.data(), static_cast<std::size_t>(n))});
    } else if (S_ISDIR(st.st_mode)) {
      entries.push_back({name, ""});
    }
  }
  return entries;
}

const std::vector<std::string>& EtcFiles() {
  static const auto* const kFiles = new std::vector<std::string>{
      "/etc/alternatives", "/etc/ca-certificates", "/etc/ca-certificates.conf", "/etc/gai.conf",
      "/etc/host.conf",    "/etc/ld.so.cache",     "/etc/ld.so.conf",           "/etc/ld.so.conf.d",
      "/etc/localtime",    "/etc/mime.types",      "/etc/nsswitch.conf",        "/etc/os-release",
      "/etc/pki",          "/etc/protocols",       "/etc/resolv.conf",          "/etc/services",
      "/etc/ssl",          "/etc/timezone",        "/etc/debian_version"};
  return *kFiles;
}

std::string PasswdFor(const JobUser& user) {
  return "root:x:0:0:root:/root:/usr/sbin/nologin\njob:x:" + std::to_string(user.uid) + ":" +
         std::to_string(user.gid) +
         ":allot job:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
}

std::string GroupFor(const JobUser& user) {
  return "root:x:0:\njob:x:" + std::to_string(user.gid) + ":\nnogroup:x:65534:\n";
}

namespace {

// bwrap's arguments, with every directory it must create on the way to a mount point made 0755
// first (bwrap makes them 0700, which the job's user could not enter).
class BwrapArgList {
 public:
  explicit BwrapArgList(std::vector<std::string> start) : args_(std::move(start)) {}

  // A directory the sandbox has (made, or a fresh tmpfs): what is below it must still be made.
  void Have(const std::string& path) { made_.insert(path); }

  // A tree mounted from the machine (or a system link): everything below it exists already.
  void HaveTree(const std::string& path) { trees_.insert(path); }

  void Mount(const std::string& op, const std::string& source, const std::string& dest) {
    Parents(dest);
    args_.insert(args_.end(), {op, source, dest});
    HaveTree(dest);
  }

  void Add(std::initializer_list<std::string> args) { args_.insert(args_.end(), args); }

  std::vector<std::string> Take() { return std::move(args_); }

 private:
  bool Exists(const std::string& path) const {
    if (made_.count(path) != 0) return true;
    for (std::string p = path; !p.empty(); p = p.substr(0, p.rfind('/'))) {
      if (trees_.count(p) != 0) return true;
    }
    return false;
  }

  void Parents(const std::string& dest) {
    std::vector<std::string> missing;
    for (std::string p = dest.substr(0, dest.rfind('/')); !p.empty();
         p = p.substr(0, p.rfind('/'))) {
      if (Exists(p)) break;
      missing.push_back(p);
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      args_.insert(args_.end(), {"--perms", "0755", "--dir", *it});
      Have(*it);
    }
  }

  std::vector<std::string> args_;
  std::set<std::string> made_;
  std::set<std::string> trees_;
};

}  // namespace

std::vector<std::string> BwrapArgs(const BwrapPlan& plan) {
  BwrapArgList a({plan.bwrap, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--hostname",
                  plan.hostname, "--new-session"});
  if (plan.die_with_parent) a.Add({"--die-with-parent"});
  for (const RootEntry& entry : plan.system) {
    const std::string seen = "/" + entry.name;
    if (entry.link_target.empty()) {
      a.Mount("--ro-bind", seen, seen);
    } else {
      a.Add({"--symlink", entry.link_target, seen});
      a.HaveTree(seen);
    }
  }
  for (const auto& file : plan.etc_files) a.Mount("--ro-bind-try", file, file);
  for (const auto& [host, seen] : plan.generated) a.Mount("--ro-bind", host, seen);
  for (const auto& path : plan.readonly_paths) a.Mount("--ro-bind", path, path);
  a.Add({"--dev", "/dev"});
  a.Have("/dev");
  for (const auto& device : plan.devices) a.Mount("--dev-bind", device, device);
  a.Add({"--proc", "/proc"});
  a.Have("/proc");
  // /tmp, and /dev/shm (POSIX shared memory and semaphores: Python's multiprocessing, PyTorch's
  // DataLoader workers, NCCL on one host), each a private tmpfs of the same size: everyone's and
  // sticky, so the job's user writes there.
  for (const char* tmp : {"/tmp", "/dev/shm"}) {
    a.Add({"--perms", "1777"});
    if (plan.tmp_bytes > 0) a.Add({"--size", std::to_string(plan.tmp_bytes)});
    a.Add({"--tmpfs", tmp});
    a.Have(tmp);
  }
  a.Mount("--bind", plan.ml_dir, "/opt/ml");
  a.Mount("--bind", plan.checkpoint_dir, plan.checkpoint_seen);
  for (const auto& [host, seen] : plan.channels) a.Mount("--ro-bind", host, seen);
  a.Mount("--ro-bind", plan.exec, kSandboxExec);
  a.Mount("--ro-bind", plan.environment_file, kSandboxEnvironment);
  a.Add({"--chdir", "/opt/ml", "--", kSandboxExec, "__jobexec", "--env-file", kSandboxEnvironment});
  if (plan.user) {
    a.Add({"--uid", std::to_string(plan.user->uid), "--gid", std::to_string(plan.user->gid)});
  }
  a.Add({"--"});
  std::vector<std::string> args = a.Take();
  args.insert(args.end(), plan.command.begin(), plan.command.end());
  return args;
}

std::size_t FindReadOnlyBind(const std::vector<std::string>& bwrap_args,
                             const std::string& source) {
  for (std::size_t i = 1; i + 2 < bwrap_args.size() && bwrap_args[i] != "--"; ++i) {
    if (bwrap_args[i] == "--ro-bind" && bwrap_args[i + 1] == source) return i;
  }
  return std::string::npos;
}

CgroupPlan PlanCgroups(std::string_view own_cgroups, bool v1_memory, bool v1_pids,
                       std::string_view v2_controllers, const std::string& mount,
                       const std::string& name, const JobLimits& limits) {
  CgroupPlan plan;
  if (limits.memory_bytes <= 0 && limits.pids <= 0) return plan;
  const std::string memory = std::to_string(limits.memory_bytes);
  const std::string pids = std::to_string(limits.pids);
  if (v1_memory || v1_pids) {
    plan.kind = CgroupKind::kV1;
    if (v1_memory && limits.memory_bytes > 0) {
      // memsw (memory + swap) only where swap accounting is on; the supervisor ignores its error.
      AddV1(plan, mount, own_cgroups, "memory", name,
            {{"memory.limit_in_bytes", memory}, {"memory.memsw.limit_in_bytes", memory}});
    }
    if (v1_pids && limits.pids > 0)
      AddV1(plan, mount, own_cgroups, "pids", name, {{"pids.max", pids}});
    return plan;
  }
  if (!HasWord(v2_controllers, "memory") || !HasWord(v2_controllers, "pids")) return plan;
  const std::optional<std::string> own = OwnCgroup(own_cgroups, "");
  if (!own) return plan;
  plan.kind = CgroupKind::kV2;
  const std::string parent = JoinPath(mount, *own, "allot-jobs");
  const std::string dir = parent + "/" + name;
  plan.parents.push_back(parent);
  plan.dirs.push_back(dir);
  if (limits.memory_bytes > 0) {
    plan.writes.emplace_back(dir + "/memory.max", memory);
    plan.writes.emplace_back(dir + "/memory.swap.max", "0");
  }
  if (limits.pids > 0) plan.writes.emplace_back(dir + "/pids.max", pids);
  plan.procs.push_back(dir + "/cgroup.procs");
  plan.oom_events = dir + "/memory.events";
  return plan;
}

std::int64_t OomKills(std::string_view events) {
  for (std::string_view line : Split(events, '\n')) {
    line = Trim(line);
    if (line.rfind("oom_kill ", 0) != 0) continue;
    std::int64_t n = 0;
    const std::string_view value = Trim(line.substr(9));
    std::from_chars(value.data(), value.data() + value.size(), n);
    return n;
  }
  return 0;
}

}  // namespace allot::exec

// -------------------------------------------------------------------------------------------
// Applying the cgroups and measuring the disk.

namespace allot::exec {
namespace {

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

Status WriteValue(const std::string& path, const std::string& value) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Internal("cannot open '" + path + "': " + std::strerror(errno));
  const ssize_t n = ::write(fd, value.data(), value.size());
  const int error = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(value.size())) {
    return Internal("cannot write " + value + " to '" + path + "': " + std::strerror(error));
  }
  return Status::Ok();
}

std::vector<pid_t> Members(const std::string& dir) {
  std::vector<pid_t> pids;
  const Result<std::string> text = env::ReadFile(dir + "/cgroup.procs");
  if (!text.ok()) return pids;
  for (std::string_view line : Split(*text, '\n')) {
    pid_t pid = 0;
    const auto [ptr, error] = std::from_chars(line.data(), line.data() + line.size(), pid);
    if (error == std::errc() && pid > 0) pids.push_back(pid);
  }
  return pids;
}

bool Passed(const DiskUsed& total, const DiskUsed& stop_at) {
  return total.uncounted || (stop_at.bytes > 0 && total.bytes > stop_at.bytes) ||
         (stop_at.files > 0 && total.files > stop_at.files);
}

// The trees' entries (env::WalkTree: links never followed, the depth capped), until a limit is
// passed.
void AddTreeUsage(int dir_fd, bool by_length, const DiskUsed& stop_at,
                  const std::atomic<bool>* cancel, DiskUsed& total) {
  const env::WalkEnd end = env::WalkTree(dir_fd, kMaxDiskWalkDepth, [&](const env::WalkedEntry& e) {
    const auto blocks = static_cast<std::int64_t>(e.st.st_blocks) * 512;
    const bool regular = S_ISREG(e.st.st_mode);
    total.bytes +=
        by_length && regular ? std::max(blocks, static_cast<std::int64_t>(e.st.st_size)) : blocks;
    ++total.files;
    return !Passed(total, stop_at) && !(cancel != nullptr && cancel->load());
  });
  if (end == env::WalkEnd::kTooDeep || end == env::WalkEnd::kUnreadable) total.uncounted = true;
  if (cancel != nullptr && cancel->load()) total.uncounted = true;
}

// The files in `dir` (a process's fd or map_files directory) that no directory names any more:
// regular files with no link left, on `devices`, owned by `uid` (a file someone else replaced
// while the job had it open, a dataset refreshed by rsync say, is not the job's), each counted
// once in `counted`. Only entries whose link says "(deleted)" are stat'ed: a stat of a live file
// on a hung network mount could block the supervisor.
void AddDeletedFilesIn(const std::string& dir_path, uid_t uid, const std::set<dev_t>& devices,
                       const DiskUsed& stop_at, std::set<std::pair<dev_t, ino_t>>& counted,
                       DiskUsed& total) {
  static constexpr std::string_view kDeleted = " (deleted)";
  DIR* dir = ::opendir(dir_path.c_str());
  if (dir == nullptr) return;  // gone meanwhile: it holds nothing
  std::array<char, 4096> target{};
  while (const dirent* entry = ::readdir(dir)) {
    if (Passed(total, stop_at)) break;
    if (entry->d_name[0] == '.') continue;
    const ssize_t n = ::readlinkat(::dirfd(dir), entry->d_name, target.data(), target.size());
    if (n <= 0 ||
        !std::string_view(target.data(), static_cast<std::size_t>(n)).ends_with(kDeleted)) {
      continue;
    }
    struct stat st {};
    // Follows the entry's link to the open (or mapped) file itself.
    if (::fstatat(::dirfd(dir), entry->d_name, &st, 0) != 0) continue;
    if (!S_ISREG(st.st_mode) || st.st_nlink != 0 || st.st_uid != uid ||
        devices.count(st.st_dev) == 0 || !counted.emplace(st.st_dev, st.st_ino).second) {
      continue;
    }
    total.bytes += static_cast<std::int64_t>(st.st_blocks) * 512;
    ++total.files;
  }
  ::closedir(dir);
}

// The real uid of `pid` (status's "Uid:" line), or nullopt once it is gone. Not the owner of a
// file under /proc/PID: they are root's for a process that made itself not dumpable.
std::optional<uid_t> RealUid(const std::string& proc) {
  const Result<std::string> status = env::ReadFile(proc + "/status");
  if (!status.ok()) return std::nullopt;
  for (std::string_view line : Split(*status, '\n')) {
    if (!line.starts_with("Uid:")) continue;
    line = Trim(line.substr(4));
    uid_t uid = 0;
    const auto [end, error] = std::from_chars(line.data(), line.data() + line.size(), uid);
    if (error == std::errc()) return uid;
  }
  return std::nullopt;
}

// What `pid` holds open or mapped and deleted (AddDeletedFilesIn), as its own user.
void AddDeletedOpenFiles(pid_t pid, const std::set<dev_t>& devices, const DiskUsed& stop_at,
                         std::set<std::pair<dev_t, ino_t>>& counted, DiskUsed& total) {
  const std::string proc = "/proc/" + std::to_string(pid);
  const std::optional<uid_t> uid = RealUid(proc);
  if (!uid) return;
  for (const char* dir : {"/fd", "/map_files"}) {
    AddDeletedFilesIn(proc + dir, *uid, devices, stop_at, counted, total);
  }
}

}  // namespace

CgroupPlan PlanOwnCgroups(const std::string& name, const JobLimits& limits) {
  const std::string mount = "/sys/fs/cgroup";
  const Result<std::string> own = env::ReadFile("/proc/self/cgroup");
  const Result<std::string> v2 = env::ReadFile(mount + "/cgroup.controllers");
  return PlanCgroups(own.ok() ? *own : "", Exists(mount + "/memory/cgroup.procs"),
                     Exists(mount + "/pids/cgroup.procs"), v2.ok() ? *v2 : "", mount, name, limits);
}

Status CreateCgroups(const CgroupPlan& plan) {
  if (plan.kind == CgroupKind::kNone) return Status::Ok();
  for (const std::string& parent : plan.parents) {
    if (::mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) {
      return Internal("cannot create the cgroup '" + parent + "': " + std::strerror(errno));
    }
    if (plan.kind == CgroupKind::kV2) {
      // The parent of allot-jobs must hand memory and pids down, then allot-jobs itself.
      const std::string above = parent.substr(0, parent.rfind('/'));
      [[maybe_unused]] const Status up =
          WriteValue(above + "/cgroup.subtree_control", "+memory +pids");
      ALLOT_RETURN_IF_ERROR(WriteValue(parent + "/cgroup.subtree_control", "+memory +pids"));
    }
  }
  Status status = Status::Ok();
  for (const std::string& dir : plan.dirs) {
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      status = Internal("cannot create the cgroup '" + dir + "': " + std::strerror(errno));
      break;
    }
  }
  for (const auto& [file, value] : plan.writes) {
    if (!status.ok()) break;
    const Status written = WriteValue(file, value);
    // Without swap accounting there is no memsw file: the memory limit alone holds.
    if (!written.ok() && file.find("memsw") == std::string::npos &&
        file.find("swap.max") == std::string::npos) {
      status = written;
    }
  }
  if (!status.ok()) RemoveCgroups(plan);
  return status;
}

void RemoveCgroups(const CgroupPlan& plan) {
  for (const std::string& dir : plan.dirs) {
    for (int round = 0; round < 50 && Exists(dir); ++round) {
      for (const pid_t pid : Members(dir)) ::kill(pid, SIGKILL);
      if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  for (const std::string& parent : plan.parents) ::rmdir(parent.c_str());  // fails while in use
}

std::vector<pid_t> CgroupMembers(const CgroupPlan& plan) {
  std::set<pid_t> pids;  // under cgroup v1, each process is in a group per controller
  for (const std::string& dir : plan.dirs) {
    for (const pid_t pid : Members(dir)) pids.insert(pid);
  }
  return {pids.begin(), pids.end()};
}

std::int64_t CgroupOomKills(const CgroupPlan& plan) {
  if (plan.oom_events.empty()) return 0;
  const Result<std::string> text = env::ReadFile(plan.oom_events);
  return text.ok() ? OomKills(*text) : 0;
}

DiskUsed DiskUsage(const std::vector<std::string>& paths, const DiskUsed& stop_at,
                   const std::vector<pid_t>& holders, const std::vector<std::string>& by_length,
                   const std::atomic<bool>* cancel) {
  DiskUsed total;
  std::set<dev_t> devices;
  for (const auto* group : {&paths, &by_length}) {
    for (const std::string& path : *group) {
      const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) continue;
      struct stat st {};
      if (::fstat(fd, &st) == 0) devices.insert(st.st_dev);
      AddTreeUsage(fd, group == &by_length, stop_at, cancel, total);
    }
  }
  std::set<std::pair<dev_t, ino_t>> counted;
  for (const pid_t pid : holders) {
    if (Passed(total, stop_at)) break;
    AddDeletedOpenFiles(pid, devices, stop_at, counted, total);
  }
  return total;
}

}  // namespace allot::exec
