// Finished jobs' trees in the data directory: measured once a job ended, removed when the jobs'
// file system runs short, the share holding the most first (finished_trees.h). Without this a
// tenant fills the disk the store writes to, one attempt's disk limit at a time, and every
// team's next write fails.

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/civil_time.h"
#include "env/files.h"
#include "env/process.h"
#include "env/remove_tree.h"
#include "env/tree_walk.h"
#include "exec/sandbox.h"
#include "server/controller.h"
#include "server/job_identity.h"
#include "server/log.h"

namespace allot::server {

namespace {

struct Measured {
  std::int64_t bytes = 0;
  bool complete = true;  // false: too deep or unreadable, and `bytes` counts what was read
};

// What the tree `dir` takes on disk: the blocks of its files and directories, walked as a job's
// own disk checks walk (exec::DiskUsage: 256 levels, links not followed). A walk that `stop`
// ends early is not complete.
// `holders`: processes whose deleted but open files count too (a live tree's share's).
Measured MeasureTree(const std::string& dir, const std::atomic<bool>& stop,
                     const std::vector<pid_t>& holders = {}) {
  const exec::DiskUsed used = exec::DiskUsage({dir}, {}, holders, {}, &stop);
  if (used.uncounted && !stop) {
    log::Warn("job_files.measure_partial",
              {{"dir", dir}, {"bytes", used.bytes}, {"error", "too deep or unreadable"}});
  }
  return {used.bytes, !used.uncounted};
}

Result<DiskUsage> ReadDiskUsage(
    const std::string& dir, const std::function<std::pair<std::int64_t, std::int64_t>()>& given) {
  if (given) {
    const auto [used, total] = given();
    return DiskUsage{used, total};
  }
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0) {
    return Internal("statvfs " + dir + ": " + std::string(strerror(errno)));
  }
  const auto unit = static_cast<std::int64_t>(fs.f_frsize);
  const auto total = static_cast<std::int64_t>(fs.f_blocks) * unit;
  return DiskUsage{total - static_cast<std::int64_t>(fs.f_bavail) * unit, total};
}

// In double: 100 times the bytes of a file system of more than 92 PB (a Lustre shared directory)
// would overflow an int64.
double Percent(const DiskUsage& u) {
  return u.total == 0 ? 0 : static_cast<double>(u.used) * 100 / static_cast<double>(u.total);
}

bool HasTree(const JobRecord& job) {
  return model::IsTerminal(job.status) && !job.attempts().empty() &&
         job.history->files_removed_at == 0;
}

// A running or waiting job that has run: its tree is there, and not removable.
bool HasLiveTree(const JobRecord& job) {
  return !model::IsTerminal(job.status) && !job.attempts().empty();
}

}  // namespace

void Controller::NoteFinishedTree(const JobRecord& job) {
  if (!HasTree(job)) return;
  if (job.history->files_bytes >= 0) {
    finished_trees_.Add(job.ShareKey(), job.stopped_at, job.seq, job.history->files_bytes);
  } else {
    to_measure_.push_back(job.seq);  // it ended before it was measured (a crash, say)
  }
}

void Controller::MeasureWhenEnded(model::JobId seq) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    to_measure_.push_back(seq);
  }
  PostJobFilesCheck();
}

Timestamp Controller::CheckJobFilesIfDue() {
  const Timestamp now = Now();
  if (now >= next_files_check_) {
    next_files_check_ = now + options_.job_files_check_interval;
    PostJobFilesCheck();
  }
  return next_files_check_;
}

void Controller::PostJobFilesCheck() {
  if (files_check_queued_.exchange(true)) return;  // the one queued will see this too
  std::string why;
  const bool posted = files_worker_.Post(
      {}, 0,
      [this] {
        files_check_queued_ = false;
        CheckJobFiles();
      },
      &why);
  if (!posted) {  // the next check tries again; not silent meanwhile
    files_check_queued_ = false;
    log::Warn("job_files.no_thread", {{"error", why}});
  }
}

void Controller::CheckJobFiles() {
  MeasureEndedTrees();
  RemoveTreesIfShort();
  KeepStoreReserve();
}

// The jobs' trees are in the data directory but with the Slurm executor: then the same file
// system, which the tests' usage stands for too.
Result<DiskUsage> Controller::DataDirUsage() const {
  return ReadDiskUsage(data_dir_, jobs_root_ == data_dir_ ? options_.job_files_usage : nullptr);
}

