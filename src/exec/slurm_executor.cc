#include "exec/slurm_executor.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "env/files.h"
#include "exec/attempt_end.h"
#include "exec/checkpoint_scan.h"
#include "exec/host_files.h"
#include "exec/hostlist.h"
#include "exec/local_executor.h"
#include "exec/sagemaker_layout.h"
#include "exec/slurm_attempt.h"
#include "exec/slurm_launch.h"
#include "exec/slurm_node.h"

namespace allot::exec {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

Timestamp WallMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

using AttemptKey = std::pair<model::JobId, int>;

constexpr char kRefPrefix[] = "slurm:";

Clock::duration Millis(Duration ms) { return std::chrono::milliseconds(ms); }

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

class SlurmExecutorImpl final : public Executor {
 public:
  SlurmExecutorImpl(SlurmOptions options, std::unique_ptr<SlurmClient> client, Callbacks callbacks)
      : options_(std::move(options)), client_(std::move(client)), callbacks_(std::move(callbacks)) {
    for (int i = 0; i < std::max(options_.submitters, 1); ++i) {
      workers_.emplace_back([this] { WorkLoop(); });
    }
    poller_ = std::thread([this] { PollLoop(); });
    notifier_ = std::thread([this] { CallbackLoop(); });
  }

  ~SlurmExecutorImpl() override {
    Detach();
    if (notifier_.joinable()) notifier_.join();
  }

  SlurmExecutorImpl(const SlurmExecutorImpl&) = delete;
  SlurmExecutorImpl& operator=(const SlurmExecutorImpl&) = delete;

  Status Launch(const LaunchSpec& spec) override;
  void Stop(model::JobId job, int attempt, Duration grace, model::StopKind kind) override;
  Status Adopt(const AdoptSpec& spec) override;
  void Detach() override;
  bool SandboxActive() const override { return options_.sandbox; }
  Health health() const override {
    return {.answering = !poll_failed_.load(), .last_poll = last_poll_.load()};
  }
  void ConfigurationChanged() override {
    std::lock_guard<std::mutex> lock(mu_);
    next_node_check_ = Clock::now();
    poll_cv_.notify_all();
  }

 private:
  Status PrepareFiles(const LaunchSpec& spec);
  void Submitted(const AttemptKey& key, const Result<std::string>& id);
  void BeginStop(SlurmAttempt& attempt, const std::string& reason, Duration grace);  // mu_
  void Cancel(SlurmAttempt& attempt);                                                // mu_
  void PollLoop();
  void PollOnce();
  // `down`: the nodes Slurm no longer reaches, when some ended job lacks a host's status.
  // `listed`: when the squeue that gave `jobs` was asked; unset when it failed.
  void Observe(const std::map<std::string, SlurmJob>& jobs, std::optional<Clock::time_point> listed,
               const std::set<std::string>& down);  // mu_
  bool ObserveOne(SlurmAttempt& attempt, const SlurmJob* job,
                  std::optional<Clock::time_point> listed,
                  const std::set<std::string>& down);      // mu_
  bool AwaitsNodeVerdict() const;                          // mu_
  void AskAccounting(std::unique_lock<std::mutex>& lock);  // mu_
  void CheckNodes();
  void ScanCheckpoints();
  void WorkLoop();
  void CallbackLoop();
  void Enqueue(std::function<void()> work);     // mu_
  void Post(std::function<void()> callback);    // mu_
  void PostEnded(const SlurmAttempt& attempt);  // mu_
  void Warn(const std::string& event, const std::string& message) const;
  bool FastPoll() const;  // mu_

  const SlurmOptions options_;
  const std::unique_ptr<SlurmClient> client_;
  const Callbacks callbacks_;

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable poll_cv_;
  std::condition_variable callback_cv_;
  bool detached_ = false;
  std::map<AttemptKey, SlurmAttempt> attempts_;
  std::deque<std::function<void()>> work_;
  std::deque<std::function<void()>> pending_;
  std::map<std::string, std::string> node_addresses_;
  std::set<std::string> short_types_;  // instance types already warned about
  Clock::time_point next_node_check_ = Clock::now();
  bool poll_failing_ = false;
  // For health(), read without mu_: the last successful squeue (epoch ms) and the last one's
  // outcome.
  std::atomic<Timestamp> last_poll_{0};
  std::atomic<bool> poll_failed_{false};

