#include "env/tree_walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

namespace allot::env {

namespace {

WalkEnd WalkLevel(int dir_fd, int depth, int max_depth,
                  const std::function<bool(const WalkedEntry&)>& visit) {
  DIR* dir = ::fdopendir(dir_fd);
  if (dir == nullptr) {
    ::close(dir_fd);
    return WalkEnd::kUnreadable;
  }
  WalkEnd end = WalkEnd::kComplete;
  while (end == WalkEnd::kComplete) {
    errno = 0;
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      if (errno != 0) end = WalkEnd::kUnreadable;
      break;
    }
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (::fstatat(::dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!visit(WalkedEntry{::dirfd(dir), entry->d_name, st, depth})) {
      end = WalkEnd::kStopped;
    } else if (S_ISDIR(st.st_mode)) {
      if (depth >= max_depth) {
        end = WalkEnd::kTooDeep;
        break;
      }
      const int child =
          ::openat(::dirfd(dir), entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child >= 0) {
        end = WalkLevel(child, depth + 1, max_depth, visit);
      } else if (errno != ENOENT) {  // a link or a file now: swapped since it was listed
        end = WalkEnd::kUnreadable;
      }
    }
  }
  ::closedir(dir);
  return end;
}

}  // namespace

WalkEnd WalkTree(int dir_fd, int max_depth, const std::function<bool(const WalkedEntry&)>& visit) {
  return WalkLevel(dir_fd, 0, max_depth, visit);
}

int OpenTreeTop(const char* path) {
  return ::open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

}  // namespace allot::env
