#pragma once

// Which mount a file is on (statx's STATX_MNT_ID, Linux 5.8). Unlike st_dev, it tells a real
// mount point from a btrfs subvolume, which has a device number of its own but is part of the
// same mount, and which any user may make in a directory of theirs.

#include <cstdint>
#include <optional>

namespace allot::env {

// The mount id of the open file `fd`; nullopt where the kernel does not say (older than 5.8).
std::optional<std::uint64_t> MountIdOf(int fd);

}  // namespace allot::env