  std::mutex detach_mu_;
  std::vector<std::thread> workers_;
  std::thread poller_;
  std::thread notifier_;
  EndSyncs syncs_;  // last: destroyed first, it waits for the syncs that post into pending_
};

void SlurmExecutorImpl::Warn(const std::string& event, const std::string& message) const {
  if (options_.warn) {
    options_.warn(event, message);
  } else {
    std::fprintf(stderr, "allot: %s: %s\n", event.c_str(), message.c_str());
  }
}

// The attempt's files on the shared directory: the host directories, launch.json and batch.sh.
Status SlurmExecutorImpl::PrepareFiles(const LaunchSpec& spec) {
  std::error_code ec;
  fs::create_directories(spec.attempt_dir, ec);
  if (ec) return Internal("cannot create '" + spec.attempt_dir + "': " + ec.message());
  for (int k = 1; k <= spec.instance_count; ++k) {
    const fs::path dir = fs::path(spec.attempt_dir) / HostName(k);
    fs::create_directories(dir, ec);
    if (ec) return Internal("cannot create '" + dir.string() + "': " + ec.message());
    for (const char* stale : {kStatusFile, kStopFile, kSupervisorFile, kLaunchErrorFile}) {
      fs::remove(dir / stale, ec);
    }
  }
  SlurmLaunch launch;
  launch.spec = spec;
  launch.sandbox = options_.sandbox;
  launch.srun = options_.srun;
  {
    std::lock_guard<std::mutex> lock(mu_);
    launch.node_addresses = node_addresses_;
  }
  const std::string launch_file = spec.attempt_dir + "/" + kLaunchFile;
  ALLOT_RETURN_IF_ERROR(WriteSlurmLaunch(launch_file, launch));
  const std::string script = "#!/bin/sh\n# Allot job " + spec.job_id + " attempt " +
                             std::to_string(spec.attempt) + " (" + spec.name + ")\nexec " +
                             Quote(spec.self_exe) + " __slurmbatch --launch " + Quote(launch_file) +
                             "\n";
  return env::WriteFileAtomically(spec.attempt_dir + "/" + kBatchScript, script, 0700);
}

Status SlurmExecutorImpl::Launch(const LaunchSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return InvalidArgument("job " + spec.name + ": the command is empty");
  }
  if (spec.instance_count < 1) {
    return InvalidArgument("job " + spec.name + ": the instance count must be at least 1");
  }
  if (spec.attempt_dir.empty())
    return InvalidArgument("job " + spec.name + ": no attempt directory");
  const auto placement = options_.placements.find(spec.instance_type);
  if (placement == options_.placements.end()) {
    return FailedPrecondition("instance type " + spec.instance_type +
                              " has no Slurm placement in --slurm-map");
  }
  const AttemptKey key{spec.job, spec.attempt};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (detached_) return FailedPrecondition("the executor is detached");
    if (attempts_.count(key) != 0) {
      return AlreadyExists("attempt " + std::to_string(spec.attempt) + " of job " + spec.name +
                           " is running");
    }
  }
  const CopyIdentity copy_as = CopyIdentityOf(spec, LayoutOptions{.sandbox = options_.sandbox});
  ALLOT_RETURN_IF_ERROR(RestoreCheckpoints(spec.job_dir, spec.checkpoint_sync_dir, copy_as));
  ALLOT_RETURN_IF_ERROR(PrepareFiles(spec));

  SlurmAttempt attempt;
  attempt.job = spec.job;
  attempt.attempt = spec.attempt;
  attempt.name = spec.name;
  attempt.job_id = spec.job_id;
  attempt.attempt_dir = spec.attempt_dir;
  attempt.job_dir = spec.job_dir;
  attempt.sync_dir = spec.checkpoint_sync_dir;
  attempt.copy_as = copy_as;
  if (!spec.job_dir.empty()) attempt.checkpoint = NewestCheckpoint(spec.job_dir);
  for (int k = 1; k <= spec.instance_count; ++k) {
    attempt.hosts.push_back(SlurmHost{.dir = spec.attempt_dir + "/" + HostName(k)});
  }
  SlurmJobRequest request;
  request.script_path = spec.attempt_dir + "/" + kBatchScript;
  request.name = spec.name;
  request.comment = spec.job_id;
  request.account = spec.share;
  request.partition = placement->second.partition;
  request.constraint = placement->second.constraint;
  request.gres = placement->second.gres;
  request.nodes = spec.instance_count;
  request.cpus_per_node = placement->second.cpus;
  request.memory_mb_per_node = placement->second.memory_mb;
  request.work_dir = spec.attempt_dir;
  request.output = spec.attempt_dir + "/slurm-%j.out";

  std::lock_guard<std::mutex> lock(mu_);
  if (detached_) return FailedPrecondition("the executor is detached");
  attempts_.emplace(key, std::move(attempt));
  Enqueue([this, key, request] {
    const Result<std::string> id = client_->Submit(request);
    if (id.ok()) {
      // Before the lock: an fsync must not hold up the poller, Launch and Stop.
      const Status kept =
          env::WriteFileAtomically(request.work_dir + "/" + kSlurmJobIdFile, *id + "\n");
      if (!kept.ok()) Warn("slurm.job_id_not_kept", kept.message());
    }
    Submitted(key, id);
  });
  return Status::Ok();
}