// The jobs' file system as the marks read it. While the store's reserve is out, and where the
// jobs' trees share the data directory's file system, the room the reserve needs to be made
// again (KeepStoreReserve: twice its size free) counts: just enough is added to what is used
// that the eviction mark is passed exactly while the reserve cannot be made (or the disk is
// past the mark anyway), so no more jobs are evicted than it needs. The high and low marks,
// lower, then remove finished trees before that and down to more room than it needs. Without
// it, a disk that the release had left under the marks (a small disk, or a large reserve)
// stayed as it was: no tree was removed and no job evicted, the reserve never came back, and
// every change was refused until a restart.
Result<DiskUsage> Controller::JobsDiskUsage() const {
  Result<DiskUsage> usage = ReadDiskUsage(jobs_root_, options_.job_files_usage);
  if (!usage.ok() || !store_reserve_out_ || !JobsShareTheDataDir()) return usage;
  const int mark = std::min(100, EvictionMark());
  const auto past_mark =
      static_cast<std::int64_t>(static_cast<double>(usage->total) / 100 * (100 - mark));
  DiskUsage counted = *usage;
  counted.used = std::min(
      counted.total,
      counted.used + std::max<std::int64_t>(0, 2 * options_.store_reserve_bytes - past_mark));
  counted.counts_store_reserve = true;
  return counted;
}

int Controller::EvictionMark() const {
  return std::max(options_.job_files_evict_percent, options_.job_files_high_percent);
}

bool Controller::JobsShareTheDataDir() const {
  if (jobs_root_ == data_dir_) return true;
  struct stat jobs {};
  struct stat data {};
  return ::stat(jobs_root_.c_str(), &jobs) == 0 && ::stat(data_dir_.c_str(), &data) == 0 &&
         jobs.st_dev == data.st_dev;
}

// Made again (ReleaseStoreReserve took it) only while the store writes, and where the data
// directory's file system keeps as much again free beside it: the reserve must not be what
// fills the disk.
void Controller::KeepStoreReserve() {
  const std::int64_t bytes = options_.store_reserve_bytes;
  const std::string path = StoreReservePath();
  if (bytes <= 0 || broken_ || files_stopping_) return;
  if (!env::HasSpaceReserve(path)) {
    Result<DiskUsage> usage = DataDirUsage();
    if (!usage.ok()) {
      log::Warn("store.reserve_unmade", {{"error", usage.status().message()}});
      return;
    }
    if (usage->available() < 2 * bytes) {
      if (store_reserve_out_ && !reserve_wait_said_) {  // once per release
        reserve_wait_said_ = true;
        log::Warn("store.reserve_unmade", {{"error", "waiting for room"},
                                           {"free_bytes", usage->available()},
                                           {"needed_bytes", 2 * bytes}});
      }
      return;
    }
    if (Status s = env::CreateSpaceReserve(path, bytes); !s.ok()) {
      log::Warn("store.reserve_unmade", {{"error", s.message()}});
      return;
    }
    log::Info("store.reserve_made", {{"path", path}, {"bytes", bytes}});
  }
  if (!store_reserve_out_) return;  // the usual case: nothing to end, no lock taken
  // Under mu_, as the rollback releases it: a write that failed meanwhile leaves the reserve out
  // until the rollback is done (its probe takes the reserve, or found room and left it).
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_ || !store_reserve_out_ || !env::HasSpaceReserve(path)) return;
    store_reserve_out_ = false;
    reserve_wait_said_ = false;
  }
  Post([this] { ReleaseDispatchHold(); });
}

// While the file system is more than the high mark used, a check comes every second at least:
// jobs that write fast fill the last few percent in less than the interval (10 s by default).
void Controller::CheckJobFilesSoon() {
  const Timestamp at = Now() + std::min(options_.job_files_check_interval, kShortCheckInterval);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (at >= next_files_check_) return;
    next_files_check_ = at;
  }
  RearmLoop();  // it sleeps until the check it armed last
}

// The bytes a tree is charged: what was measured, or, where the walk could not read it all (a
// chain deeper than the jobs' checks walk, an unreadable directory), at least what its hosts
// could have written, so a tree cannot hide what it holds.
std::int64_t Controller::ChargedBytes(const JobRecord& job, std::int64_t measured,
                                      bool complete) const {
  const std::int64_t bytes = std::max<std::int64_t>(measured, 0);
  if (complete) return bytes;
  std::int64_t limit = options_.job_limits.disk_bytes;
  for (const auto& [unit, count] : job.demand) {
    limit = std::max(limit, options_.LimitsFor(unit).disk_bytes);
  }
  return std::max(bytes, limit * (job.InstanceCount() + 1));  // each host's, and the checkpoints
}

