#pragma once

// The orders ListServiceJobs answers in, per job queue, so that a filter reads only what it may
// return: all jobs by (createdAt, sequence) for time filters; by status (the default RUNNING
// and any jobStatus); by quota share and status (QUOTA_SHARE_NAME); and by name, ignoring ASCII
// case, for JOB_NAME (exact, or a prefix ending in '*').
//
// Entries point into the job records (their names): a record must be removed from the index
// before it is destroyed. Thread-safety: none; the controller holds its lock.

#include <array>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "common/time.h"
#include "model/job.h"
#include "server/job_record.h"

namespace allot::server {

class ListIndex {
 public:
  using Key = std::pair<Timestamp, model::JobId>;  // (createdAt, sequence)
  using Set = std::set<Key>;
  struct NameKey {
    std::string_view name;  // the job record's own name
    Key key;
  };
  struct NameOrder {  // ASCII case ignored, then (createdAt, sequence)
    bool operator()(const NameKey& a, const NameKey& b) const;
  };
  using NameSet = std::set<NameKey, NameOrder>;

  void Add(const JobRecord& job);
  void Remove(const JobRecord& job);
  // Call before the record's status changes from `from` to `to`.
  void Move(const JobRecord& job, model::JobStatus from, model::JobStatus to);

  const Set& All(std::string_view queue) const;
  const Set& ByStatus(std::string_view queue, model::JobStatus status) const;
  const Set& ByShareStatus(std::string_view queue, std::string_view share,
                           model::JobStatus status) const;
  // The entries whose name equals `name` (or starts with it, when `prefix`), ASCII case ignored.
  std::pair<NameSet::const_iterator, NameSet::const_iterator> ByName(std::string_view queue,
                                                                     std::string_view name,
                                                                     bool prefix) const;

  void Clear() { queues_.clear(); }

 private:
  static constexpr std::size_t kStatuses = 8;
  using ByStatusSets = std::array<Set, kStatuses>;
  struct Queue {
    Set all;
    ByStatusSets by_status;
    std::map<std::string, ByStatusSets, std::less<>> by_share;
    NameSet by_name;
  };
  static const Set kEmpty;
  static const NameSet kNoNames;
  std::map<std::string, Queue, std::less<>> queues_;
};

}  // namespace allot::server