void SlurmExecutorImpl::Submitted(const AttemptKey& key, const Result<std::string>& id) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = attempts_.find(key);
  if (it == attempts_.end()) return;
  SlurmAttempt& attempt = it->second;
  if (!id.ok()) {
    // Nothing runs: the attempt ends here, failed, with Slurm's own words.
    AttemptExit exit;
    exit.job = key.first;
    exit.attempt = key.second;
    exit.reason = kPlatformError + ("Slurm did not take the job: " + id.status().message());
    exit.exit_codes.assign(attempt.hosts.size(), -9);
    attempts_.erase(it);
    Post([this, exit] {
      if (callbacks_.ended) callbacks_.ended(exit);
    });
    return;
  }
  attempt.slurm_id = *id;
  attempt.submitted_at = Clock::now();
  if (callbacks_.submitted) {
    Post([this, key, ref = kRefPrefix + *id] { callbacks_.submitted(key.first, key.second, ref); });
  }
  if (attempt.stopping) Cancel(attempt);  // stopped while sbatch ran
  poll_cv_.notify_all();
}

// A job that runs gets the stop through stop.json and SIGTERM; one that waits is cancelled.
void SlurmExecutorImpl::BeginStop(SlurmAttempt& attempt, const std::string& reason,
                                  Duration grace) {
  const Clock::time_point now = Clock::now();
  const Clock::time_point deadline = now + Millis(std::max<Duration>(grace, 0));
  if (!attempt.kill_deadline || deadline < *attempt.kill_deadline) attempt.kill_deadline = deadline;
  if (!attempt.stopping) attempt.stop_reason = reason;
  attempt.stopping = true;
  if (attempt.slurm_id.empty()) return;  // Submitted() cancels it
  if (!attempt.started) {
    Cancel(attempt);
    return;
  }
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*attempt.kill_deadline - now);
  const StopRequest request{attempt.stop_reason, std::max<Duration>(left.count(), 0)};
  for (const SlurmHost& host : attempt.hosts) {
    if (host.exit_code) continue;
    const Status written = WriteStopRequest(host.dir, request);
    if (!written.ok()) Warn("slurm.stop_file", written.message());
  }
  attempt.signalled = true;
}

void SlurmExecutorImpl::Cancel(SlurmAttempt& attempt) {
  if (attempt.cancelled || attempt.slurm_id.empty()) return;
  attempt.cancelled = true;
  Enqueue([this, id = attempt.slurm_id] {
    const Status s = client_->Cancel(id);
    if (!s.ok()) Warn("slurm.cancel_failed", s.message());
  });
}

void SlurmExecutorImpl::Stop(model::JobId job, int attempt, Duration grace, model::StopKind kind) {
  std::lock_guard<std::mutex> lock(mu_);
  if (detached_) return;
  const auto it = attempts_.find(AttemptKey{job, attempt});
  if (it == attempts_.end()) return;
  BeginStop(it->second, StopReasonWord(kind), grace);
  poll_cv_.notify_all();
}

