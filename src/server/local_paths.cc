#include "server/local_paths.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <deque>
#include <filesystem>

#include "exec/as_job_user.h"
#include "server/api_error.h"
#include "server/json.h"

namespace allot::server {

using api::IsUnder;
using api::LaunchInfo;
using api::ParsedPayload;

namespace {

bool Overlaps(const std::string& a, const std::string& b) { return IsUnder(a, b) || IsUnder(b, a); }

const std::string kPrefix = "serviceRequestPayload.";

}  // namespace

namespace {

// The budget of one resolution: the kernel's own limit on links (40, path_resolution(7)), and a
// cap on the names looked at (PathBudget, shared by a request's paths). A tenant chooses both
// the path and the links on its way (a job's links reach its checkpoint location), so a path
// through long chains of long links costs a few thousand system calls at most, never the
// minutes a resolution of each of its prefixes took.
constexpr int kMaxLinks = 40;

struct Pending {
  std::string name;
  bool from_link;  // a name of a link's target: if it is not there, the link dangles
};

// Puts the names of `path` in front of `todo`, in order.
void PushFront(std::deque<Pending>& todo, const std::string& path, bool from_link) {
  std::vector<std::string> names;
  for (std::size_t pos = 0; pos <= path.size();) {
    std::size_t end = path.find('/', pos);
    if (end == std::string::npos) end = path.size();
    if (end > pos) names.push_back(path.substr(pos, end - pos));
    pos = end + 1;
  }
  for (auto it = names.rbegin(); it != names.rend(); ++it) todo.push_front({*it, from_link});
}

// The rest of a path that is not there, as written: "/a/b" for {a, b}.
std::string Rest(const std::string& first, const std::deque<Pending>& todo) {
  std::string rest = "/" + first;
  for (const Pending& p : todo) rest += "/" + p.name;
  return rest;
}

// A walk from / that holds its directory by descriptor and follows each link itself, so the
// budget above bounds it and every lookup is checked as the thread's (file system) user.
class Resolver {
 public:
  ~Resolver() {
    if (dir_ >= 0) ::close(dir_);
  }
  explicit Resolver(PathBudget& budget) : budget_(budget) {}
  std::optional<std::string> Run(const std::string& path, int* error);

 private:
  std::optional<std::string> Fail(int error_number, int* error) {
    if (error != nullptr) *error = error_number;
    return std::nullopt;
  }
  bool Enter(int fd, const std::string& name) {
    if (fd < 0) return false;
    ::close(dir_);
    dir_ = fd;
    if (name == "..") {
      if (!at_.empty()) at_.pop_back();
    } else if (!name.empty()) {
      at_.push_back(name);
    }
    return true;
  }
  bool Root() {
    at_.clear();
    return Enter(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), "");
  }

