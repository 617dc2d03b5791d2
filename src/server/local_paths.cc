#include "server/local_paths.h"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <filesystem>

#include "env/acting_as.h"
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

std::optional<std::string> CanonicalPath(const std::string& path, int* error) {
  if (path.empty() || path[0] != '/') return std::nullopt;
  std::string head = path;
  std::string tail;  // the part that does not exist yet: "" or "/a/b"
  std::string real(PATH_MAX, '\0');
  while (::realpath(head.c_str(), real.data()) == nullptr) {
    if (errno != ENOENT && errno != ENOTDIR) {  // a loop, no permission
      if (error != nullptr) *error = errno;
      return std::nullopt;
    }
    // Only a name that is not there at all may stay as written: a dangling link is there, and
    // leads to a place of someone else's choosing.
    struct stat st {};
    const bool there = ::lstat(head.c_str(), &st) == 0;
    if (there || (errno != ENOENT && errno != ENOTDIR)) {
      if (error != nullptr) *error = there ? 0 : errno;  // 0: a dangling link
      return std::nullopt;
    }
    const std::size_t slash = head.rfind('/');
    tail = head.substr(slash) + tail;
    head = slash == 0 ? "/" : head.substr(0, slash);
  }
  real.resize(real.find('\0'));
  return real == "/" && !tail.empty() ? tail : real + tail;
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
                      const std::optional<exec::JobUser>& as,
                      std::string* resolved_path = nullptr) {
  int error = 0;
  const std::optional<std::string> real = CanonicalPath(path, &error);
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

}  // namespace

namespace {

// CheckLocalPaths, and with `resolved` (a copy of parsed.launch) each local path of it replaced
// by where it led when it was checked.
Status CheckPaths(const ParsedPayload& parsed, const std::vector<std::string>& file_roots,
                  const std::string& data_dir, bool channels_exist,
                  const std::optional<exec::JobUser>& as, LaunchInfo* resolved) {
  const LaunchInfo& launch = parsed.launch;
  if (!HasLocalPaths(parsed)) return {};  // nothing local: no file system call
  const LocalRoots roots = ResolveRoots(file_roots, data_dir);  // as the server
  // The paths as the share's jobs reach them (env/acting_as.h): what they may not reach is
  // refused here, as the executor would refuse it at launch, and a directory closed to them
  // tells nothing of what lies below it. This thread only; restored when `acting` goes.
  std::optional<env::ActingAs> acting;
  if (as) {
    acting.emplace(as->uid, as->gid);
    if (!acting->acting()) {
      return Internal("cannot take the user of the quota share's jobs (uid " +
                      std::to_string(as->uid) + ") to check its file:// paths");
    }
  }
  for (std::size_t i = 0; i < launch.channels.size(); ++i) {
    const auto& [name, dir] = launch.channels[i];
    const std::string field =
        kPrefix + "InputDataConfig." + name + ".DataSource.S3DataSource.S3Uri";
    std::string real;
    // First: a path outside the roots is not even looked at.
    ALLOT_RETURN_IF_ERROR(CheckUnderRoot(dir, field, roots, as, &real));
    struct stat st {};
    if (channels_exist && ::stat(real.c_str(), &st) != 0) {
      return InvalidArgument(field + ": file://" + dir + " does not exist on this machine");
    }
    if (resolved != nullptr) resolved->channels[i].second = std::move(real);
  }
  if (!launch.checkpoint_sync_dir.empty()) {
    ALLOT_RETURN_IF_ERROR(CheckUnderRoot(launch.checkpoint_sync_dir,
                                         kPrefix + "CheckpointConfig.S3Uri", roots, as,
                                         resolved ? &resolved->checkpoint_sync_dir : nullptr));
  }
  if (!parsed.output_dir.empty()) {
    return CheckUnderRoot(parsed.output_dir, kPrefix + "OutputDataConfig.S3OutputPath", roots, as);
  }
  return {};
}

}  // namespace

bool HasLocalPaths(const ParsedPayload& parsed) {
  return !parsed.launch.channels.empty() || !parsed.launch.checkpoint_sync_dir.empty() ||
         !parsed.output_dir.empty();
}

Status CheckLocalPaths(const ParsedPayload& parsed, const std::vector<std::string>& file_roots,
                       const std::string& data_dir, bool channels_exist,
                       const std::optional<exec::JobUser>& as) {
  return CheckPaths(parsed, file_roots, data_dir, channels_exist, as, nullptr);
}

Result<LaunchInfo> ResolveLocalPaths(const ParsedPayload& parsed,
                                     const std::vector<std::string>& file_roots,
                                     const std::string& data_dir,
                                     const std::optional<exec::JobUser>& as) {
  LaunchInfo resolved = parsed.launch;
  ALLOT_RETURN_IF_ERROR(
      CheckPaths(parsed, file_roots, data_dir, /*channels_exist=*/false, as, &resolved));
  return resolved;
}

}  // namespace allot::server