Status SlurmExecutorImpl::Adopt(const AdoptSpec& spec) {
  const AttemptKey key{spec.job, spec.attempt};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (detached_) return FailedPrecondition("the executor is detached");
    // One whose end is syncing too: a second copy would race the first.
    if (attempts_.count(key) != 0 || syncs_.Syncing(spec.job, spec.attempt)) {
      return AlreadyExists("attempt " + std::to_string(spec.attempt) + " of job " +
                           std::to_string(spec.job) + " is watched");
    }
  }
  std::string id;
  if (spec.executor_ref.rfind(kRefPrefix, 0) == 0) id = spec.executor_ref.substr(6);
  if (id.empty()) id = ReadText(spec.attempt_dir + "/" + kSlurmJobIdFile);
  if (id.empty()) {
    // Submitted just before the server went down: its working directory names it.
    Result<std::vector<SlurmJob>> jobs = client_->Jobs();
    if (!jobs.ok()) return jobs.status();
    for (const SlurmJob& job : *jobs) {
      if (job.work_dir == spec.attempt_dir) id = job.id;
    }
  }
  if (id.empty()) {
    return NotFound("attempt " + std::to_string(spec.attempt) + " of job " +
                    std::to_string(spec.job) + " was never submitted to Slurm");
  }
  SlurmAttempt attempt;
  attempt.job = spec.job;
  attempt.attempt = spec.attempt;
  attempt.name = std::to_string(spec.job);
  attempt.attempt_dir = spec.attempt_dir;
  attempt.job_dir = spec.job_dir;
  attempt.sync_dir = spec.checkpoint_sync_dir;
  {
    LaunchSpec as_launched;  // as at launch: the share's user (sandboxed), the host's limits
    as_launched.user = spec.user;
    as_launched.limits = spec.limits;
    attempt.copy_as = CopyIdentityOf(as_launched, LayoutOptions{.sandbox = options_.sandbox});
  }
  attempt.slurm_id = id;
  attempt.job_id = spec.job_id;
  attempt.started = true;  // the server restores it as RUNNING; `started` is not reported again
  if (!spec.job_dir.empty()) attempt.checkpoint = NewestCheckpoint(spec.job_dir);
  for (int k = 1; k <= std::max(spec.instance_count, 1); ++k) {
    attempt.hosts.push_back(SlurmHost{.dir = spec.attempt_dir + "/" + HostName(k)});
  }
  // A stop the earlier server began goes on, with what is left of its grace at most.
  for (const SlurmHost& host : attempt.hosts) {
    if (Result<StopRequest> stop = ReadStopRequest(host.dir); stop.ok()) {
      attempt.stopping = true;
      attempt.signalled = true;
      attempt.stop_reason = stop->reason;
      attempt.kill_deadline = Clock::now() + Millis(stop->grace_ms);
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  attempts_.emplace(key, std::move(attempt));
  poll_cv_.notify_all();
  return Status::Ok();
}

void SlurmExecutorImpl::Detach() {
  std::lock_guard<std::mutex> detach_lock(detach_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    detached_ = true;
    pending_.clear();
    work_.clear();
  }
  work_cv_.notify_all();
  poll_cv_.notify_all();
  callback_cv_.notify_all();
  for (std::thread& w : workers_) {
    if (w.joinable()) w.join();
  }
  if (poller_.joinable()) poller_.join();
  syncs_.Drain();  // the poller, which starts them, is gone
  if (notifier_.joinable() && std::this_thread::get_id() != notifier_.get_id()) notifier_.join();
}

void SlurmExecutorImpl::Enqueue(std::function<void()> work) {
  work_.push_back(std::move(work));
  work_cv_.notify_one();
}

void SlurmExecutorImpl::Post(std::function<void()> callback) {
  pending_.push_back(std::move(callback));
  callback_cv_.notify_all();
}

void SlurmExecutorImpl::WorkLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    work_cv_.wait(lock, [this] { return detached_ || !work_.empty(); });
    if (detached_) return;
    std::function<void()> work = std::move(work_.front());
    work_.pop_front();
    lock.unlock();
    work();
    lock.lock();
  }
}

