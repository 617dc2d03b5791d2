#pragma once

// Whole files, read and written at once.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace allot::env {

// Replaces `path` with `text` so that a reader (or a crash) sees the old contents or all of the
// new ones, never part: writes a fresh temporary file in the same directory with `mode`, fsyncs
// it, renames it to `path` and fsyncs the directory. On a failure before the rename the temporary
// file is removed and `path` is untouched (after it, only the directory sync failed). A full disk
// is kResourceExhausted; other failures are kInternal.
Status WriteFileAtomically(const std::string& path, std::string_view text, mode_t mode = 0644);

// The whole file; kNotFound if it does not exist, kInternal for other failures (a directory, say).
Result<std::string> ReadFile(const std::string& path);

// --- Files inside a directory tree someone else controls (a job's /opt/ml) ----------------
// `base` is trusted (the caller's own directory); `relative` is a path of names under it, none
// of which is followed if it is a symbolic link, so a job that replaced a directory of its tree
// by a link cannot make a privileged caller read or write elsewhere. kNotFound when a component
// is missing, kFailedPrecondition when one is a link or not what it should be.

// An O_DIRECTORY descriptor of base/relative ("" = base itself); the caller closes it.
Result<int> OpenDirectoryBeneath(const std::string& base, const std::string& relative);

// The same as an O_PATH descriptor, each directory on the way opened O_PATH too: only search
// permission is needed (root on a root-squashed NFS export has no more), and the descriptor
// serves to bind the directory (bwrap --ro-bind-fd), not to read it. On a failure `error` (if
// given) gets the errno (EACCES: a directory on the way may not be searched).
Result<int> OpenPathBeneath(const std::string& base, const std::string& relative,
                            int* error = nullptr);

// Creates the missing directories of base/relative (mode 0755), never through a link.
Status MakeDirectoriesBeneath(const std::string& base, const std::string& relative);

// As WriteFileAtomically, for base/relative: a fresh temporary file (O_EXCL) renamed over the
// last component, which is replaced (never followed) if it is a link.
Status WriteFileBeneath(const std::string& base, const std::string& relative, std::string_view text,
                        mode_t mode = 0644);

// At most `limit` bytes of the regular file base/relative (never a link, FIFO or device).
Result<std::string> ReadFileBeneath(const std::string& base, const std::string& relative,
                                    std::size_t limit);

// Copies the regular file `from` into a new file `to` (mode 0600; it must not exist), keeping
// its holes: a sparse file stays sparse, so its copy takes the disk the original takes. `from` is
// opened without following a link and without waiting: a lease another process holds on it
// (F_SETLEASE) fails the copy at once (EWOULDBLOCK) rather than hold it for the lease's break
// time. A failed copy leaves nothing at `to`.
Status CopyFileData(const std::string& from, const std::string& to);

// --- Disk space held in reserve for the store ----------------------------------------------
// A file that holds disk space for the store (CockroachDB's emergency ballast): when the disk
// fills and the store's writes fail, removing it gives the store room to write again, so the
// server can record what frees the disk (jobs' ends, whose files can then go; an eviction)
// rather than wait for someone to free it by hand.

// Makes `path` a file of `bytes` allocated on disk (posix_fallocate, not a sparse file), through
// a temporary file renamed into place, then synced. kResourceExhausted where the disk has no
// room for it; on any failure nothing is left behind.
Status CreateSpaceReserve(const std::string& path, std::int64_t bytes);

// Removes `path`: true when it was there, false when there was none.
Result<bool> ReleaseSpaceReserve(const std::string& path);

bool HasSpaceReserve(const std::string& path);

}  // namespace allot::env