void Controller::MeasureEndedTrees() {
  while (!files_stopping_) {
    model::JobId seq = 0;
    std::string id;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (to_measure_.empty() || broken_) return;
      seq = to_measure_.front();
      to_measure_.pop_front();
      const JobRecord* job = JobBySeq(seq);
      if (job == nullptr || !HasTree(*job)) continue;
      id = job->id;
    }
    const Measured measured = MeasureTree(JobDir(id), files_stopping_);
    if (files_stopping_) return;  // the next start measures it
    std::lock_guard<std::mutex> lock(mu_);
    JobRecord* job = JobBySeq(seq);
    if (job == nullptr || job->id != id || !HasTree(*job) || broken_) continue;
    job->history->files_bytes = ChargedBytes(*job, measured.bytes, measured.complete);
    finished_trees_.Add(job->ShareKey(), job->stopped_at, seq, job->history->files_bytes);
    Touch(*job);
    Finish();
  }
}

// Per share, what its running and waiting jobs' trees take (charged as finished trees are),
// as they count toward what the share holds (FinishedTrees::Pick). Measured only while the disk
// is short, and each tree at most once in kLiveMeasureAge, so a share with many large trees
// makes a check under pressure no longer than its first.
std::map<std::string, std::int64_t> Controller::MeasureLiveTrees(bool fresh) {
  struct Live {
    model::JobId seq;
    std::string id;
    std::string share;
    std::string queue_name, share_name;
  };
  std::vector<Live> live;
  std::map<model::JobId, std::int64_t> charge_if_partial;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [seq, job] : jobs_) {
      if (!HasLiveTree(job)) continue;
      live.push_back({seq, job.id, job.ShareKey(), std::string(job.queue), std::string(job.share)});
      charge_if_partial[seq] = ChargedBytes(job, 0, /*complete=*/false);
    }
  }
  // In the sandbox each share runs as a uid of its own: what its processes deleted but hold open
  // takes the disk too, and no walk sees it (a share must not look small that way).
  std::map<std::string, std::vector<pid_t>> holders;
  auto holders_of = [&](const Live& l) -> const std::vector<pid_t>& {
    auto it = holders.find(l.share);
    if (it != holders.end()) return it->second;
    std::vector<pid_t> pids;
    if (options_.sandbox) {
      Result<std::optional<exec::JobUser>> user =
          StoredShareUser(*store_, l.queue_name, l.share_name);
      if (!user.ok()) {  // measured without them, and said
        log::Warn("job_files.share_user_unread",
                  {{"share", l.share}, {"error", user.status().message()}});
      } else if (user->has_value()) {
        pids = env::ProcessesOfUser((*user)->uid);
      }
    }
    return holders.emplace(l.share, std::move(pids)).first->second;
  };
  const Timestamp now = Now();
  std::map<model::JobId, LiveMeasure> kept;
  std::map<std::string, std::int64_t> bytes;
  for (const Live& l : live) {
    if (files_stopping_) break;
    auto cached = live_measures_.find(l.seq);
    LiveMeasure m;
    if (!fresh && cached != live_measures_.end() && now - cached->second.at < kLiveMeasureAge) {
      m = cached->second;
    } else {
      const Measured measured = MeasureTree(JobDir(l.id), files_stopping_, holders_of(l));
      m = {measured.complete ? measured.bytes : std::max(measured.bytes, charge_if_partial[l.seq]),
           now};
    }
    bytes[l.share] += m.bytes;
    kept[l.seq] = m;
  }
  live_measures_ = std::move(kept);  // trees no longer live are forgotten
  return bytes;
}