void SlurmExecutorImpl::CallbackLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    callback_cv_.wait(lock, [this] { return detached_ || !pending_.empty(); });
    if (detached_) return;
    std::function<void()> callback = std::move(pending_.front());
    pending_.pop_front();
    lock.unlock();
    callback();
    lock.lock();
  }
}

void SlurmExecutorImpl::PostEnded(const SlurmAttempt& attempt) {
  // A sync of gigabytes runs on a worker of its own (EndSyncs), not on the callback thread.
  PostAttemptEnd(
      {MakeSlurmExit(attempt), attempt.job_dir, attempt.sync_dir, attempt.copy_as,
       attempt.checkpoint},
      syncs_, callbacks_,
      [this](const std::string& why) { Warn("slurm.checkpoint_sync_failed", why); }, mu_,
      [this](std::function<void()> callback) { Post(std::move(callback)); });
}

// Fast while an attempt is about to change: waiting to start, stopping, or ending.
bool SlurmExecutorImpl::FastPoll() const {
  return std::any_of(attempts_.begin(), attempts_.end(), [](const auto& entry) {
    const SlurmAttempt& a = entry.second;
    return !a.started || a.stopping || a.slurm_done_at.has_value();
  });
}

void SlurmExecutorImpl::PollLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!detached_) {
    const bool check_nodes = Clock::now() >= next_node_check_;
    if (check_nodes) next_node_check_ = Clock::now() + Millis(options_.node_check_interval);
    lock.unlock();
    PollOnce();
    ScanCheckpoints();
    if (check_nodes) CheckNodes();
    lock.lock();
    if (detached_) break;
    const Duration interval = FastPoll() ? options_.fast_poll_interval : options_.poll_interval;
    poll_cv_.wait_until(lock, std::min(Clock::now() + Millis(interval), next_node_check_));
  }
}

void SlurmExecutorImpl::PollOnce() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const bool any = std::any_of(attempts_.begin(), attempts_.end(),
                                 [](const auto& e) { return !e.second.slurm_id.empty(); });
    if (!any) {
      // No Slurm job to watch: nothing to ask, and nothing the server knows is stale.
      last_poll_ = WallMillis();
      return;
    }
  }
  // Only jobs submitted before squeue was asked can be missing from its answer.
  const Clock::time_point asked = Clock::now();
  Result<std::vector<SlurmJob>> jobs = client_->Jobs();
  if (jobs.ok()) last_poll_ = WallMillis();
  poll_failed_ = !jobs.ok();
  std::map<std::string, SlurmJob> by_id;
  if (jobs.ok()) {
    for (const SlurmJob& job : *jobs) by_id.emplace(job.id, job);
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (!jobs.ok()) {
    // Nothing is decided on a failed poll: a cluster that does not answer ends no attempt.
    if (!poll_failing_) Warn("slurm.poll_failed", jobs.status().message());
    poll_failing_ = true;
  } else if (poll_failing_) {
    Warn("slurm.poll_recovered", "squeue answers again");
    poll_failing_ = false;
  }
  AskAccounting(lock);
  std::set<std::string> down;
  if (AwaitsNodeVerdict()) {
    lock.unlock();  // sinfo answers in milliseconds, but not under the lock
    Result<std::vector<SlurmNode>> nodes = client_->Nodes();
    lock.lock();
    if (nodes.ok()) {
      for (const SlurmNode& node : *nodes) {
        if (!node.usable) down.insert(node.name);
      }
    }
  }
  Observe(by_id, jobs.ok() ? std::optional<Clock::time_point>(asked) : std::nullopt, down);
}

// A job gone from squeue whose hosts did not all leave a status: Slurm's accounting, where the
// cluster keeps one, says how it ended (NODE_FAIL, CANCELLED, ...). Asked once per attempt.
void SlurmExecutorImpl::AskAccounting(std::unique_lock<std::mutex>& lock) {
  std::vector<std::pair<AttemptKey, std::string>> ask;
  for (auto& [key, a] : attempts_) {
    const bool unknown_host = std::any_of(a.hosts.begin(), a.hosts.end(),
                                          [](const SlurmHost& h) { return !h.exit_code; });
    if (a.accounting_asked || !a.gone || !unknown_host) continue;
    a.accounting_asked = true;
    ask.emplace_back(key, a.slurm_id);
  }
  for (const auto& [key, id] : ask) {
    lock.unlock();
    Result<SlurmJob> job = client_->Accounting(id);
    lock.lock();
    const auto it = attempts_.find(key);
    if (it == attempts_.end() || !job.ok()) continue;
    it->second.state = job->state;
    if (Result<std::vector<std::string>> nodes = ExpandHostList(job->nodes);
        nodes.ok() && nodes->size() == it->second.hosts.size()) {
      for (std::size_t i = 0; i < nodes->size(); ++i) it->second.hosts[i].node = (*nodes)[i];
    }
  }
}

