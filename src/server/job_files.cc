// Finished jobs' trees in the data directory: measured once a job ended, removed when the jobs'
// file system runs short, the share holding the most first (finished_trees.h). Without this a
// tenant fills the disk the store writes to, one attempt's disk limit at a time, and every
// team's next write fails.

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/civil_time.h"
#include "env/remove_tree.h"
#include "env/tree_walk.h"
#include "server/controller.h"
#include "server/log.h"

namespace allot::server {

namespace {

// Deeper than a job's own checks walk (256): a tree is measured as far as a job could have
// built it and the checks saw it.
constexpr int kMaxMeasuredDepth = 1024;

// What the tree `dir` takes on disk: the blocks of every entry in it, itself included; a tree
// too deep or unreadable counts what was read. -1 when `dir` is not there.
std::int64_t MeasureTree(const std::string& dir) {
  const int fd = env::OpenTreeTop(dir.c_str());
  if (fd < 0) return -1;
  struct stat top {};
  std::int64_t bytes = ::fstat(fd, &top) == 0 ? std::int64_t{top.st_blocks} * 512 : 0;
  int error = 0;
  const env::WalkEnd end = env::WalkTree(
      fd, kMaxMeasuredDepth,
      [&bytes](const env::WalkedEntry& e) {
        bytes += std::int64_t{e.st.st_blocks} * 512;
        return true;
      },
      &error);
  if (end != env::WalkEnd::kComplete) {
    log::Warn(
        "job_files.measure_partial",
        {{"dir", dir}, {"bytes", bytes}, {"error", error == 0 ? "too deep" : strerror(error)}});
  }
  return bytes;
}

struct Usage {
  std::int64_t used = 0;   // bytes, the reserve of root counted as used (statvfs f_bavail)
  std::int64_t total = 0;  // bytes
};

Result<Usage> FileSystemUsage(const std::string& dir) {
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0) {
    return Internal("statvfs " + dir + ": " + std::string(strerror(errno)));
  }
  const auto unit = static_cast<std::int64_t>(fs.f_frsize);
  const auto total = static_cast<std::int64_t>(fs.f_blocks) * unit;
  return Usage{total - static_cast<std::int64_t>(fs.f_bavail) * unit, total};
}

std::int64_t Percent(const Usage& u) { return u.total == 0 ? 0 : u.used * 100 / u.total; }

bool HasTree(const JobRecord& job) {
  return model::IsTerminal(job.status) && !job.attempts().empty() &&
         job.history->files_removed_at == 0;
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
}

void Controller::MeasureEndedTrees() {
  for (;;) {
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
    const std::int64_t bytes = MeasureTree(JobDir(id));
    std::lock_guard<std::mutex> lock(mu_);
    JobRecord* job = JobBySeq(seq);
    if (job == nullptr || job->id != id || !HasTree(*job) || broken_) continue;
    job->history->files_bytes = std::max<std::int64_t>(bytes, 0);
    finished_trees_.Add(job->ShareKey(), job->stopped_at, seq, job->history->files_bytes);
    Touch(*job);
    Finish();
  }
}

void Controller::RemoveTreesIfShort() {
  const std::string jobs_dir = jobs_root_ + "/jobs";  // made by the first launch
  Result<Usage> usage = FileSystemUsage(jobs_root_);
  if (!usage.ok()) {
    log::Warn("job_files.check_failed", {{"error", usage.status().message()}});
    return;
  }
  const std::int64_t high = options_.job_files_high_percent;
  if (high >= 100 || usage->used * 100 < high * usage->total) {
    files_short_said_ = false;
    return;
  }
  const std::int64_t low_bytes = usage->total / 100 * options_.job_files_low_percent;
  std::vector<FinishedTrees::Tree> picked;
  {
    std::lock_guard<std::mutex> lock(mu_);
    picked = finished_trees_.Pick(usage->used - low_bytes);
  }
  const int dir_fd = env::OpenTreeTop(jobs_dir.c_str());
  if (dir_fd < 0 && errno == ENOENT) return;  // no job ran yet
  if (dir_fd < 0) {
    log::Warn("job_files.check_failed", {{"dir", jobs_dir}, {"error", strerror(errno)}});
    return;
  }
  const std::int64_t used_percent = Percent(*usage);
  for (const FinishedTrees::Tree& tree : picked) {
    std::string id;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const JobRecord* job = JobBySeq(tree.seq);
      if (job == nullptr || !HasTree(*job) || broken_) continue;
      id = job->id;
    }
    Result<env::RemovedTree> removed = env::RemoveTree(dir_fd, id.c_str());
    std::lock_guard<std::mutex> lock(mu_);
    // Out of the order either way: a tree that could not be removed must not stop the others.
    finished_trees_.Forget(tree.seq);
    if (!removed.ok()) {
      log::Error("job_files.remove_failed", {{"job", id}, {"error", removed.status().message()}});
      continue;
    }
    log::Info("job_files.removed", {{"job", id},
                                    {"share", tree.share},
                                    {"bytes", tree.bytes},
                                    {"entries", removed->entries},
                                    {"used_percent", used_percent}});
    JobRecord* job = JobBySeq(tree.seq);
    if (job == nullptr || job->id != id || !HasTree(*job) || broken_) continue;
    job->history->files_removed_at = Now();
    Touch(*job);
    Finish();
  }
  ::close(dir_fd);
  Result<Usage> after = FileSystemUsage(jobs_root_);
  if (after.ok() && after->used * 100 >= high * after->total && !files_short_said_) {
    files_short_said_ = true;  // until the file system is below the threshold again
    std::lock_guard<std::mutex> lock(mu_);
    log::Warn("job_files.disk_short", {{"dir", jobs_dir},
                                       {"used_percent", Percent(*after)},
                                       {"high_percent", high},
                                       {"finished_trees_left", finished_trees_.TotalBytes()}});
  }
}

// The words a caller reads when it asks for files that were removed (Logs).
std::string RemovedFilesMessage(const JobRecord& job, const Options& options) {
  const CivilTime t = CivilFromTimestamp(job.history->files_removed_at);
  char when[40];
  std::snprintf(when, sizeof when, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ",
                static_cast<long long>(t.year), static_cast<long long>(t.month),
                static_cast<long long>(t.day), static_cast<long long>(t.hour),
                static_cast<long long>(t.minute), static_cast<long long>(t.second));
  return "the files of job " + job.id + ", its logs among them, were removed at " + when +
         ": the jobs' file system was more than " + std::to_string(options.job_files_high_percent) +
         "% used, and finished jobs' files are then removed, those of the share holding the most "
         "first (allot server --job-files-high-percent)";
}

}  // namespace allot::server
