#include "env/remove_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "env/mount_id.h"

namespace allot::env {

namespace {

// Directories open at once: past it, a directory moves up to the top of the tree.
constexpr std::size_t kMaxOpen = 32;
// A directory found not empty after it was read through is read again (an entry moved into it,
// or added meanwhile); this many times at most, so a tree that keeps growing ends the removal.
constexpr int kMaxRereads = 1 << 20;

struct Level {
  DIR* dir = nullptr;
  std::string name;  // in the level above (the top's: in parent_fd)
};

Status Failed(const char* what, const std::string& name, int error) {
  return Internal(std::string("cannot ") + what + " " + name + ": " + std::strerror(error));
}

// A directory of the tree, opened for reading and changing; one whose rights were taken is made
// the caller's own first (AT_SYMLINK_NOFOLLOW: a link's target is never changed).
int OpenLevel(int parent_fd, const char* name) {
  constexpr int kFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::openat(parent_fd, name, kFlags);
  if (fd < 0 && errno == EACCES && ::fchmodat(parent_fd, name, S_IRWXU, AT_SYMLINK_NOFOLLOW) == 0) {
    fd = ::openat(parent_fd, name, kFlags);
  }
  return fd;
}

// Removes the entry `name` of `dir_fd` that is not a directory; false with errno set if it is
// one (EISDIR) or could not be removed.
bool UnlinkEntry(int dir_fd, const char* name) {
  if (::unlinkat(dir_fd, name, 0) == 0) return true;
  if (errno != EACCES && errno != EPERM) return false;
  const int error = errno;  // the directory's rights taken: make it the caller's own, once
  if (::fchmod(dir_fd, S_IRWXU) != 0) {
    errno = error;
    return false;
  }
  return ::unlinkat(dir_fd, name, 0) == 0;
}

class Remover {
 public:
  explicit Remover(int parent_fd) : parent_fd_(parent_fd) {}
  ~Remover() {
    for (Level& level : levels_) ::closedir(level.dir);
  }
  Remover(const Remover&) = delete;
  Remover& operator=(const Remover&) = delete;

  Result<RemovedTree> Run(const char* name) {
    if (UnlinkEntry(parent_fd_, name)) {
      ++removed_.entries;
      return removed_;
    }
    if (errno == ENOENT) return removed_;
    if (errno != EISDIR) return Failed("remove", name, errno);
    ALLOT_RETURN_IF_ERROR(Enter(parent_fd_, name));
    while (!levels_.empty()) ALLOT_RETURN_IF_ERROR(Step());
    return removed_;
  }

 private:
  int Fd(const Level& level) const { return ::dirfd(level.dir); }
  int ParentFd() const { return levels_.size() < 2 ? parent_fd_ : Fd(levels_[levels_.size() - 2]); }

  Status Enter(int parent_fd, const char* name) {
    const int fd = OpenLevel(parent_fd, name);
    if (fd < 0) {
      if (errno == ENOENT) return Status::Ok();
      return Failed("open", name, errno);
    }
    // Another file system mounted inside the tree is not the tree's: never emptied. Told by the
    // mount id, not st_dev: a btrfs subvolume (any user may make one) has a device of its own
    // and is emptied and removed as a directory. Without mount ids (Linux < 5.8), st_dev.
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int error = errno;
      ::close(fd);
      return Failed("read", name, error);
    }
    const std::optional<std::uint64_t> mount = MountIdOf(fd);
    const std::uint64_t where = mount ? *mount : static_cast<std::uint64_t>(st.st_dev);
    if (!levels_.empty() && where != mount_) {
      ::close(fd);
      return Internal(std::string(name) + " is a mount point: what is below it is not removed");
    }
    mount_ = where;
    DIR* dir = ::fdopendir(fd);
    if (dir == nullptr) {
      const int error = errno;
      ::close(fd);
      return Failed("read", name, error);
    }
    levels_.push_back({dir, name});
    return Status::Ok();
  }

  // One entry of the deepest open directory, or that directory's end.
  Status Step() {
    Level& level = levels_.back();
    errno = 0;
    const dirent* entry = ::readdir(level.dir);
    if (entry == nullptr) return errno != 0 ? Failed("read", level.name, errno) : Leave();
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") return Status::Ok();
    if (UnlinkEntry(Fd(level), entry->d_name)) {
      ++removed_.entries;
      return Status::Ok();
    }
    if (errno == ENOENT) return Status::Ok();
    if (errno != EISDIR) return Failed("remove", std::string(name), errno);
    if (levels_.size() < kMaxOpen) return Enter(Fd(level), entry->d_name);
    return MoveToTop(entry->d_name);
  }

  // The deepest directory was read through: removed from its parent, or read again if something
  // came into it meanwhile (a directory moved up into the top).
  Status Leave() {
    Level& level = levels_.back();
    const bool removed = ::unlinkat(ParentFd(), level.name.c_str(), AT_REMOVEDIR) == 0;
    if (removed || errno == ENOENT) {
      if (removed) ++removed_.entries;
      ::closedir(level.dir);
      levels_.pop_back();
      return Status::Ok();
    }
    if (errno != ENOTEMPTY && errno != EEXIST) return Failed("remove", level.name, errno);
    if (++rereads_ > kMaxRereads) return Failed("remove", level.name, ENOTEMPTY);
    ::rewinddir(level.dir);
    return Status::Ok();
  }

  // A directory too deep to enter goes up into the top directory, under a name of its own.
  Status MoveToTop(const char* name) {
    const int top = Fd(levels_.front());
    for (;;) {
      const std::string to = ".allot-deep-" + std::to_string(next_moved_++);
      if (::renameat2(Fd(levels_.back()), name, top, to.c_str(), RENAME_NOREPLACE) == 0) {
        return Status::Ok();
      }
      int error = errno;
      if (error == EINVAL) {
        // NFS and FUSE refuse the flag: a name free in the top is taken with a plain rename,
        // as nothing else writes there once the job ended.
        struct stat st {};
        if (::fstatat(top, to.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) continue;  // taken
        if (errno != ENOENT) return Failed("move up", name, errno);
        if (::renameat(Fd(levels_.back()), name, top, to.c_str()) == 0) return Status::Ok();
        error = errno;
      }
      if (error != EEXIST) return Failed("move up", name, error);
    }
  }

  const int parent_fd_;
  std::vector<Level> levels_;
  RemovedTree removed_;
  int rereads_ = 0;
  std::uint64_t next_moved_ = 0;
  std::uint64_t mount_ = 0;  // the tree's mount (its st_dev without mount ids)
};

}  // namespace

Result<RemovedTree> RemoveTree(int parent_fd, const char* name) {
  Remover remover(parent_fd);
  return remover.Run(name);
}

}  // namespace allot::env