// An ended job whose hosts did not all leave a status, and whose end Slurm does not explain:
// a node may have died without Slurm knowing yet (srun can abort the step before slurmctld marks
// the node DOWN), so the node states are read until node_failure_wait.
bool SlurmExecutorImpl::AwaitsNodeVerdict() const {
  return std::any_of(attempts_.begin(), attempts_.end(), [](const auto& entry) {
    const SlurmAttempt& a = entry.second;
    return a.slurm_done_at && !a.stopping && a.started &&
           std::any_of(a.hosts.begin(), a.hosts.end(),
                       [](const SlurmHost& h) { return !h.exit_code.has_value(); });
  });
}

void SlurmExecutorImpl::Observe(const std::map<std::string, SlurmJob>& jobs,
                                std::optional<Clock::time_point> listed,
                                const std::set<std::string>& down) {
  for (auto it = attempts_.begin(); it != attempts_.end();) {
    SlurmAttempt& attempt = it->second;
    if (attempt.slurm_id.empty()) {
      ++it;
      continue;
    }
    auto found = jobs.find(attempt.slurm_id);
    // A Slurm job under the stored id that another job id commented is not this attempt's
    // (Slurm's ids restart after its state is wiped): the attempt's job is gone, and the
    // stranger is never signalled or cancelled.
    if (found != jobs.end() && !attempt.job_id.empty() && found->second.comment != attempt.job_id) {
      if (!attempt.gone) {
        Warn("slurm.id_reused", "Slurm job " + attempt.slurm_id + " belongs to '" +
                                    found->second.comment + "', not to job " + attempt.job_id);
      }
      attempt.cancelled = true;  // nothing of it may be cancelled any more
      found = jobs.end();
    }
    if (ObserveOne(attempt, found == jobs.end() ? nullptr : &found->second, listed, down)) {
      PostEnded(attempt);
      it = attempts_.erase(it);
      continue;
    }
    ++it;
  }
}