  PathBudget& budget_;
  int dir_ = -1;
  std::vector<std::string> at_;  // the canonical names from / to dir_
};

std::optional<std::string> Resolver::Run(const std::string& path, int* error) {
  if (path.empty() || path[0] != '/') return std::nullopt;
  if (!Root()) return Fail(errno, error);
  std::deque<Pending> todo;
  PushFront(todo, path, /*from_link=*/false);
  int links = 0;
  std::string tail;  // the part that is not there yet: "" or "/a/b"
  while (!todo.empty()) {
    const Pending next = std::move(todo.front());
    todo.pop_front();
    // Only the links' names count: the written ones are bounded by the request's size.
    if (next.from_link && budget_.names_left-- <= 0) return Fail(ELOOP, error);
    if (next.name == ".") continue;
    if (next.name == "..") {
      if (!at_.empty() && !Enter(::openat(dir_, "..", O_PATH | O_DIRECTORY | O_CLOEXEC), "..")) {
        return Fail(errno, error);
      }
      continue;
    }
    struct stat st {};
    if (::fstatat(dir_, next.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      const int e = errno;
      // Only a name that is not there at all may stay as written: a link whose target is not
      // there is there, and leads to a place of someone else's choosing (0: a dangling link).
      if (e != ENOENT && e != ENOTDIR) return Fail(e, error);
      if (next.from_link) return Fail(0, error);
      tail = Rest(next.name, todo);
      break;
    }
    if (S_ISLNK(st.st_mode)) {
      if (++links > kMaxLinks) return Fail(ELOOP, error);
      std::string target(PATH_MAX, '\0');
      const ssize_t n = ::readlinkat(dir_, next.name.c_str(), target.data(), target.size());
      if (n <= 0 || static_cast<std::size_t>(n) >= target.size()) {
        return Fail(n < 0 ? errno : ENAMETOOLONG, error);
      }
      target.resize(static_cast<std::size_t>(n));
      if (target[0] == '/' && !Root()) return Fail(errno, error);
      PushFront(todo, target, /*from_link=*/true);
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      const int fd =
          ::openat(dir_, next.name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (!Enter(fd, next.name)) return Fail(errno, error);
      continue;
    }
    // Not a directory: the last name, or what follows it is not there.
    at_.push_back(next.name);
    if (todo.empty()) break;
    if (todo.front().from_link) return Fail(0, error);
    tail = Rest(todo.front().name, std::deque<Pending>(todo.begin() + 1, todo.end()));
    break;
  }
  std::string real;
  for (const std::string& name : at_) real += "/" + name;
  if (real.empty()) return tail.empty() ? "/" : tail;
  return real + tail;
}

}  // namespace

std::optional<std::string> CanonicalPath(const std::string& path, int* error, PathBudget* budget) {
  PathBudget own;
  return Resolver(budget != nullptr ? *budget : own).Run(path, error);
}

Result<std::vector<std::string>> CanonicalFileRoots(const std::vector<std::string>& roots,
                                                    const std::string& data_dir) {
  std::error_code ec;
  std::string data = std::filesystem::absolute(data_dir, ec).lexically_normal().string();
  if (data.size() > 1 && data.back() == '/') data.pop_back();
  const std::optional<std::string> real_data = CanonicalPath(data);
  if (ec || !real_data) {
    return InvalidArgument("--data-dir " + data_dir +
                           ": cannot resolve it to check the file roots");
  }
  std::vector<std::string> out;
  for (const std::string& root : roots) {
    const std::string flag = "--file-root " + root + ": ";
    std::string real(PATH_MAX, '\0');
    struct stat st {};
    if (root.empty() || ::realpath(root.c_str(), real.data()) == nullptr ||
        ::stat(real.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return InvalidArgument(flag + "must be an existing directory");
    }
    real.resize(real.find('\0'));
    if (real == "/") {
      return InvalidArgument(flag +
                             "the root directory would let jobs read every file on this machine; "
                             "give the directories that hold only what jobs may read and write");
    }
    if (Overlaps(real, *real_data)) {
      return InvalidArgument(flag + "overlaps the data directory " + *real_data +
                             " (it is the data directory, inside it or contains it): jobs could "
                             "read the server's credentials and other jobs' files; give a "
                             "directory outside it");
    }
    out.push_back(real);
  }
  return out;
}

namespace {

// The roots as a check sees them now: each resolved again (a root that no longer resolves allows
// nothing), and the data directory, which no local path may overlap whatever the roots say.
struct LocalRoots {
  std::vector<std::string> given;  // as configured, for messages
  std::vector<std::string> real;
  std::optional<std::string> data_dir;
};

LocalRoots ResolveRoots(const std::vector<std::string>& file_roots, const std::string& data_dir) {
  LocalRoots roots{.given = file_roots};
  for (const std::string& root : file_roots) {
    if (std::optional<std::string> real = CanonicalPath(root)) roots.real.push_back(*real);
  }
  roots.data_dir = CanonicalPath(data_dir);
  return roots;
}

// A path for a message: printable whatever bytes a file name holds.
std::string Printable(const std::string& path) {
  const std::string quoted = Json(path).dump(-1, ' ', false, Json::error_handler_t::replace);
  return quoted.substr(1, quoted.size() - 2);
}

// Refuses `path` (from the file:// URI in `field`) unless it lies in a root once resolved (as
// `as`, when given: the caller acts as that user). When `resolved` is given, it gets where the
// path leads, as checked.
Status CheckUnderRoot(const std::string& path, const std::string& field, const LocalRoots& roots,
                      const std::optional<exec::JobUser>& as, PathBudget& budget,
                      std::string* resolved_path = nullptr) {
  int error = 0;
  const std::optional<std::string> real = CanonicalPath(path, &error, &budget);
  bool allowed = real && (!roots.data_dir || !Overlaps(*real, *roots.data_dir));
  bool lexically = false;
  bool resolved = false;
  for (const std::string& root : roots.real) {
    lexically = lexically || IsUnder(path, root);
    resolved = resolved || (real && IsUnder(*real, root));
  }
  if (allowed && resolved) {
    if (resolved_path != nullptr) *resolved_path = *real;
    return {};
  }
  if (lexically && error == ELOOP) {
    return InvalidArgument(field + ": file://" + path +
                           " takes too many symbolic links to resolve: each path may follow at "
                           "most 40, and the targets of a request's links may name 4096 "
                           "directories in all");
  }
  if (lexically && error == EACCES && as) {
    // Said only of a path under a root: what lies past the closed directory stays unsaid.
    return InvalidArgument(field + ": file://" + path +
                           " is under a file root, but the jobs of this quota share (uid " +
                           std::to_string(as->uid) +
                           ") may not reach it: every directory above it must let them through");
  }
  std::string set;
  for (const std::string& root : roots.given) set += (set.empty() ? "" : ", ") + Printable(root);
  return InvalidArgument(
      field + ": file://" + path + " is not under an allowed file root" +
      (lexically ? " once symbolic links are resolved" : "") +
      "; the server allows file:// URIs only under the directories given with --file-root (" +
      (set.empty() ? "none are set" : "set: " + set) + ")");
}

// Whether the calling thread's file system user may do `mode` (R_OK, W_OK, X_OK) on `path`:
// faccessat2 with AT_EACCESS checks as the thread's fsuid and fsgid, with its effective
// capabilities, as the job would (plain access() would ask as the real uid, root).
bool MayAccess(const std::string& path, int mode) {
#ifdef SYS_faccessat2
  return ::syscall(SYS_faccessat2, AT_FDCWD, path.c_str(), mode, AT_EACCESS) == 0;
#else
  return ::faccessat(AT_FDCWD, path.c_str(), mode, AT_EACCESS) == 0;
#endif
}

// The share's jobs copy a checkpoint location in and out as their own user (exec
// CopyIdentity): it must be a directory that user may read and write, or one it may make, in
// the nearest directory that is there. A location no job of the share could use would still be
// claimed for it at its first launch, keeping its owner's team out of its own directory.
// Called as that user; the path is under a root and reachable, so nothing here is news to it.
Status CheckWritable(const std::string& path, const std::string& real, const std::string& field,
                     const exec::JobUser& as) {
  std::string there = real;
  struct stat st {};
  while (::stat(there.c_str(), &st) != 0 && there.size() > 1) {
    there = std::filesystem::path(there).parent_path().string();
  }
  const bool exists = there == real;
  if ((!exists || S_ISDIR(st.st_mode)) &&
      MayAccess(there, exists ? R_OK | W_OK | X_OK : W_OK | X_OK)) {
    return {};
  }
  return InvalidArgument(field + ": file://" + path + (exists ? "" : " does not exist yet, and") +
                         " the jobs of this quota share (uid " + std::to_string(as.uid) +
                         ") may not " + (exists ? "read and write it" : "make it") +
                         ": its checkpoints are copied in and out as that user");
}

std::string ChannelField(const std::string& name) {
  return kPrefix + "InputDataConfig." + name + ".DataSource.S3DataSource.S3Uri";
}

// ResolveLocalPaths into `resolved` (a copy of parsed.launch).
Status ResolvePaths(const ParsedPayload& parsed, const std::vector<std::string>& file_roots,
                    const std::string& data_dir, const std::optional<exec::JobUser>& as,
                    LaunchInfo& resolved) {
  const LaunchInfo& launch = parsed.launch;
  if (!HasLocalPaths(parsed)) return {};  // nothing local: no file system call
  const LocalRoots roots = ResolveRoots(file_roots, data_dir);  // as the server
  PathBudget budget;  // one for all the request's paths: its cost is bounded, not each path's
  // The paths as the share's jobs reach them: what they may not reach is refused here, as the
  // executor would refuse it at launch, and a directory closed to them tells nothing of what
  // lies below it.
  const exec::AsJobUser acting(as);
  ALLOT_RETURN_IF_ERROR(acting.Taken("check the quota share's file:// paths"));
  for (std::size_t i = 0; i < launch.channels.size(); ++i) {
    const auto& [name, dir] = launch.channels[i];
    // A path outside the roots is not even looked at.
    ALLOT_RETURN_IF_ERROR(
        CheckUnderRoot(dir, ChannelField(name), roots, as, budget, &resolved.channels[i].second));
  }
  if (!launch.checkpoint_sync_dir.empty()) {
    ALLOT_RETURN_IF_ERROR(CheckUnderRoot(launch.checkpoint_sync_dir,
                                         kPrefix + "CheckpointConfig.S3Uri", roots, as, budget,
                                         &resolved.checkpoint_sync_dir));
  }
  if (!parsed.output_dir.empty()) {
    return CheckUnderRoot(parsed.output_dir, kPrefix + "OutputDataConfig.S3OutputPath", roots, as,
                          budget);
  }
  return {};
}

}  // namespace

Status CheckLocalUse(const ParsedPayload& parsed, const LaunchInfo& resolved,
                     const std::optional<exec::JobUser>& as, bool channels_exist) {
  const LaunchInfo& launch = parsed.launch;
  if (!channels_exist && (!as || launch.checkpoint_sync_dir.empty())) return {};
  if (launch.channels.empty() && launch.checkpoint_sync_dir.empty()) return {};
  const exec::AsJobUser acting(as);
  ALLOT_RETURN_IF_ERROR(acting.Taken("check the quota share's file:// paths"));
  for (std::size_t i = 0; channels_exist && i < launch.channels.size(); ++i) {
    struct stat st {};
    if (::stat(resolved.channels[i].second.c_str(), &st) != 0) {
      return InvalidArgument(ChannelField(launch.channels[i].first) + ": file://" +
                             launch.channels[i].second + " does not exist on this machine");
    }
  }
  if (as && !launch.checkpoint_sync_dir.empty()) {
    return CheckWritable(launch.checkpoint_sync_dir, resolved.checkpoint_sync_dir,
                         kPrefix + "CheckpointConfig.S3Uri", *as);
  }
  return {};
}

bool HasLocalPaths(const ParsedPayload& parsed) {
  return !parsed.launch.channels.empty() || !parsed.launch.checkpoint_sync_dir.empty() ||
         !parsed.output_dir.empty();
}

Status CheckLocalPaths(const ParsedPayload& parsed, const std::vector<std::string>& file_roots,
                       const std::string& data_dir, bool channels_exist,
                       const std::optional<exec::JobUser>& as) {
  Result<LaunchInfo> resolved = ResolveLocalPaths(parsed, file_roots, data_dir, as);
  if (!resolved.ok()) return resolved.status();
  return CheckLocalUse(parsed, *resolved, as, channels_exist);
}

Result<LaunchInfo> ResolveLocalPaths(const ParsedPayload& parsed,
                                     const std::vector<std::string>& file_roots,
                                     const std::string& data_dir,
                                     const std::optional<exec::JobUser>& as) {
  LaunchInfo resolved = parsed.launch;
  ALLOT_RETURN_IF_ERROR(ResolvePaths(parsed, file_roots, data_dir, as, resolved));
  return resolved;
}

}  // namespace allot::server
