#include "server/controller.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "api/credentials.h"
#include "api/decoders.h"
#include "exec/local_executor.h"
#include "exec/sagemaker_layout.h"
#include "server/api_error.h"
#include "server/job_codec.h"
#include "server/log.h"

namespace allot::server {

namespace {

using Clock = std::chrono::system_clock;

}  // namespace

Controller::Controller(const Options& options)
    : options_(options), arns_{options.region, options.account} {
  ResetCheckpointClaims();
}

void Controller::ResetCheckpointClaims() {
  checkpoint_claims_ = CheckpointClaims();
  checkpoint_claims_.SetUserOf([this](const JobRecord& job) {
    return PathsUser(std::string(job.queue), std::string(job.share), /*allocate=*/false);
  });
}

Result<std::unique_ptr<Controller>> Controller::Start(const Options& options,
                                                      std::unique_ptr<store::Store> store) {
  std::unique_ptr<Controller> c(new Controller(options));
  c->store_ = std::move(store);
  ALLOT_RETURN_IF_ERROR(c->Open());
  ALLOT_RETURN_IF_ERROR(c->Recover());
  c->StartHistory();
  c->loop_ = std::thread([p = c.get()] { p->Loop(); });
  return c;
}

Controller::~Controller() { Shutdown(); }

void Controller::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(loop_mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  loop_cv_.notify_all();
  if (loop_.joinable()) loop_.join();
  AwaitLaunches();         // they call into the executor and the store
  files_stopping_ = true;  // a walk of a large tree ends early
  files_worker_.Drain();
  if (executor_) executor_->Detach();
  if (store_) store_->Close();
  if (lock_fd_ >= 0) ::close(lock_fd_);
  lock_fd_ = -1;
}

Status Controller::Open() {
  std::error_code ec;
  // One the server makes is its own alone (0700): the jobs' logs and trees in it are nobody
  // else's to read on the host. One that exists keeps the mode its admin gave it.
  if (std::filesystem::create_directories(options_.data_dir, ec) && !ec) {
    std::filesystem::permissions(options_.data_dir, std::filesystem::perms::owner_all, ec);
  }
  if (ec)
    return Internal("cannot create data directory " + options_.data_dir + ": " + ec.message());
  data_dir_ = std::filesystem::absolute(options_.data_dir).lexically_normal().string();
  // One server per data directory: the lock lives as long as the process.
  lock_fd_ =
      ::open((options_.data_dir + "/server.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return FailedPrecondition("another allot server is using the data directory " +
                              options_.data_dir);
  }
  if (store_ == nullptr) {
    store::SqliteOptions sqlite{.path = options_.data_dir + "/allot.db"};
    sqlite.on_commit = [this](const store::CommitStats& c) {
      metrics_.ObserveCommit(c.seconds, c.batches);
    };
    Result<std::unique_ptr<store::Store>> s = store::OpenSqliteStore(sqlite);
    if (!s.ok()) return s.status();
    store_ = std::move(s).value();
  }
  exec::Callbacks callbacks;
  callbacks.started = [this](model::JobId seq, int attempt,
                             const std::vector<exec::HostProcess>& hosts) {
    ExecutorStarted(seq, attempt, hosts);
  };
  callbacks.submitted = [this](model::JobId seq, int attempt, const std::string& ref) {
    ExecutorSubmitted(seq, attempt, ref);
  };
  callbacks.ended = [this](const exec::AttemptExit& exit) { ExecutorEnded(exit); };
  callbacks.checkpoint = [this](model::JobId seq, int attempt, Timestamp newest) {
    ExecutorCheckpoint(seq, attempt, newest);
  };
  std::error_code self_ec;
  self_exe_ = options_.supervisor_exe.empty()
                  ? std::filesystem::read_symlink("/proc/self/exe", self_ec).string()
                  : options_.supervisor_exe;
  jobs_root_ = options_.executor == "slurm" ? options_.shared_dir : data_dir_;
  Result<std::unique_ptr<exec::Executor>> executor = MakeExecutor(std::move(callbacks));
  if (!executor.ok()) return executor.status();
  executor_ = std::move(executor).value();
  if (options_.wrap_executor) executor_ = options_.wrap_executor(std::move(executor_));

  credentials_path_ = options_.data_dir + "/credentials";
  Result<std::string> token = LoadOrCreateMetricsToken(options_.metrics_token_file.empty()
                                                           ? options_.data_dir + "/metrics-token"
                                                           : options_.metrics_token_file);
  if (!token.ok()) return token.status();
  metrics_token_ = std::move(token).value();
  Result<api::SecretBox> box = api::SecretBox::OpenOrCreate(options_.master_key_file.empty()
                                                                ? options_.data_dir + "/master.key"
                                                                : options_.master_key_file);
  if (!box.ok()) return box.status();
  box_.emplace(*box);
  return EnsureAdmin();
}

Timestamp Controller::Now() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
      .count();
}