// True once the attempt has ended: Slurm no longer runs it and every host's outcome is known.
bool SlurmExecutorImpl::ObserveOne(SlurmAttempt& attempt, const SlurmJob* job,
                                   std::optional<Clock::time_point> listed,
                                   const std::set<std::string>& down) {
  const Clock::time_point now = Clock::now();
  if (job != nullptr) {
    attempt.state = job->state;
    attempt.reason = job->reason;
    if (!job->nodes.empty() && attempt.hosts.front().node.empty()) {
      if (Result<std::vector<std::string>> nodes = ExpandHostList(job->nodes);
          nodes.ok() && nodes->size() == attempt.hosts.size()) {
        for (std::size_t i = 0; i < nodes->size(); ++i) attempt.hosts[i].node = (*nodes)[i];
      }
    }
  }
  const bool pending = job != nullptr && SlurmStatePending(job->state);
  if (pending && attempt.hopeless.empty() && HopelessPendingReason(job->reason)) {
    attempt.hopeless = job->reason;
    Cancel(attempt);
  }
  const bool gone = job == nullptr && listed && attempt.submitted_at < *listed;
  if (gone && !attempt.gone) {
    attempt.gone = true;
    attempt.state.clear();  // what it last was is not how it ended; sacct may say
  }
  const bool ended = (job != nullptr && SlurmStateEnded(job->state)) || attempt.gone;
  if (!pending) RefreshHosts(attempt);  // a job Slurm still holds back left no files
  // A job that ran and ended between two polls is reported started before it ends.
  const bool left_files =
      std::any_of(attempt.hosts.begin(), attempt.hosts.end(),
                  [](const auto& h) { return h.exit_code.has_value() || !h.output_dir.empty(); });
  const bool runs = !pending && !ended && job != nullptr;
  if ((runs || (ended && left_files)) && !attempt.started) {
    attempt.started = true;
    if (callbacks_.started) {
      std::vector<HostProcess> hosts;
      for (const SlurmHost& host : attempt.hosts) hosts.push_back(HostProcess{.host = host.node});
      Post([this, job = attempt.job, n = attempt.attempt, hosts] {
        callbacks_.started(job, n, hosts);
      });
    }
    // A stop that came while it waited for nodes and found it running.
    if (attempt.stopping && !attempt.signalled && !attempt.cancelled) {
      BeginStop(attempt, attempt.stop_reason, 0);
    }
  }
  if (!ended) {
    // A host that failed on its own stops the others, as on one machine.
    for (SlurmHost& host : attempt.hosts) {
      if (host.exit_code && *host.exit_code != 0 && !attempt.stopping)
        host.failed_on_its_own = true;
    }
    const bool failed = std::any_of(attempt.hosts.begin(), attempt.hosts.end(),
                                    [](const SlurmHost& h) { return h.failed_on_its_own; });
    if (failed && !attempt.stopping) BeginStop(attempt, "termination", options_.failure_grace);
    if (attempt.stopping && attempt.kill_deadline && !attempt.cancelled &&
        now >= *attempt.kill_deadline + Millis(options_.kill_margin)) {
      Cancel(attempt);
    }
    if (attempt.stopping && !attempt.started && !attempt.cancelled) Cancel(attempt);
    return false;
  }
  if (!attempt.slurm_done_at) attempt.slurm_done_at = now;
  const bool all_known = std::all_of(attempt.hosts.begin(), attempt.hosts.end(),
                                     [](const SlurmHost& h) { return h.exit_code.has_value(); });
  if (all_known) return true;
  // A job that never ran leaves no files; one that ran may still be writing them to a shared
  // file system that lags, or may have lost a node Slurm has not noticed yet.
  if (!attempt.started) return true;
  for (const SlurmHost& host : attempt.hosts) {
    if (!host.exit_code && down.count(host.node) != 0) {
      attempt.failed_node = host.node;
      return true;
    }
  }
  // A job none of whose hosts started a supervisor failed to launch: no node verdict to wait for.
  const bool launched = std::any_of(attempt.hosts.begin(), attempt.hosts.end(),
                                    [](const SlurmHost& h) { return !h.output_dir.empty(); });
  const bool explained = attempt.stopping || SlurmEndedIt(attempt) || !launched;
  const Duration wait = explained
                            ? options_.missing_status_wait
                            : std::max(options_.missing_status_wait, options_.node_failure_wait);
  return now >= *attempt.slurm_done_at + Millis(wait);
}

void SlurmExecutorImpl::ScanCheckpoints() {
  std::unique_lock<std::mutex> lock(mu_);
  ScanDueCheckpoints(
      attempts_, lock, [](const SlurmAttempt& a) { return a.started; },
      [this](const AttemptKey& key, Timestamp time) {
        if (!callbacks_.checkpoint) return;
        Post([this, key, time] { callbacks_.checkpoint(key.first, key.second, time); });
      });
}

// Keeps the nodes' addresses for /etc/hosts, and says when a partition has fewer usable nodes
// than an environment may ask of it (again after it recovered and fell short once more).
void SlurmExecutorImpl::CheckNodes() {
  Result<std::vector<SlurmNode>> nodes = client_->Nodes();
  if (!nodes.ok()) {
    Warn("slurm.nodes_unknown", nodes.status().message());
    return;
  }
  std::map<std::string, std::string> addresses;
  std::map<std::string, int> usable;  // nodes by partition
  for (const SlurmNode& node : *nodes) {
    if (!node.address.empty()) addresses[node.name] = node.address;
    if (!node.usable) continue;
    for (const std::string& p : node.partitions) ++usable[p];
  }
  std::map<std::string, int> required;
  if (options_.required_instances) required = options_.required_instances();
  std::vector<std::pair<std::string, std::string>> warnings;
  {
    std::lock_guard<std::mutex> lock(mu_);
    node_addresses_ = std::move(addresses);
    for (const auto& [type, count] : required) {
      const auto placement = options_.placements.find(type);
      if (placement == options_.placements.end()) {
        if (short_types_.insert(type).second) {
          warnings.emplace_back("slurm.no_placement",
                                "instance type " + type +
                                    " is in a service environment but not in --slurm-map: its "
                                    "jobs cannot run");
        }
        continue;
      }
      const std::int64_t room = InstancesThatFit(*nodes, placement->second);
      if (room >= count) {
        short_types_.erase(type);
        continue;
      }
      if (short_types_.insert(type).second) {
        warnings.emplace_back("slurm.partition_short",
                              "partition " + placement->second.partition + " has room for " +
                                  std::to_string(room) + " " + type + " instances on its " +
                                  std::to_string(usable[placement->second.partition]) +
                                  " usable nodes, but the service environments allow " +
                                  std::to_string(count));
      }
    }
  }
  for (const auto& [event, message] : warnings) Warn(event, message);
}

}  // namespace