// Removes finished trees, a few at a time, the file system read again after each pick, until
// it is under the low mark or nothing more can go: a tree charged more than it holds (one too
// deep to measure) cannot end the pass while the disk stays full.
void Controller::RemoveTreesIfShort() {
  const std::string jobs_dir = jobs_root_ + "/jobs";  // made by the first launch
  const auto high = static_cast<double>(options_.job_files_high_percent);
  Result<DiskUsage> usage = JobsDiskUsage();
  if (!usage.ok()) {
    log::Warn("job_files.check_failed", {{"error", usage.status().message()}});
    return;
  }
  if (high >= 100 || Percent(*usage) <= high) {  // more than the mark, as docs/server.md says
    files_short_said_ = false;
    return;
  }
  bool nothing_finished = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    nothing_finished = finished_trees_.size() == 0;
  }
  if (nothing_finished) {  // and no live tree walked for nothing, unless eviction needs them
    SayDiskShort(*usage);
    CheckJobFilesSoon();
    return EvictIfFull(*usage);
  }
  const int dir_fd = env::OpenTreeTop(jobs_dir.c_str());
  if (dir_fd < 0) {
    if (errno != ENOENT) {  // ENOENT: no job ran yet
      log::Warn("job_files.check_failed", {{"dir", jobs_dir}, {"error", strerror(errno)}});
    }
    return;
  }
  const std::map<std::string, std::int64_t> live = MeasureLiveTrees();
  const Timestamp now = Now();
  for (auto it = remove_retry_at_.begin(); it != remove_retry_at_.end();) {
    it = it->second <= now ? remove_retry_at_.erase(it) : std::next(it);
  }
  for (;;) {
    const auto low_bytes = static_cast<std::int64_t>(static_cast<double>(usage->total) / 100 *
                                                     options_.job_files_low_percent);
    std::set<model::JobId> held_back;  // removals that failed, until they are tried again
    for (const auto& [seq, at] : remove_retry_at_) held_back.insert(seq);
    std::vector<FinishedTrees::Tree> picked;
    {
      std::lock_guard<std::mutex> lock(mu_);
      picked = finished_trees_.Pick(usage->used - low_bytes, live, held_back);
    }
    if (picked.empty() || files_stopping_) break;
    for (const FinishedTrees::Tree& tree : picked) {
      RemoveFinishedTree(dir_fd, tree, Percent(*usage));
    }
    Result<DiskUsage> after = JobsDiskUsage();
    if (!after.ok()) break;
    usage = std::move(after);
    if (usage->used <= low_bytes) break;
  }
  ::close(dir_fd);
  if (Percent(*usage) > high) {
    SayDiskShort(*usage);
    CheckJobFilesSoon();
  }
  EvictIfFull(*usage);
}

// One at a time: the next waits while the last one (evicted_) stops, and until its tree is
// measured (then removable).
bool Controller::EvictionUnderway(const JobRecord& job) const {
  if (!job.history || !job.history->evicted) return false;
  if (model::IsTerminal(job.status)) return HasTree(job) && job.history->files_bytes < 0;
  return true;
}

void Controller::NoteEviction(const JobRecord& job) {
  if (EvictionUnderway(job)) evicted_ = job.seq;
}

void Controller::EvictIfFull(DiskUsage usage) {
  const int mark = EvictionMark();
  // Strictly more than the mark, as the reason says: at the mark itself nothing is over it.
  if (mark >= 100 || Percent(usage) <= mark) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_) return;  // nothing can be written; the check after the rollback decides
    if (evicted_ != 0) {
      const JobRecord* job = JobBySeq(evicted_);
      // A job a restart left outside the engine (its queue or share deleted while it stopped)
      // ends no stop, and holds up nothing.
      if (job != nullptr && EvictionUnderway(*job) &&
          (model::IsTerminal(job->status) || engine_.GetJob(job->seq).has_value())) {
        return;
      }
      evicted_ = 0;
    }
  }
  // Every live tree measured now, none from the cache: a share measured small minutes ago may
  // hold the most by now, and the choice costs a team its job. Not every second, though, while
  // the last such walk found the live trees too small to free the disk (a disk filled by
  // something else).
  const Timestamp now = Now();
  if (now < no_eviction_walk_until_) return;
  MeasureLiveTrees(/*fresh=*/true);
  if (files_stopping_) return;
  // Read again after the walk, which takes long on large trees: a rollback meanwhile may have
  // released the store's reserve, whose bytes came back and whose room counts from then on.
  Result<DiskUsage> again = JobsDiskUsage();
  if (!again.ok()) {
    log::Warn("job_files.check_failed", {{"error", again.status().message()}});
    return;
  }
  usage = *again;
  if (Percent(usage) <= mark) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (broken_) return;
  std::vector<LiveTree> live;
  for (const auto& [seq, m] : live_measures_) {
    const JobRecord* job = JobBySeq(seq);
    if (job == nullptr || !HasLiveTree(*job)) continue;
    // A job already under a stop still counts for its share, but is not picked again: its own
    // stop (a user's termination, a preemption that requeues it) stands.
    live.push_back(
        {seq, job->ShareKey(), m.bytes, job->history && job->history->stopping.has_value()});
  }
  const auto mark_bytes = static_cast<std::int64_t>(static_cast<double>(usage.total) / 100 * mark);
  const std::optional<Eviction> eviction =
      PickEviction(live, finished_trees_, usage.used - mark_bytes);
  if (!eviction) {
    no_eviction_walk_until_ = now + options_.job_files_check_interval;
    return;
  }
  const LiveTree& pick = eviction->tree;
  const std::int64_t share_bytes = eviction->share_bytes;
  JobRecord* job = JobBySeq(pick.seq);
  const std::string reason =
      "Terminated to free the jobs' file system: it was " + fmt::format("{:.1f}", Percent(usage)) +
      "% used (more than " + std::to_string(mark) + "%: allot server --job-files-evict-percent" +
      (usage.counts_store_reserve
           ? ", counting the room the server's store needs free to take changes again"
           : "") +
      ") with no finished job's files left to remove, and this job's files (" +
      std::to_string(pick.bytes) +
      " bytes) were the largest of the quota share holding the most (" + pick.share + ", " +
      std::to_string(share_bytes) + " bytes)";
  log::Warn("job_files.evicted", {{"job", job->id},
                                  {"share", pick.share},
                                  {"bytes", pick.bytes},
                                  {"share_bytes", share_bytes},
                                  {"used_percent", Percent(usage)}});
  job->history->evicted = true;  // in the termination's batch: a restart knows it (NoteEviction)
  evicted_ = pick.seq;
  Touch(*job);
  ApplyBackground(model::TerminateJob{pick.seq, reason});
  Finish();
}

