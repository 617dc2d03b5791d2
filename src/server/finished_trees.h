#pragma once

// The trees finished jobs leave in the data directory (<jobs-root>/jobs/<id>: each attempt's
// /opt/ml and logs, the job's checkpoints), by quota share, and which to remove first when the
// file system runs short. A job's tree is measured once it ended, and removed only then.
//
// The order is kubelet's image collection applied to tenants: the share that holds the most
// (its finished trees and its running jobs' trees) goes first, its oldest finished tree first.
// So a team that fills the disk with its jobs' files loses its own oldest files, and another
// team's only once it holds more, or once only running jobs' trees are left. Pure: no I/O.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/time.h"
#include "model/job.h"

namespace allot::server {

// A file system's use in bytes; `used` counts the blocks reserved for root (statvfs f_bavail).
struct DiskUsage {
  std::int64_t used = 0;
  std::int64_t total = 0;
  // `used` counts room the store's reserve needs besides (Controller::JobsDiskUsage).
  bool counts_store_reserve = false;
  std::int64_t available() const { return total - used; }  // to an unprivileged writer
};

class FinishedTrees {
 public:
  struct Tree {
    model::JobId seq = 0;
    std::string share;  // "queue/share" (JobRecord::ShareKey)
    std::int64_t bytes = 0;
  };

  // A finished job's tree, measured. Adding one known already replaces it.
  void Add(const std::string& share, Timestamp ended, model::JobId seq, std::int64_t bytes);
  // Its tree is gone (removed, or the job with it).
  void Forget(model::JobId seq);

  // The trees to remove, in order, until they free at least `bytes` (all of them when they take
  // less): each time the oldest tree of the share that holds the most (ties: the share's name).
  // What a share holds is its finished trees not yet picked, plus its `live` bytes (its running
  // and waiting jobs' trees, which are never picked), so a team whose running jobs fill the disk
  // gives its own finished files first. Trees in `skip` (a removal that failed, to be tried
  // again later) are not picked, and count as held. Every ordering is total: ties of end time
  // go by seq.
  std::vector<Tree> Pick(std::int64_t bytes, const std::map<std::string, std::int64_t>& live = {},
                         const std::set<model::JobId>& skip = {}) const;

  std::int64_t Bytes(const std::string& share) const;  // of its finished trees
  // Each share holding finished trees, by name, with their bytes.
  std::vector<std::pair<std::string, std::int64_t>> ShareBytes() const;
  std::int64_t TotalBytes() const { return total_bytes_; }
  std::size_t size() const { return where_.size(); }

 private:
  using Order = std::pair<Timestamp, model::JobId>;  // end time, then seq
  struct Share {
    std::int64_t bytes = 0;
    std::map<Order, std::int64_t> trees;  // bytes of each
  };
  std::map<std::string, Share> shares_;
  std::map<model::JobId, std::pair<std::string, Order>> where_;  // seq -> its share and order
  std::int64_t total_bytes_ = 0;
};

// A running or waiting job's tree, measured (it is never removed while the job lives).
struct LiveTree {
  model::JobId seq = 0;
  std::string share;  // "queue/share"
  std::int64_t bytes = 0;
  bool stopping = false;  // under a stop already: counts for its share, never picked
};

// The job to terminate, and what its share holds (its finished and its live trees).
struct Eviction {
  LiveTree tree;
  std::int64_t share_bytes = 0;
};

// The job to terminate when the file system stays past the eviction mark and no finished tree
// is left to remove (kubelet's eviction under disk pressure, by tenant): the largest live tree of
// the share that holds the most (its finished and its live trees; ties: the share's name), ties
// within it to the newest job (the largest seq). None when the live trees together hold less
// than `excess` (the bytes over the mark): then what fills the disk is not the jobs' files, and
// terminating jobs would not free it.
std::optional<Eviction> PickEviction(const std::vector<LiveTree>& live,
                                     const FinishedTrees& finished, std::int64_t excess = 0);

}  // namespace allot::server