std::int64_t InstancesThatFit(const std::vector<SlurmNode>& nodes, const SlurmPlacement& p) {
  std::int64_t room = 0;
  for (const SlurmNode& node : nodes) {
    if (!node.usable || std::find(node.partitions.begin(), node.partitions.end(), p.partition) ==
                            node.partitions.end()) {
      continue;
    }
    std::int64_t fit = -1;  // unknown until a size says
    if (p.cpus > 0 && node.cpus > 0) fit = node.cpus / p.cpus;
    if (p.memory_mb > 0 && node.memory_mb > 0) {
      const std::int64_t by_memory = node.memory_mb / p.memory_mb;
      fit = fit < 0 ? by_memory : std::min(fit, by_memory);
    }
    if (fit < 0) fit = 1;  // without sizes, one instance a node
    room += fit;
  }
  return room;
}

Status CheckSlurmCluster(SlurmClient& client, const SlurmOptions& options) {
  Result<std::vector<SlurmNode>> nodes = client.Nodes();
  if (!nodes.ok()) {
    return FailedPrecondition("the Slurm cluster does not answer: " + nodes.status().message());
  }
  std::set<std::string> names;
  for (const SlurmNode& node : *nodes) names.insert(node.partitions.begin(), node.partitions.end());
  for (const auto& [type, placement] : options.placements) {
    if (names.count(placement.partition) != 0) continue;
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    return FailedPrecondition("--slurm-map: instance type " + type + " names partition '" +
                              placement.partition +
                              "', which the cluster does not have (it has: " + known + ")");
  }
  // A placement no node of its partition can hold would wait in Slurm's queue forever.
  for (const auto& [type, placement] : options.placements) {
    int most_cpus = 0;
    std::int64_t most_memory = 0;
    bool fits = false;
    for (const SlurmNode& node : *nodes) {
      if (std::find(node.partitions.begin(), node.partitions.end(), placement.partition) ==
          node.partitions.end()) {
        continue;
      }
      most_cpus = std::max(most_cpus, node.cpus);
      most_memory = std::max(most_memory, node.memory_mb);
      fits = fits || ((node.cpus == 0 || node.cpus >= placement.cpus) &&
                      (node.memory_mb == 0 || node.memory_mb >= placement.memory_mb));
    }
    if (!fits) {
      return FailedPrecondition(
          "--slurm-map: instance type " + type + " asks " + std::to_string(placement.cpus) +
          " CPUs and " + std::to_string(placement.memory_mb) + " MB per node, but the " +
          "largest node of partition " + placement.partition + " has " + std::to_string(most_cpus) +
          " CPUs and " + std::to_string(most_memory) + " MB");
    }
  }
  // sbatch, squeue and scancel are run later; a missing one is said now, not at the first job.
  for (const char* program : {"sbatch", "squeue", "scancel", "srun"}) {
    ALLOT_RETURN_IF_ERROR(client.CheckProgram(program));
  }
  return Status::Ok();
}

std::unique_ptr<Executor> NewSlurmExecutor(const SlurmOptions& options,
                                           std::unique_ptr<SlurmClient> client,
                                           Callbacks callbacks) {
  return std::make_unique<SlurmExecutorImpl>(options, std::move(client), std::move(callbacks));
}

}  // namespace allot::exec
