#include "server/checkpoint_claims.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <iterator>
#include <optional>
#include <utility>

#include "exec/as_job_user.h"
#include "server/api_error.h"
#include "server/local_paths.h"
#include "server/log.h"

namespace allot::server {

namespace {

const std::string kPrefix = "serviceRequestPayload.";

// How a location a job names meets one another job uses.
enum class Relation { kSame, kInside, kContains };

const char* Words(Relation relation) {
  switch (relation) {
    case Relation::kSame:
      return "is";
    case Relation::kInside:
      return "is inside";
    case Relation::kContains:
      return "contains";
  }
  return "meets";
}

// The payload names a file:// location, or may (a payload with an escape sequence may spell the
// scheme in escapes, so only one without any is ruled out by its text).
bool MayNameLocation(const std::string& payload) {
  return payload.find('\\') != std::string::npos || payload.find("file://") != std::string::npos;
}

// The job sequence number a stored claim names.
bool ParseJobSeq(std::string_view text, model::JobId& out) {
  const auto [ptr, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && ptr == text.data() + text.size();
}

// The meta record that says the finished jobs' checkpoint claims are stored (see LoadRestored).
constexpr char kClaimsRecordedKey[] = "checkpoint_claims_recorded";

// A finished job that never launched wrote nothing to its checkpoint location: it keeps no claim
// there (else a submission cancelled at once would take a location, or a whole root, for good).
bool NeverLaunched(const JobRecord& job) { return job.attempt == 0 && job.started_at == 0; }

// The uses of `real` itself, of each directory above it and of each location below it.
template <typename Map>
std::vector<std::pair<typename Map::iterator, Relation>> Overlapping(Map& claims,
                                                                     const std::string& real) {
  std::vector<std::pair<typename Map::iterator, Relation>> out;
  for (std::size_t end = real.size(); end != std::string::npos && end > 0;
       end = real.rfind('/', end - 1)) {
    const std::string above = real.substr(0, end);
    auto [first, last] = claims.equal_range(above);
    for (; first != last; ++first) {
      out.emplace_back(first, above == real ? Relation::kSame : Relation::kInside);
    }
  }
  // The keys that start with "real/" sort together.
  const std::string below = real == "/" ? "/" : real + "/";
  for (auto it = claims.lower_bound(below);
       it != claims.end() && it->first.compare(0, below.size(), below) == 0; ++it) {
    out.emplace_back(it, Relation::kContains);
  }
  return out;
}

}  // namespace

const JobRecord* CheckpointClaims::JobOf(const Use& use, const Jobs& jobs) {
  const auto it = jobs.find(use.seq);
  return it != jobs.end() && it->second.id == use.id ? &it->second : nullptr;
}

std::vector<CheckpointClaims::Wanted> CheckpointClaims::Resolve(
    const api::LaunchInfo& launch, const api::LaunchInfo* resolved,
    const std::optional<exec::JobUser>& as) {
  std::vector<Wanted> out;
  if (launch.channels.empty() && launch.checkpoint_sync_dir.empty()) return out;
  // As the share's jobs reach the paths; one that cannot be acted as is kept as written (never
  // resolved as root), and the log says why.
  const exec::AsJobUser acting(resolved == nullptr ? as : std::nullopt);
  const Status taken = acting.Taken("resolve its checkpoint claims");
  if (!taken.ok()) log::Warn("claims.user_not_taken", {{"error", taken.message()}});
  const bool resolve = resolved == nullptr && taken.ok();
  PathBudget budget;  // one for all the job's paths, as for a request
  auto add = [&out, &budget, resolve](std::string field, const std::string& path,
                                      const std::string* real, bool reads) {
    std::string where =
        real != nullptr ? *real
                        : (resolve ? CanonicalPath(path, nullptr, &budget).value_or(path) : path);
    out.push_back({std::move(field), path, std::move(where), reads});
  };
  for (std::size_t i = 0; i < launch.channels.size(); ++i) {
    const auto& [name, dir] = launch.channels[i];
    const std::string* real = resolved != nullptr && i < resolved->channels.size()
                                  ? &resolved->channels[i].second
                                  : nullptr;
    add(kPrefix + "InputDataConfig." + name + ".DataSource.S3DataSource.S3Uri", dir, real, true);
  }
  if (!launch.checkpoint_sync_dir.empty()) {
    add(kPrefix + "CheckpointConfig.S3Uri", launch.checkpoint_sync_dir,
        resolved != nullptr ? &resolved->checkpoint_sync_dir : nullptr, false);
  }
  return out;
}

Status CheckpointClaims::LoadRestored(const Jobs& jobs, store::Store& store) {
  Map restored;
  Result<std::vector<store::Record>> stored = store.Load(store::Kind::kCheckpointClaim);
  if (!stored.ok()) {
    return Internal("cannot read the stored checkpoint locations: " + stored.status().message());
  }
  for (const store::Record& r : *stored) {
    const std::size_t key_break = r.key.find('\n');
    const std::size_t value_break = r.value.find('\n');
    model::JobId seq = 0;
    if (key_break == std::string::npos || value_break == std::string::npos ||
        !ParseJobSeq(r.value.substr(0, value_break), seq)) {
      continue;  // not one this code wrote
    }
    Use use{seq, r.value.substr(value_break + 1), r.key.substr(0, key_break), false};
    const JobRecord* job = JobOf(use, jobs);
    // A live job's claims come from its payload below, like those of jobs from before the records.
    if (job == nullptr || !model::IsTerminal(job->status) || NeverLaunched(*job)) continue;
    restored.emplace(r.key.substr(key_break + 1), std::move(use));
  }
  // Once per store: the jobs that finished before the records existed get theirs, from their
  // payloads (a one-time read of every launched finished job's payload).
  Result<std::optional<std::string>> migrated = store.Get(store::Kind::kMeta, kClaimsRecordedKey);
  if (!migrated.ok()) {
    return Internal("cannot read the stored checkpoint locations: " + migrated.status().message());
  }
  const bool read_finished = !migrated->has_value();
  store::Batch records;
  for (const auto& [seq, job] : jobs) {
    const bool finished = model::IsTerminal(job.status);
    if (finished && (!read_finished || NeverLaunched(job))) continue;  // see above
    Result<std::optional<std::string>> payload = store.Get(store::Kind::kJobPayload, job.id);
    if (!payload.ok()) {
      return Internal("cannot read the file:// locations of the stored jobs: " +
                      payload.status().message());
    }
    // None: a submission since the start whose batch is not written yet; it named no location,
    // or it would have come here before.
    if (!payload.value() || !MayNameLocation(*payload.value())) continue;
    api::LaunchInfo launch;
    try {
      launch = api::ParsePayload(*payload.value(), job.name, api::PayloadSource::kStored).launch;
    } catch (const ClientError&) {
      continue;  // no longer parses (the rules changed): it cannot launch, so it uses nothing
    }
    // As the job's share's user, as at its submission and launch: resolved as the server, a
    // link through a directory that user may not search would claim what lies past it.
    // A share whose user cannot be read (a bad record) is resolved as nobody, who owns nothing:
    // one bad record must not stop every file:// request of every share.
    std::optional<exec::JobUser> as;
    if (user_of_) {
      Result<std::optional<exec::JobUser>> user = user_of_(job);
      if (!user.ok()) {
        log::Warn("claims.share_user_unread",
                  {{"job", job.id}, {"error", user.status().message()}});
      }
      as = user.ok() ? *user : std::optional<exec::JobUser>(exec::kNobodyUser);
    }
    const std::vector<Wanted> wanted = Resolve(launch, nullptr, as);
    for (const Wanted& w : wanted) {
      if (finished && w.reads) continue;  // a finished job reads nothing
      restored.emplace(w.real, Use{job.seq, job.id, job.ShareKey(), w.reads});
    }
    if (finished) AddRecords(wanted, job, records);
  }
  if (read_finished) {
    // Not waited for: should it fail, the next start reads them again.
    records.Put(store::Kind::kMeta, kClaimsRecordedKey, "1");
    store.Submit(std::move(records), [](const Status& s) {
      if (!s.ok()) {
        log::Warn("checkpoint_claims.record_failed", {{"error", s.message()}});
      }
    });
  }
  claims_.merge(restored);
  loaded_ = true;
  Sweep(jobs);  // a location many stored jobs used was read once for each
  return {};
}

Status CheckpointClaims::Check(const Wanted& wanted, const JobRecord& job, const Jobs& jobs) {
  // As written too: a name inside another share's location is refused whatever a link there
  // leads to (a link that location's jobs made), so the refusal tells nothing of what it holds.
  std::string written = std::filesystem::path(wanted.path).lexically_normal().string();
  if (written.size() > 1 && written.back() == '/') written.pop_back();
  if (written != wanted.real) {
    ALLOT_RETURN_IF_ERROR(CheckOne(wanted, written, job, jobs));
  }
  return CheckOne(wanted, wanted.real, job, jobs);
}

Status CheckpointClaims::CheckOne(const Wanted& wanted, const std::string& path,
                                  const JobRecord& job, const Jobs& jobs) {
  const std::string share = job.ShareKey();
  for (auto [it, relation] : Overlapping(claims_, path)) {
    const Use& use = it->second;
    if (use.seq == job.seq && use.id == job.id) continue;  // its own (at launch)
    const JobRecord* other = JobOf(use, jobs);
    if (other == nullptr) {
      claims_.erase(it);  // its job is gone
      continue;
    }
    const bool live = !model::IsTerminal(other->status);
    if (!live && NeverLaunched(*other)) {
      claims_.erase(it);
      continue;
    }
    const bool ours = use.share == share;
    std::string conflict;
    if (use.reads) {
      if (!live) {
        claims_.erase(it);
        continue;
      }
      // Reading one's own share's files, or what another share reads, takes nothing from anyone.
      if (!wanted.reads && !ours) {
        conflict = "an input channel of a job of another quota share, which has not finished";
      }
    } else if (!ours) {
      // Neither that share's job nor its id is named: the caller may not describe them.
      conflict =
          "a checkpoint location of another quota share (a share's checkpoint locations stay "
          "its own after its jobs have finished)";
    } else if (!wanted.reads && live) {
      conflict = "the checkpoint location of job " + use.id + ", which has not finished";
    }
    if (!conflict.empty()) {
      return InvalidArgument(wanted.field + ": file://" + wanted.path + " " + Words(relation) +
                             " " + conflict);
    }
  }
  return {};
}

Status CheckpointClaims::Claim(const api::LaunchInfo& launch, const JobRecord& job,
                               const Jobs& jobs, store::Store& store,
                               const std::function<Status()>& then,
                               const api::LaunchInfo* resolved) {
  const std::vector<Wanted> wanted = Resolve(launch, resolved, std::nullopt);
  // Every location is checked before any is recorded: a refusal leaves nothing behind.
  if (!wanted.empty()) ALLOT_RETURN_IF_ERROR(CheckAll(wanted, job, jobs, store));
  if (then) ALLOT_RETURN_IF_ERROR(then());
  if (wanted.empty()) return {};
  // Before the new claims: their job is not in `jobs` yet.
  if (claims_.size() >= sweep_at_) Sweep(jobs);
  const std::string share = job.ShareKey();
  for (const Wanted& w : wanted) {
    if (!w.reads) {
      const auto [first, last] = claims_.equal_range(w.real);
      KeepNewestFinished(first, last, jobs);
    }
    claims_.emplace(w.real, Use{job.seq, job.id, share, w.reads});
  }
  return {};
}

Status CheckpointClaims::CheckAll(const std::vector<Wanted>& wanted, const JobRecord& job,
                                  const Jobs& jobs, store::Store& store) {
  if (!loaded_) ALLOT_RETURN_IF_ERROR(LoadRestored(jobs, store));
  for (const Wanted& w : wanted) ALLOT_RETURN_IF_ERROR(Check(w, job, jobs));
  return {};
}

Status CheckpointClaims::CheckWritten(const api::LaunchInfo& launch, const JobRecord& job,
                                      const Jobs& jobs, store::Store& store) {
  const std::vector<Wanted> wanted = Resolve(launch, &launch, std::nullopt);
  if (wanted.empty()) return {};
  return CheckAll(wanted, job, jobs, store);
}

Status CheckpointClaims::CheckAtLaunch(const api::LaunchInfo& launch, const JobRecord& job,
                                       const Jobs& jobs, store::Store& store, store::Batch* records,
                                       bool resolved) {
  const std::vector<Wanted> wanted = Resolve(launch, resolved ? &launch : nullptr, std::nullopt);
  if (wanted.empty()) return {};
  ALLOT_RETURN_IF_ERROR(CheckAll(wanted, job, jobs, store));
  if (records != nullptr) AddRecords(wanted, job, *records);
  return {};
}

void CheckpointClaims::AddRecords(const std::vector<Wanted>& wanted, const JobRecord& job,
                                  store::Batch& batch) {
  for (const Wanted& w : wanted) {
    if (w.reads) continue;
    batch.Put(store::Kind::kCheckpointClaim, job.ShareKey() + "\n" + w.real,
              std::to_string(job.seq) + "\n" + job.id);
  }
}

void CheckpointClaims::KeepNewestFinished(Map::iterator first, Map::iterator last,
                                          const Jobs& jobs) {
  auto finished_checkpoint = [&jobs](const Use& use) {
    const JobRecord* job = JobOf(use, jobs);
    return !use.reads && job != nullptr && model::IsTerminal(job->status) && !NeverLaunched(*job);
  };
  std::map<std::string, model::JobId> newest;  // share -> its newest finished claim here
  for (auto it = first; it != last; ++it) {
    if (!finished_checkpoint(it->second)) continue;
    model::JobId& seq = newest[it->second.share];
    seq = std::max(seq, it->second.seq);
  }
  while (first != last) {
    const Use& use = first->second;
    const bool older = finished_checkpoint(use) && use.seq < newest[use.share];
    first = older ? claims_.erase(first) : std::next(first);
  }
}

void CheckpointClaims::Sweep(const Jobs& jobs) {
  std::erase_if(claims_, [&jobs](const auto& claim) {
    const JobRecord* job = JobOf(claim.second, jobs);
    return job == nullptr ||
           (model::IsTerminal(job->status) && (claim.second.reads || NeverLaunched(*job)));
  });
  for (auto first = claims_.begin(); first != claims_.end();) {
    const auto last = claims_.upper_bound(first->first);
    KeepNewestFinished(first, last, jobs);
    first = last;
  }
  sweep_at_ = std::max(kFirstSweep, 2 * claims_.size());
}

}  // namespace allot::server