// Once per episode (until the file system is under the threshold again): still short after a
// pass, or with nothing finished to remove.
void Controller::SayDiskShort(const DiskUsage& usage) {
  if (files_short_said_) return;
  files_short_said_ = true;
  std::int64_t finished = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    finished = finished_trees_.TotalBytes();
  }
  log::Warn("job_files.disk_short", {{"dir", jobs_root_},
                                     {"used_percent", Percent(usage)},
                                     {"high_percent", options_.job_files_high_percent},
                                     {"finished_bytes_left", finished}});
}

void Controller::RemoveFinishedTree(int jobs_dir_fd, const FinishedTrees::Tree& tree,
                                    double used_percent) {
  std::string id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const JobRecord* job = JobBySeq(tree.seq);
    if (job == nullptr || !HasTree(*job)) {
      finished_trees_.Forget(tree.seq);
      return;
    }
    id = job->id;
  }
  Result<env::RemovedTree> removed = env::RemoveTree(jobs_dir_fd, id.c_str());
  const Timestamp now = Now();
  if (!removed.ok()) {
    // Kept in the accounting (its bytes still count for its share), and tried again later.
    remove_retry_at_[tree.seq] = now + kRemoveRetryChecks * options_.job_files_check_interval;
    log::Error("job_files.remove_failed", {{"job", id}, {"error", removed.status().message()}});
    return;
  }
  log::Info("job_files.removed", {{"job", id},
                                  {"share", tree.share},
                                  {"bytes", tree.bytes},
                                  {"entries", removed->entries},
                                  {"used_percent", used_percent}});
  std::lock_guard<std::mutex> lock(mu_);
  finished_trees_.Forget(tree.seq);  // a rollback's reload brings it back until the replay below
  // As an executor report: kept until a batch holding it commits, and applied again after a
  // rollback (a write that failed, the disk full: what the removal is for), so it is never lost.
  RecordReport([this, seq = tree.seq, id, now] {
    finished_trees_.Forget(seq);
    JobRecord* job = JobBySeq(seq);
    if (job == nullptr || job->id != id || !HasTree(*job)) return;
    job->history->files_removed_at = now;
    Touch(*job);
  });
}

// The words a caller reads when it asks for files that were removed (Logs).
std::string RemovedFilesMessage(const JobRecord& job, const Options& options) {
  return "the files of job " + job.id + ", its logs among them, were removed at " +
         FormatRfc3339Utc(job.history->files_removed_at) +
         ": the jobs' file system was more than " + std::to_string(options.job_files_high_percent) +
         "% used, and finished jobs' files are then removed, those of the share holding the most "
         "first (allot server --job-files-high-percent)";
}

}  // namespace allot::server
