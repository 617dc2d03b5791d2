#pragma once

// Which unfinished job uses which file:// checkpoint location (CheckpointConfig.S3Uri). Each
// attempt restores its checkpoints from that directory and syncs them back to it, so two live jobs
// never share one, and neither's lies inside the other's: else one job would read and overwrite
// another's checkpoints.
//
// A claim lasts while its job is live: in the controller's jobs and not finished. Nothing releases
// a claim explicitly: a check that meets a claim whose job has finished or is gone (a submission
// refused after its claim, or rolled back with a failed write) drops it, and a sweep drops such
// claims whenever the claims have doubled since the last. The claims of the jobs a start restored
// are read from their stored payloads the first time a submission names a checkpoint location, so
// a server whose jobs name none never reads a payload for this.
//
// Locations are compared canonical (CanonicalPath, payload.h): a symbolic link to another job's
// location is that location.
//
// Thread-safety: none; the controller calls it under its lock.

#include <cstddef>
#include <map>
#include <string>
#include <unordered_map>

#include "server/job_record.h"
#include "store/store.h"

namespace allot::server {

class CheckpointClaims {
 public:
  using Jobs = std::unordered_map<model::JobId, JobRecord>;

  // Claims `dir` (LaunchInfo::checkpoint_sync_dir; empty: the job names none, nothing happens) for
  // `job`, a submission not yet in `jobs`. Refuses it (kInvalidArgument naming
  // serviceRequestPayload.CheckpointConfig.S3Uri and the other job's id) when it is, is inside or
  // contains the location of another live job of `jobs`. The first call with a location reads the
  // payloads of the live jobs in `jobs` from `store`; a store that fails then is a fault
  // (kInternal), and the next call reads them again.
  Status Claim(const std::string& dir, const JobRecord& job, const Jobs& jobs, store::Store& store);

  // Claims held, live or not yet dropped (for tests).
  std::size_t size() const { return claims_.size(); }

 private:
  struct Owner {
    model::JobId seq = 0;
    std::string id;  // a sequence number may be used again after a rollback; an id never is
  };
  using Map = std::multimap<std::string, Owner>;  // canonical location -> owner

  static bool Live(const Owner& owner, const Jobs& jobs);
  Status LoadRestored(const Jobs& jobs, store::Store& store);
  // Refuses `dir` if a live claim in [first, last) conflicts (`relation`: how `dir` relates to
  // it); drops the dead ones met.
  Status RefuseLive(Map::iterator first, Map::iterator last, const Jobs& jobs,
                    const std::string& dir, const char* relation);
  void Sweep(const Jobs& jobs);

  static constexpr std::size_t kFirstSweep = 1024;
  Map claims_;
  bool loaded_ = false;                 // the restored jobs' claims have been read
  std::size_t sweep_at_ = kFirstSweep;  // the next sweep, by the number of claims
};

}  // namespace allot::server
