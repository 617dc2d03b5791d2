#include "env/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace allot::env {
namespace {

Status Error(std::string_view what, const std::string& path, int error) {
  std::string message = std::string(what) + " '" + path + "': " + std::strerror(error);
  if (error == ENOSPC || error == EDQUOT) return ResourceExhausted(std::move(message));
  return Internal(std::move(message));
}

Status WriteAll(int fd, std::string_view text, const std::string& path) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error("cannot write", path, errno);
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return Status::Ok();
}

std::string DirOf(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Error("cannot open", dir, errno);
  Status status = Status::Ok();
  if (::fsync(fd) != 0 && errno != EINVAL) status = Error("cannot sync", dir, errno);
  ::close(fd);
  return status;
}

// Writes, syncs and closes the temporary file behind `fd`.
Status FillTemporary(int fd, std::string_view text, mode_t mode, const std::string& tmp) {
  Status status = Status::Ok();
  if (::fchmod(fd, mode) != 0) status = Error("cannot chmod", tmp, errno);
  if (status.ok()) status = WriteAll(fd, text, tmp);
  if (status.ok() && ::fsync(fd) != 0) status = Error("cannot sync", tmp, errno);
  if (::close(fd) != 0 && status.ok()) status = Error("cannot close", tmp, errno);
  return status;
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view text, mode_t mode) {
  std::string tmp_name = path + ".tmp.XXXXXX";
  std::vector<char> tmp(tmp_name.begin(), tmp_name.end());
  tmp.push_back('\0');
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);  // mode 0600 until FillTemporary
  tmp_name = tmp.data();
  if (fd < 0) return Error("cannot create", tmp_name, errno);
  Status status = FillTemporary(fd, text, mode, tmp_name);
  if (status.ok() && ::rename(tmp_name.c_str(), path.c_str()) != 0) {
    status = Error("cannot rename to", path, errno);
  }
  if (!status.ok()) {
    ::unlink(tmp_name.c_str());
    return status;
  }
  return SyncDir(DirOf(path));
}

