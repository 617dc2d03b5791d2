#pragma once

// Whole files, read and written at once.

#include <sys/types.h>

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

}  // namespace allot::env
