#include "env/tree_walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

namespace allot::env {

namespace {

WalkEnd WalkLevel(int dir_fd, int depth, int max_depth,
                  const std::function<bool(const WalkedEntry&)>& visit, int& error) {
  DIR* dir = ::fdopendir(dir_fd);
  if (dir == nullptr) {
    error = errno;
    ::close(dir_fd);
    return WalkEnd::kUnreadable;
  }
  WalkEnd end = WalkEnd::kComplete;
  while (end == WalkEnd::kComplete) {
    errno = 0;
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      if (errno != 0) {
        error = errno;
        end = WalkEnd::kUnreadable;
      }
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
        end = WalkLevel(child, depth + 1, max_depth, visit, error);
      } else if (errno != ENOENT) {  // a link or a file now: swapped since it was listed
        error = errno;
        end = WalkEnd::kUnreadable;
      }
    }
  }
  ::closedir(dir);
  return end;
}

}  // namespace

WalkEnd WalkTree(int dir_fd, int max_depth, const std::function<bool(const WalkedEntry&)>& visit,
                 int* error) {
  int unreadable = 0;
  const WalkEnd end = WalkLevel(dir_fd, 0, max_depth, visit, unreadable);
  if (error != nullptr) *error = unreadable;
  return end;
}

int OpenTreeTop(const char* path) {
  return ::open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

}  // namespace allot::env
