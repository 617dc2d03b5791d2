#pragma once

// Removing a directory tree someone else controls (a finished job's tree in the data
// directory), for a caller with more rights than its owner (root). As WalkTree (tree_walk.h),
// each directory is entered with openat(O_NOFOLLOW) from its parent's descriptor and each entry
// removed through its parent's descriptor, so a directory swapped for a symbolic link is never
// followed: a link is removed, never what it points at. Descriptors are bounded: a directory
// deeper than the bound is moved up to the top of the tree (renameat) and removed from there, so
// a chain of any depth is removed with a few dozen descriptors.

#include <cstdint>

#include "common/status.h"

namespace allot::env {

struct RemovedTree {
  std::int64_t entries = 0;  // files, links and directories removed
};

// Removes the entry `name` of the directory `parent_fd` and, if it is a directory, everything
// below it. Nothing there is fine (kOk). A directory the caller may not enter or change is made
// its own (0700) first, so a job that took the rights off its directories cannot keep its tree
// from a server that runs as its own user. kInternal, with the errno's words, when something
// could not be removed; what could, is.
Result<RemovedTree> RemoveTree(int parent_fd, const char* name);

}  // namespace allot::env
