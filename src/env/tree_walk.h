#pragma once

// A walk of a directory tree that someone else controls (a job's checkpoint directory or its
// /opt/ml), for a caller with more rights than its owner (root). Each directory is entered with
// openat(O_NOFOLLOW) from its parent's descriptor, so one swapped for a symbolic link while the
// walk runs is never followed; one directory is open per level and the depth is capped, so a
// chain of directories runs the walk out of neither descriptors, memory nor stack.

#include <sys/stat.h>

#include <functional>

namespace allot::env {

struct WalkedEntry {
  int dir_fd;             // the directory holding the entry, for the visitor's *at() calls
  const char* name;       // its name in that directory
  const struct stat& st;  // fstatat(AT_SYMLINK_NOFOLLOW): a link is a link
  int depth;              // 0: directly in the top directory
};

enum class WalkEnd {
  kComplete,    // every entry was visited
  kStopped,     // the visitor returned false
  kTooDeep,     // a directory more than max_depth levels below the top was met, and not entered
  kUnreadable,  // a directory could not be read, or a listed one opened (one gone since is not)
};

// Visits every entry below the directory `dir_fd`, which it takes (and closes), each directory's
// entries before those of the next. Entries that vanish between the listing and their stat are
// skipped. The walk ends at the first kTooDeep or kUnreadable; for kUnreadable, `error` (if
// given) gets the errno (ELOOP or ENOTDIR: a directory swapped for something else since it was
// listed).
WalkEnd WalkTree(int dir_fd, int max_depth, const std::function<bool(const WalkedEntry&)>& visit,
                 int* error = nullptr);

// An O_RDONLY | O_DIRECTORY descriptor of `path`, whose last component is not followed if it is
// a link (its parents are the caller's own); -1 with errno set otherwise.
int OpenTreeTop(const char* path);

}  // namespace allot::env
