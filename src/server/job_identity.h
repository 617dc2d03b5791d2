#pragma once

// Which unprivileged uid (and gid, the same number) the jobs of a quota share run as
// (DESIGN.md §3, "Every job is hostile"; exec/sandbox.h). Each (queue, share) gets its own, the
// lowest unused one of the server's range [first, first + count), on its first launch; the
// mapping is kept in the store (Kind::kMeta, "job-uid/<queue>/<share>" -> the uid), so it is the
// same after a restart and never handed to another share, even after the share is deleted.
//
// Thread-safety: ShareUser may be called from any thread; allocations are serialized.

#include <cstdint>
#include <string>

#include "common/status.h"
#include "exec/sandbox.h"
#include "store/store.h"

namespace allot::server {

struct JobUidRange {
  std::uint32_t first = 200000;
  std::uint32_t count = 10000;
};

// The store key of a share's uid.
std::string JobUidKey(const std::string& queue, const std::string& share);

// "FIRST:COUNT", both whole numbers, count >= 1, first >= 1000 and the range below 2^31 - 1
// (and never 65534, nobody); InvalidArgument otherwise.
Result<JobUidRange> ParseJobUidRange(const std::string& text);

// The share's user: the stored one, else the next free uid of `range`, stored (committed) before
// it is returned. A queue without quota shares has the share "" (one user for the queue).
// ResourceExhausted when the range has no free uid left; a store failure as the store reports it.
Result<exec::JobUser> ShareUser(store::Store& store, const JobUidRange& range,
                                const std::string& queue, const std::string& share);

// The stored user of the share, if it has one (recovery: never allocates).
Result<std::optional<exec::JobUser>> StoredShareUser(store::Store& store, const std::string& queue,
                                                     const std::string& share);

}  // namespace allot::server
