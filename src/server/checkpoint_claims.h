#pragma once

// Which job uses which file:// location: the checkpoint location of each job
// (CheckpointConfig.S3Uri) and the input channels of each unfinished job (InputDataConfig S3Uris).
// Each attempt restores its checkpoints from its location and syncs them back to it, and the
// files there are its quota share's (written as the share's uid), so:
//
// - two live jobs never share a checkpoint location, and neither's lies inside the other's: else
//   one would read and overwrite the other's checkpoints;
// - a checkpoint location stays its share's after the job finished: another share's job may
//   neither read it as an input channel (or a directory inside or around it) nor take it as its own
//   checkpoint location, which would restore the old checkpoints or plant files that the share's
//   next job restores. A share may use its own locations again;
// - a checkpoint location is refused where a live job of another share reads (an input channel
//   that is, holds or lies inside it), since a channel is bound into that job's sandbox.
//
// A share is a (queue, share) pair, as job uids are (job_identity.h).
//
// A checkpoint claim is stored (store::Kind::kCheckpointClaim, one record per share and location,
// committed when a job launches with it, so a job that never ran leaves none), since a finished
// job's payload is not read again; the claims of
// live jobs are rebuilt from their stored payloads. Both are read the first time after a start
// that a submission or a launch names a file:// location, so a server whose jobs name none reads
// nothing for this, and one with a million finished jobs reads no payload of theirs, except once
// per store: the jobs that finished before these records existed get theirs then, and a meta
// record says it was done. Nothing releases a
// claim explicitly: one whose job is gone (a submission refused after its claim, or rolled back
// with a failed write) or a finished job's input channel is dropped when met and by a sweep
// whenever the claims have doubled since the last; of a share's finished checkpoint claims of one
// location only the newest is kept. So the claims are about one per location ever used, and one
// per channel of each live job.
//
// Locations are compared canonical (CanonicalPath, local_paths.h): a symbolic link to another
// job's location is that location.
//
// Thread-safety: none; the controller calls it under its lock.

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/payload.h"
#include "exec/sandbox.h"
#include "server/job_record.h"
#include "store/store.h"

namespace allot::server {

class CheckpointClaims {
 public:
  using Jobs = std::unordered_map<model::JobId, JobRecord>;

  // Checks the file:// locations `launch` names for `job`, a submission not yet in `jobs`, and
  // records them (nothing when it names none). A refusal (kInvalidArgument) names the field and
  // how the location meets the other one:
  // - CheckpointConfig.S3Uri is, lies inside or contains the checkpoint location of another live
  //   job, a checkpoint location of another share (its job finished or not), or an input channel
  //   of a live job of another share;
  // - an input channel is, lies inside or contains a checkpoint location of another share.
  // The first call with a location reads the stored claims and the payloads of the live jobs in
  // `jobs` from `store`; a store that fails then is a fault (kInternal), and the next call reads
  // them again. `then` (if given) runs once these checks passed, and before anything is
  // recorded, whether or not a location is named: its refusal leaves nothing behind either (the
  // controller asks there whether each path is there and may be used: local_paths.h).
  // `resolved`: the same launch with its paths as the caller resolved them, as the share's jobs
  // reach them (local_paths.h ResolveLocalPaths), so that the location claimed is the one whose
  // roots and permissions were checked; null: they are resolved here, as the server.
  Status Claim(const api::LaunchInfo& launch, const JobRecord& job, const Jobs& jobs,
               store::Store& store, const std::function<Status()>& then = {},
               const api::LaunchInfo* resolved = nullptr);

  // The checks of Claim by the paths as written only, none resolved (a submission's first step:
  // local_paths.h), recording nothing.
  Status CheckWritten(const api::LaunchInfo& launch, const JobRecord& job, const Jobs& jobs,
                      store::Store& store);

  // The same checks for `job` (in `jobs`) as it launches, with its locations resolved again
  // (a link under a root may lead elsewhere since its submission: by the caller, see `resolved`
  // below, or here as the server); its own claims do not count and
  // nothing is recorded in memory. When they pass, `records` (if given) gets the records that
  // keep its checkpoint location its share's once it finished, to commit before it launches
  // (and writes there); none when it names no location.
  // `resolved`: `launch`'s paths are as the caller resolved them at this launch (local_paths.h);
  // they are then not resolved again, so what is checked and recorded is what the executor gets.
  Status CheckAtLaunch(const api::LaunchInfo& launch, const JobRecord& job, const Jobs& jobs,
                       store::Store& store, store::Batch* records = nullptr, bool resolved = false);

  // Whom the live jobs' locations read back after a start are resolved as: their share's jobs'
  // user (the controller's PathsUser); unset, as the server.
  using UserOf = std::function<Result<std::optional<exec::JobUser>>(const JobRecord&)>;
  void SetUserOf(UserOf user_of) { user_of_ = std::move(user_of); }

  // Claims held, live or not yet dropped (for tests).
  std::size_t size() const { return claims_.size(); }

 private:
  struct Use {
    model::JobId seq = 0;
    std::string id;      // a sequence number may be used again after a rollback; an id never is
    std::string share;   // "queue/share"
    bool reads = false;  // an input channel, which counts while its job is live; else checkpoints
  };
  using Map = std::multimap<std::string, Use>;  // canonical location -> use

  // A location a submission or a launch names, resolved.
  struct Wanted {
    std::string field;  // for messages
    std::string path;   // as written
    std::string real;   // canonical
    bool reads = false;
  };

  // The job of `use` in `jobs`; null when it is gone.
  static const JobRecord* JobOf(const Use& use, const Jobs& jobs);
  // `launch`'s locations; where they lead: `resolved`'s paths (the same launch, resolved by the
  // caller) if given, else each resolved here as `as` (the server when unset).
  static std::vector<Wanted> Resolve(const api::LaunchInfo& launch, const api::LaunchInfo* resolved,
                                     const std::optional<exec::JobUser>& as);
  // The stored claims of `job`'s checkpoint locations among `wanted`, into `batch`.
  static void AddRecords(const std::vector<Wanted>& wanted, const JobRecord& job,
                         store::Batch& batch);
  // Reads the restored jobs' claims on first use, then checks each of `wanted` (Check).
  Status CheckAll(const std::vector<Wanted>& wanted, const JobRecord& job, const Jobs& jobs,
                  store::Store& store);
  Status LoadRestored(const Jobs& jobs, store::Store& store);
  // Refuses `wanted` for `job` if a use of another job conflicts with it; drops the uses met that
  // count no more.
  Status Check(const Wanted& wanted, const JobRecord& job, const Jobs& jobs);
  // Check for one form of the wanted location: `path`, as written or as resolved.
  Status CheckOne(const Wanted& wanted, const std::string& path, const JobRecord& job,
                  const Jobs& jobs);
  // Of each share's finished checkpoint claims in [first, last) (one location), drops all but
  // the newest: that one keeps the location the share's, also should a claim added after it be
  // refused or rolled back.
  void KeepNewestFinished(Map::iterator first, Map::iterator last, const Jobs& jobs);
  // Drops the claims of gone jobs, the input channels of finished ones and what
  // KeepNewestFinished drops.
  void Sweep(const Jobs& jobs);

  static constexpr std::size_t kFirstSweep = 1024;
  Map claims_;
  bool loaded_ = false;                 // the restored jobs' claims have been read
  std::size_t sweep_at_ = kFirstSweep;  // the next sweep, by the number of claims
  UserOf user_of_;
};

}  // namespace allot::server