Result<std::string> ReadFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) return NotFound("cannot open '" + path + "': " + std::strerror(error));
    return Error("cannot open", path, error);
  }
  std::string text;
  std::array<char, 4096> buffer{};
  while (true) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const Status status = Error("cannot read", path, errno);
      ::close(fd);
      return status;
    }
    if (n == 0) break;
    text.append(buffer.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

namespace {

std::vector<std::string> Components(const std::string& relative) {
  std::vector<std::string> parts;
  std::size_t pos = 0;
  while (pos <= relative.size()) {
    std::size_t end = relative.find('/', pos);
    if (end == std::string::npos) end = relative.size();
    if (end > pos) parts.push_back(relative.substr(pos, end - pos));
    pos = end + 1;
  }
  return parts;
}

Status BeneathError(const std::string& path, int error) {
  if (error == ENOENT) return NotFound("'" + path + "' does not exist");
  if (error == ELOOP || error == ENOTDIR) {
    return FailedPrecondition("'" + path + "' is a symbolic link or not a directory");
  }
  return Error("cannot open", path, error);
}

// Splits "a/b/c" into "a/b" and "c".
std::pair<std::string, std::string> SplitLast(const std::string& relative) {
  const std::size_t slash = relative.rfind('/');
  if (slash == std::string::npos) return {"", relative};
  return {relative.substr(0, slash), relative.substr(slash + 1)};
}

}  // namespace

namespace {

// OpenDirectoryBeneath with `mode` (O_RDONLY or O_PATH) for every directory on the way.
Result<int> OpenBeneath(const std::string& base, const std::string& relative, int mode,
                        int* error_out = nullptr) {
  int fd = ::open(base.c_str(), mode | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    if (error_out != nullptr) *error_out = errno;
    return BeneathError(base, errno);
  }
  std::string path = base;
  for (const std::string& name : Components(relative)) {
    path += (path.back() == '/' ? "" : "/") + name;
    if (name == "..") {
      ::close(fd);
      return FailedPrecondition("'" + path + "' leaves its directory");
    }
    const int next = ::openat(fd, name.c_str(), mode | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int error = errno;
    ::close(fd);
    if (next < 0) {
      if (error_out != nullptr) *error_out = error;
      return BeneathError(path, error);
    }
    fd = next;
  }
  return fd;
}

}  // namespace

Result<int> OpenDirectoryBeneath(const std::string& base, const std::string& relative) {
  return OpenBeneath(base, relative, O_RDONLY);
}

Result<int> OpenPathBeneath(const std::string& base, const std::string& relative, int* error) {
  return OpenBeneath(base, relative, O_PATH, error);
}

Status MakeDirectoriesBeneath(const std::string& base, const std::string& relative) {
  Result<int> fd = OpenDirectoryBeneath(base, "");
  if (!fd.ok()) return fd.status();
  int dir = *fd;
  std::string path = base;
  for (const std::string& name : Components(relative)) {
    path += "/" + name;
    if (name == "..") {
      ::close(dir);
      return FailedPrecondition("'" + path + "' leaves its directory");
    }
    if (::mkdirat(dir, name.c_str(), 0755) != 0 && errno != EEXIST) {
      Status status = Error("cannot create", path, errno);
      ::close(dir);
      return status;
    }
    const int next = ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int error = errno;
    ::close(dir);
    if (next < 0) return BeneathError(path, error);
    dir = next;
  }
  ::close(dir);
  return Status::Ok();
}

Status WriteFileBeneath(const std::string& base, const std::string& relative, std::string_view text,
                        mode_t mode) {
  static std::atomic<unsigned> counter{0};
  const auto [dir, name] = SplitLast(relative);
  if (name.empty() || name == "." || name == "..") {
    return InvalidArgument("'" + relative + "' names no file");
  }
  Result<int> dir_fd = OpenDirectoryBeneath(base, dir);
  if (!dir_fd.ok()) return dir_fd.status();
  const std::string path = base + "/" + relative;
  const std::string tmp = "." + name + ".tmp." + std::to_string(::getpid()) + "." +
                          std::to_string(counter.fetch_add(1));
  const int fd =
      ::openat(*dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  Status status =
      fd < 0 ? Error("cannot create", path, errno) : FillTemporary(fd, text, mode, path);
  if (status.ok() && ::renameat(*dir_fd, tmp.c_str(), *dir_fd, name.c_str()) != 0) {
    status = Error("cannot rename to", path, errno);
  }
  if (!status.ok() && fd >= 0) ::unlinkat(*dir_fd, tmp.c_str(), 0);
  if (status.ok() && ::fsync(*dir_fd) != 0 && errno != EINVAL)
    status = Error("cannot sync", path, errno);
  ::close(*dir_fd);
  return status;
}

Result<std::string> ReadFileBeneath(const std::string& base, const std::string& relative,
                                    std::size_t limit) {
  const auto [dir, name] = SplitLast(relative);
  Result<int> dir_fd = OpenDirectoryBeneath(base, dir);
  if (!dir_fd.ok()) return dir_fd.status();
  const std::string path = base + "/" + relative;
  const int fd = ::openat(*dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  const int error = errno;
  ::close(*dir_fd);
  if (fd < 0) return BeneathError(path, error);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return FailedPrecondition("'" + path + "' is not a regular file");
  }
  std::string text;
  std::array<char, 4096> buffer{};
  while (text.size() < limit) {
    const std::size_t want = std::min(buffer.size(), limit - text.size());
    const ssize_t n = ::read(fd, buffer.data(), want);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

namespace {

// Copies [at, end) of `in` into the same place of `out`: copy_file_range where the kernel can,
// else reads and writes. False (errno set) on a failure.
bool CopyRange(int in, int out, off_t at, off_t end) {
  off_t in_at = at;
  off_t out_at = at;
  bool by_kernel = true;
  std::vector<char> buffer;
  while (in_at < end) {
    const auto want = static_cast<std::size_t>(std::min<off_t>(end - in_at, off_t{1} << 20));
    if (by_kernel) {
      const ssize_t n = ::copy_file_range(in, &in_at, out, &out_at, want, 0);
      if (n > 0) continue;
      if (n == 0) return true;  // the file shrank meanwhile
      if (errno == EINTR) continue;
      if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP) {
        return false;
      }
      by_kernel = false;
      buffer.resize(std::size_t{1} << 20);
    }
    const ssize_t n = ::pread(in, buffer.data(), want, in_at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    for (ssize_t done = 0; done < n;) {
      const ssize_t w =
          ::pwrite(out, buffer.data() + done, static_cast<std::size_t>(n - done), out_at + done);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return false;
      done += w;
    }
    in_at += n;
    out_at += n;
  }
  return true;
}

}  // namespace

Status CopyFileData(const std::string& from, const std::string& to) {
  const int in = ::open(from.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0) {
    return Internal("cannot open '" + from + "': " +
                    (errno == EWOULDBLOCK ? std::string("another process holds a lease on it")
                                          : std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(in);
    return Internal("'" + from + "' is not a regular file");
  }
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0) {
    const int error = errno;
    ::close(in);
    return Internal("cannot create '" + to + "': " + std::strerror(error));
  }
  bool copied = true;
  for (off_t at = 0; copied && at < st.st_size;) {
    // The next run of data and the hole after it; a file system without holes is all data.
    off_t data = ::lseek(in, at, SEEK_DATA);
    if (data < 0 && errno == ENXIO) break;  // a hole to the end
    if (data < 0) data = at;
    off_t hole = ::lseek(in, data, SEEK_HOLE);
    if (hole < 0) hole = st.st_size;
    copied = CopyRange(in, out, data, std::min(hole, st.st_size));
    at = hole;
  }
  copied = copied && ::ftruncate(out, st.st_size) == 0;  // the length, a hole at the end too
  int error = copied ? 0 : errno;
  ::close(in);
  if (::close(out) != 0 && copied) {
    copied = false;
    error = errno;
  }
  if (!copied) {
    ::unlink(to.c_str());
    return Internal("cannot copy '" + from + "' to '" + to +
                    "': " + std::strerror(error != 0 ? error : EIO));
  }
  return Status::Ok();
}

Status CreateSpaceReserve(const std::string& path, std::int64_t bytes) {
  const std::string tmp = path + ".tmp";
  ::unlink(tmp.c_str());  // a creation a crash interrupted
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Error("cannot create", tmp, errno);
  Status status = Status::Ok();
  // posix_fallocate returns its error rather than set errno; where the file system cannot
  // allocate, glibc writes the blocks instead.
  if (const int error = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)); error != 0) {
    status = Error("cannot allocate", tmp, error);
  }
  if (status.ok() && ::fsync(fd) != 0) status = Error("cannot sync", tmp, errno);
  if (::close(fd) != 0 && status.ok()) status = Error("cannot close", tmp, errno);
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    status = Error("cannot rename", tmp, errno);
  }
  if (!status.ok()) ::unlink(tmp.c_str());
  return status;
}

Result<bool> ReleaseSpaceReserve(const std::string& path) {
  if (::unlink(path.c_str()) == 0) return true;
  if (errno == ENOENT) return false;
  return Error("cannot remove", path, errno);
}

bool HasSpaceReserve(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace allot::env