std::string Controller::JobDir(const std::string& id) const { return jobs_root_ + "/jobs/" + id; }

std::string Controller::AttemptDir(const std::string& id, int attempt) const {
  return JobDir(id) + "/attempt-" + std::to_string(attempt);
}

std::string Controller::Arn(const std::string& resource) const {
  return "arn:aws:batch:" + options_.region + ":" + options_.account + ":" + resource;
}

Status Controller::ApplyEvent(const model::Event& event) {
  model::Decisions decisions;
  const auto began = std::chrono::steady_clock::now();  // the engine reads no clock: we do
  Status s = engine_.Apply(event, Now(), &decisions);
  metrics_.ObserveDecision(
      event, std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count());
  if (const auto* submit = std::get_if<model::SubmitJob>(&event); submit != nullptr && s.ok()) {
    metrics_.CountSubmission(submit->spec.queue, submit->spec.share);
  }
  ApplyDecisions(decisions);
  return s;
}

Status Controller::Apply(const model::Event& event) {
  Status s = ApplyEvent(event);
  if (s.ok()) {
    ++applied_events_;
    return s;
  }
  return InvalidArgument(s.message());  // the engine refused what the caller asked
}

void Controller::ApplyBackground(const model::Event& event) {
  Status s = ApplyEvent(event);
  if (s.ok()) return;
  // A background event (an executor report, a tick, a restore) has no caller to answer: the
  // engine's refusal is logged, never dropped.
  log::Warn("engine.event_refused",
            {{"event", model::EventToString(event)}, {"error", s.message()}});
}

void Controller::Touch(JobRecord& job) { touched_.insert(job.seq); }

std::string_view Controller::Intern(std::string_view name) {
  auto it = names_.find(name);
  if (it == names_.end()) it = names_.emplace(name).first;
  return *it;
}

Controller::Reply Controller::Finish() {
  WakeLoopIfEarlierDeadline();
  for (model::JobId seq : touched_) {
    JobRecord* job = JobBySeq(seq);
    if (job == nullptr) continue;
    // The engine's counters travel with the record, so a restart restores them.
    if (std::optional<engine::JobView> v = engine_.GetJob(seq)) {
      job->attempt = v->attempt;
      job->failed_attempts = v->failed_attempts;
      job->preemptions = v->preemptions;
      job->last_checkpoint = v->last_checkpoint;
    }
    job->Compact();
    pending_.Put(store::Kind::kJob, job->id, EncodeJob(*job));
  }
  touched_.clear();
  Reply reply;
  if (pending_.empty() && pending_effects_.empty()) {
    // Nothing of this call to write; it answers once what it may have read is durable too:
    // it waits on the last batch while that is in flight, and answers its failure.
    if (last_batch_.valid() && (!last_batch_.ready() || !last_batch_.get().ok())) {
      reply.durable = last_batch_;
    }
    return reply;
  }
  Durable written = Durable::Unset();
  reply.durable = written;
  last_batch_ = written;
  auto effects = std::make_shared<std::vector<Effect>>(std::move(pending_effects_));
  pending_effects_.clear();
  const std::uint64_t reports = reports_.empty() ? 0 : reports_.back().id;
  store_->Submit(std::move(pending_), [this, written, effects, reports](const Status& s) {
    if (s.ok()) {
      std::uint64_t durable = durable_report_id_.load();
      while (reports > durable && !durable_report_id_.compare_exchange_weak(durable, reports)) {
      }
      for (Effect& e : *effects) Post(std::move(e));
    } else if (!broken_.exchange(true)) {
      log::Error("store.write_failed", {{"error", s.message()}, {"action", "rolling back"}});
      Post([this] { RebuildIfBroken(); });
      PostJobFilesCheck();  // the disk may be full: finished trees may free it
    }
    written.Set(s);
  });
  pending_ = store::Batch();
  return reply;
}

void Controller::Post(Effect effect) {
  {
    std::lock_guard<std::mutex> lock(loop_mu_);
    loop_queue_.push_back(std::move(effect));
  }
  loop_cv_.notify_one();
}

