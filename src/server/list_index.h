#pragma once

// The order ListServiceJobs answers in (createdAt, then the job's sequence; newest first), per
// job queue, kept three ways so a filter reads only what it may return: all jobs (time and name
// filters), by status (the default RUNNING and any jobStatus), and by quota share and status
// (QUOTA_SHARE_NAME with jobStatus). A JOB_NAME filter still scans the queue's jobs.
//
// Thread-safety: none; the controller holds its lock.

#include <map>
#include <set>
#include <string>
#include <utility>

#include "common/time.h"
#include "model/job.h"

namespace allot::server {

class ListIndex {
 public:
  using Key = std::pair<Timestamp, model::JobId>;  // (createdAt, sequence)
  using Set = std::set<Key>;

  // `share` is the quota share's name ("" on a queue without quota shares).
  void Add(const std::string& queue, const std::string& share, const std::string& status,
           Key key);
  void Remove(const std::string& queue, const std::string& share, const std::string& status,
              Key key);
  void Move(const std::string& queue, const std::string& share, const std::string& from,
            const std::string& to, Key key);

  const Set& All(const std::string& queue) const;
  const Set& ByStatus(const std::string& queue, const std::string& status) const;
  const Set& ByShareStatus(const std::string& queue, const std::string& share,
                           const std::string& status) const;

  void Clear() { queues_.clear(); }

 private:
  struct Queue {
    Set all;
    std::map<std::string, Set> by_status;
    std::map<std::pair<std::string, std::string>, Set> by_share_status;
  };
  static const Set kEmpty;
  std::map<std::string, Queue> queues_;
};

}  // namespace allot::server
