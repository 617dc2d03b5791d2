// Kept apart: the kernel's struct statx (linux/stat.h) carries stx_mnt_id, and glibc's (which
// <sys/stat.h> declares) does not, and the two cannot meet in one file.
#include "env/mount_id.h"

#include <fcntl.h>
#include <linux/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace allot::env {

std::optional<std::uint64_t> MountIdOf(int fd) {
  struct statx stx {};
  if (::syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) != 0) return std::nullopt;
  if ((stx.stx_mask & STATX_MNT_ID) == 0) return std::nullopt;
  return stx.stx_mnt_id;
}

}  // namespace allot::env