// Called under mu_ after every change of the engine: an engine timer that is now earlier than
// the one the loop sleeps for (or the first one while it sleeps without) wakes the loop, which
// re-arms. Without this a quiet server fires a new 2 s timeout only when the next call comes.
void Controller::WakeLoopIfEarlierDeadline() {
  const std::optional<Timestamp> next = engine_.NextDeadline();
  if (!next || *next >= armed_deadline_) return;
  armed_deadline_ = *next;  // the loop re-reads it; another wake for the same time is useless
  RearmLoop();
}

void Controller::RearmLoop() {
  {
    std::lock_guard<std::mutex> lock(loop_mu_);
    rearm_ = true;
  }
  loop_cv_.notify_one();
}

// The loop runs committed effects in commit order and ticks the engine at its deadlines. It
// sleeps until the earliest engine deadline (armed_deadline_, read and written under mu_), a
// posted effect, a re-arm request or shutdown.
void Controller::Loop() {
  std::unique_lock<std::mutex> lock(loop_mu_);
  while (!stopping_) {
    if (!loop_queue_.empty()) {
      Effect e = std::move(loop_queue_.front());
      loop_queue_.pop_front();
      lock.unlock();
      e();
      lock.lock();
      continue;
    }
    rearm_ = false;
    lock.unlock();
    Timestamp deadline = kNoDeadline;
    if (broken_) {
      RebuildIfBroken();
      deadline = broken_ ? next_rebuild_ : kNoDeadline;
    }
    if (!broken_) {
      std::lock_guard<std::mutex> g(mu_);
      if (std::optional<Timestamp> next = engine_.NextDeadline(); next && *next <= Now()) {
        ApplyBackground(model::Tick{});
        Finish();
      }
      deadline = engine_.NextDeadline().value_or(kNoDeadline);
      armed_deadline_ = deadline;
      deadline = std::min(deadline, SampleUsageIfDue());    // history.cc
      deadline = std::min(deadline, CheckJobFilesIfDue());  // job_files.cc
    } else {
      // Also while the store fails: a full disk is what the removal of finished trees is for.
      std::lock_guard<std::mutex> g(mu_);
      deadline = std::min(deadline, CheckJobFilesIfDue());
    }
    lock.lock();
    if (!loop_queue_.empty() || stopping_ || rearm_) continue;
    if (deadline == kNoDeadline) {
      loop_cv_.wait(lock, [this] { return stopping_ || rearm_ || !loop_queue_.empty(); });
    } else {
      const auto wait = std::chrono::milliseconds(std::max<Timestamp>(1, deadline - Now()));
      loop_cv_.wait_for(lock, wait, [this] { return stopping_ || rearm_ || !loop_queue_.empty(); });
    }
  }
}

JobRecord* Controller::FindJob(const std::string& id_or_arn) {
  std::string_view id = id_or_arn;
  if (id.starts_with("arn:")) {
    // Only "service-job/<id>" as the whole resource part of a Batch ARN names a job.
    constexpr std::string_view kJob = "service-job/";
    const std::optional<std::string_view> resource = api::decoders::BatchResource(id_or_arn);
    if (!resource || !resource->starts_with(kJob)) return nullptr;
    id = resource->substr(kJob.size());
  }
  auto it = job_ids_.find(id);
  return it == job_ids_.end() ? nullptr : &jobs_.at(it->second);
}

Result<JobRecord*> Controller::JobNamed(const std::string& id_or_arn) {
  JobRecord* job = FindJob(id_or_arn);
  if (job == nullptr) return InvalidArgument("jobId " + id_or_arn + " does not exist");
  return job;
}

void Controller::IndexJob(const JobRecord& job) {
  if (!job.queue.empty()) list_index_.Add(job);
}

void Controller::UnindexJob(const JobRecord& job) {
  if (!job.queue.empty()) list_index_.Remove(job);
}

void Controller::SetJobStatus(JobRecord& job, model::JobStatus status) {
  if (!job.queue.empty()) list_index_.Move(job, job.status, status);
  job.status = status;
}

JobRecord* Controller::JobBySeq(model::JobId seq) {
  auto it = jobs_.find(seq);
  return it == jobs_.end() ? nullptr : &it->second;
}

JobRecord& Controller::AddJob(JobRecord record, bool listed) {
  const model::JobId seq = record.seq;
  JobRecord& job = jobs_.emplace(seq, std::move(record)).first->second;
  job_ids_[job.id] = seq;
  if (listed) IndexJob(job);
  return job;
}

void Controller::DropJob(model::JobId seq) {
  auto it = jobs_.find(seq);
  if (it == jobs_.end()) return;
  UnindexJob(it->second);
  job_ids_.erase(it->second.id);
  touched_.erase(seq);
  jobs_.erase(it);
}

}  // namespace allot::server
