#include "env/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
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

}  // namespace allot::env
