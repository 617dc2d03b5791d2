// Start-up: the engine is rebuilt from the store. Configuration first, then every live job in
// submission order. Attempts that were running when the server stopped are adopted again; one
// that left nothing to adopt ends here with a clear reason (the executor killed its leftovers,
// identified by the pid and start time recorded when it started) and the job is requeued without
// using a retry.

#include <algorithm>
#include <thread>

#include "server/api_error.h"
#include "server/config_codec.h"
#include "server/controller.h"
#include "server/job_codec.h"
#include "server/job_identity.h"
#include "server/local_paths.h"

namespace allot::server {

namespace {

constexpr char kLostReason[] =
    "Attempt lost: the server stopped while it ran; requeued without using a retry";

// The configuration records of one kind, read with `decode` (config_wire.h).
template <typename Record>
Result<std::vector<Record>> LoadRecords(store::Store& store, store::Kind kind,
                                        Result<Record> (*decode)(std::string_view,
                                                                 std::string_view)) {
  Result<std::vector<store::Record>> records = store.Load(kind);
  if (!records.ok()) return records.status();
  std::vector<Record> out;
  for (const store::Record& r : records.value()) {
    Result<Record> decoded = decode(r.key, r.value);
    if (!decoded.ok()) return decoded.status();
    out.push_back(std::move(decoded).value());
  }
  return out;
}

}  // namespace

// What a restore may change in a job record: a job that comes back as it was is not written.
struct RestoreSnapshot {
  model::JobStatus status;
  std::string status_reason;
  Timestamp scheduled_at, started_at, stopped_at, runnable_since;
  std::int32_t attempt, failed_attempts, preemptions;
  Timestamp last_checkpoint;
  std::optional<JobHistory> history;

  explicit RestoreSnapshot(const JobRecord& j)
      : status(j.status),
        status_reason(j.status_reason),
        scheduled_at(j.scheduled_at),
        started_at(j.started_at),
        stopped_at(j.stopped_at),
        runnable_since(j.runnable_since),
        attempt(j.attempt),
        failed_attempts(j.failed_attempts),
        preemptions(j.preemptions),
        last_checkpoint(j.last_checkpoint) {
    if (j.history) history = *j.history;
  }
  bool operator==(const RestoreSnapshot&) const = default;
};

Status Controller::Recover() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<model::AttemptEnded> stops_ended;
  ALLOT_RETURN_IF_ERROR(RecoverLocked(&stops_ended));
  ApplyStopsEnded(stops_ended);
  PruneAudit();
  Finish();
  executor_->ConfigurationChanged();  // the environments are known now
  return Status::Ok();
}

// Ended once every job is back, as a report would have: a preemption's victim then requeues
// behind the jobs that waited before it, its preemptor among them. An end the executor did
// report (replayed after a rollback, before these) has ended its attempt already, with its
// checkpoint error, and the lost end finds nothing to end.
void Controller::ApplyStopsEnded(const std::vector<model::AttemptEnded>& stops_ended) {
  for (const model::AttemptEnded& ended : stops_ended) ApplyBackground(ended);
}

// The job records in submission order.
Result<std::vector<JobRecord>> Controller::LoadJobs() {
  Result<std::vector<store::Record>> records = store_->Scan(store::Kind::kJob);
  if (!records.ok()) return records.status();
  std::vector<store::Record> raw = std::move(records).value();
  std::vector<DecodedJob> decoded(raw.size());
  // Decoding is most of a start with many stored jobs, and each record decodes alone: the
  // records are split among a few threads (this thread interns and indexes afterwards).
  const std::size_t threads =
      raw.size() < 10'000 ? 1 : std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 4);
  std::vector<Status> errors(threads);
  auto decode = [&raw, &decoded, &errors, threads](std::size_t part) {
    const std::size_t lo = raw.size() * part / threads;
    const std::size_t hi = raw.size() * (part + 1) / threads;
    for (std::size_t i = lo; i < hi; ++i) {
      Result<DecodedJob> d = DecodeJob(raw[i].key, raw[i].value);
      if (!d.ok()) {
        errors[part] = d.status();
        return;
      }
      decoded[i] = std::move(d).value();
      raw[i] = store::Record();  // the text is no longer needed
    }
  };
  std::vector<std::thread> workers;
  for (std::size_t part = 1; part < threads; ++part) workers.emplace_back(decode, part);
  decode(0);
  for (std::thread& w : workers) w.join();
  for (const Status& e : errors) {
    if (!e.ok()) return e;
  }
  raw = {};
  std::vector<JobRecord> jobs;
  jobs.reserve(decoded.size());
  jobs_.reserve(decoded.size());
  job_ids_.reserve(decoded.size());
  for (DecodedJob& d : decoded) {
    JobRecord& job = jobs.emplace_back(std::move(d.record));
    job.queue = Intern(d.queue);
    job.share = d.share.empty() ? std::string_view() : Intern(d.share);
    if (!d.submitted_by.empty()) job.submitted_by = Intern(d.submitted_by);
  }
  std::sort(jobs.begin(), jobs.end(),
            [](const JobRecord& a, const JobRecord& b) { return a.seq < b.seq; });
  return jobs;
}

Status Controller::RecoverLocked(std::vector<model::AttemptEnded>* stops_ended) {
  ALLOT_RETURN_IF_ERROR(LoadUsers());
  try {
    auto envs = LoadRecords(*store_, store::Kind::kServiceEnvironment, DecodeEnvironment);
    auto policies = LoadRecords(*store_, store::Kind::kSchedulingPolicy, DecodePolicy);
    auto queues = LoadRecords(*store_, store::Kind::kJobQueue, DecodeQueue);
    auto shares = LoadRecords(*store_, store::Kind::kQuotaShare, DecodeShare);
    auto tokens = store_->Load(store::Kind::kClientToken);
    if (!envs.ok()) return envs.status();
    if (!policies.ok()) return policies.status();
    if (!queues.ok()) return queues.status();
    if (!shares.ok()) return shares.status();
    if (!tokens.ok()) return tokens.status();
    for (SchedulingPolicyRecord& p : policies.value()) {
      policies_.insert_or_assign(p.name, std::move(p));
    }
    // A stored configuration the engine refuses is a fault of the data directory.
    auto restored = [](const Status& s, const std::string& what) {
      return s.ok() ? s : Internal("the stored " + what + " is refused: " + s.message());
    };
    for (ServiceEnvironmentRecord& e : envs.value()) {
      const std::string what = "service environment " + e.name;
      ALLOT_RETURN_IF_ERROR(
          restored(PutEnvironmentToEngine(
                       environments_.insert_or_assign(e.name, std::move(e)).first->second),
                   what));
    }
    for (JobQueueRecord& q : queues.value()) {
      const std::string what = "job queue " + q.name;
      ALLOT_RETURN_IF_ERROR(restored(
          PutQueueToEngine(queues_.insert_or_assign(q.name, std::move(q)).first->second), what));
    }
    for (QuotaShareRecord& s : shares.value()) {
      const std::string what = "quota share " + s.Key();
      ALLOT_RETURN_IF_ERROR(restored(
          PutShareToEngine(shares_.insert_or_assign(s.Key(), std::move(s)).first->second), what));
    }
    for (const store::Record& t : tokens.value()) {
      ALLOT_ASSIGN_OR_RETURN(ClientTokenRecord token, DecodeClientToken(t.key, t.value));
      client_tokens_[t.key] = {std::move(token.job_id), std::move(token.request_hash)};
    }
    Result<std::vector<JobRecord>> jobs = LoadJobs();
    if (!jobs.ok()) return jobs.status();
    // Attempts that still run take their capacity back before any waiting job is restored, so
    // that no pass hands that capacity to someone else.
    for (JobRecord& job : jobs.value()) {
      if (model::IsDispatched(job.status)) RecoverJob(std::move(job), stops_ended);
    }
    for (JobRecord& job : jobs.value()) {
      if (!job.id.empty() && !model::IsDispatched(job.status)) {
        RecoverJob(std::move(job), stops_ended);
      }
    }
  } catch (const std::exception& e) {
    return Internal(std::string("recovery failed: ") + e.what());
  }
  return Status::Ok();  // the caller writes it all in one batch, the ends applied (Finish)
}

void Controller::RecoverJob(JobRecord record, std::vector<model::AttemptEnded>* stops_ended) {
  next_seq_ = std::max(next_seq_, record.seq + 1);
  // A job whose queue was deleted is kept for Describe (with its queue's ARN), outside every
  // list and the engine.
  const bool queue_exists = queues_.count(std::string(record.queue)) > 0;
  const bool live = !model::IsTerminal(record.status) && queue_exists;
  JobRecord& job = AddJob(std::move(record), /*listed=*/queue_exists);
  NoteEviction(job);
  if (!live) {
    NoteFinishedTree(job);
    return;
  }
  const RestoreSnapshot original(job);
  std::string reason = job.status_reason;
  if (model::IsDispatched(job.status)) {
    if (AdoptAttempt(job)) {
      UntouchIfUnchanged(job, original);
      return;
    }
    if (job.history && job.history->stopping) {
      stops_ended->push_back(RestoreLostStoppedAttempt(job));
      return;
    }
    if (job.history && !job.history->attempts.empty() &&
        job.history->attempts.back().stopped_at == 0) {
      job.history->attempts.back().stopped_at = Now();
      job.history->attempts.back().status_reason = kLostReason;
    }
    if (job.history) job.history->hosts.clear();
    reason = kLostReason;
  }
  SetJobStatus(job, model::JobStatus::kSubmitted);  // the restore reports SUBMITTED -> RUNNABLE
  Touch(job);
  ApplyBackground(model::RestoreJob{job.Spec(), job.attempt, job.failed_attempts, job.preemptions,
                                    job.last_checkpoint, reason});
  UntouchIfUnchanged(job, original);
}

// The restore passes through SUBMITTED: a job that comes back as it was keeps its time in
// RUNNABLE, and is not written again.
void Controller::UntouchIfUnchanged(JobRecord& job, const RestoreSnapshot& original) {
  if (job.status == original.status && original.runnable_since != 0) {
    job.runnable_since = original.runnable_since;
  }
  job.Compact();
  if (RestoreSnapshot(job) == original) touched_.erase(job.seq);
}

// Watches the supervisors of a running attempt again and restores the job as RUNNING; false
// if nothing of the attempt is left to adopt (the executor then killed what the recorded
// identities still verify).
bool Controller::AdoptAttempt(JobRecord& job) {
  const int attempt = job.attempt;
  exec::AdoptSpec spec{
      .job = job.seq,
      .attempt = attempt,
      .attempt_dir = AttemptDir(job.id, attempt),
      .instance_count = job.InstanceCount(),
      .job_dir = JobDir(job.id),
      .recorded_hosts = job.history ? job.history->hosts : std::vector<exec::HostProcess>{}};
  // Checkpoints sync back to CheckpointConfig.S3Uri: the payload says where (a dispatched job
  // is rare beside the stored ones, so reading it here costs little).
  // Where the path leads is checked again, as at a launch: the copy goes where was checked.
  // The share's user as stored at its launch, read once: the checkpoint copy after the attempt
  // runs as it, and the path is checked as it. Unread, nothing is synced (and the log says why):
  // neither the check nor the copy may fall back to another user.
  Result<std::optional<exec::JobUser>> user =
      options_.sandbox ? StoredShareUser(*store_, std::string(job.queue), std::string(job.share))
                       : Result<std::optional<exec::JobUser>>(std::optional<exec::JobUser>());
  if (user.ok()) spec.user = *user;
  Result<LaunchInfo> launch =
      user.ok() ? ReadLaunchInfo(job.id, job.name, /*check_paths=*/true, PathsUserOf(*user))
                : Result<LaunchInfo>(user.status());
  if (launch.ok()) {
    spec.checkpoint_sync_dir = launch->checkpoint_sync_dir;
    spec.limits = options_.LimitsFor(launch->instance_type);  // the copy's budget, as at launch
  } else {
    log::Warn("recovery.checkpoint_sync_skipped",
              {{"job", job.id}, {"error", launch.status().message()}});
  }
  if (!job.attempts().empty()) spec.executor_ref = job.attempts().back().executor_ref;
  spec.job_id = job.id;
  // AlreadyExists: the executor still watches it (a rebuild after a failed write, not a restart).
  const Status adopted = executor_->Adopt(spec);
  if (!adopted.ok() && adopted.code() != StatusCode::kAlreadyExists) return false;
  const model::RestoreJob::Running running = RestoreDispatched(job);
  if (running.stopping) {
    // The stop may never have reached the attempt (the server went down between the stop's
    // commit and its effect): it is given again. A second stop of an attempt already stopping
    // changes nothing but, at most, an earlier kill.
    pending_effects_.push_back(
        [this, seq = job.seq, attempt, grace = options_.stop_grace, kind = running.stop_kind] {
          StopAttempt(seq, attempt, grace, kind);
        });
  }
  return true;
}

// Brings a dispatched job's attempt back into the engine as RUNNING since it started, holding
// its capacity and its slots, under the stop it was given before the restart, if any
// (decisions.cc keeps it in the record; a termination's or a timeout's reason is the job's
// final one).
model::RestoreJob::Running Controller::RestoreDispatched(JobRecord& job) {
  model::RestoreJob::Running running;
  if (!job.attempts().empty()) running.attempt_started = job.attempts().back().started_at;
  running.running_since = running.attempt_started;
  std::string reason = job.status_reason;
  if (job.history && job.history->stopping) {
    const StopRecord& stop = *job.history->stopping;
    running.stopping = true;
    running.stop_kind = stop.kind;
    running.stop_rule = job.history->stop_rule.value_or(model::PreemptionRule::kReclaim);
    if (running.stop_kind != model::StopKind::kPreemption) reason = stop.reason;
  }
  MarkSlotsTaken(job);
  SetJobStatus(job, model::JobStatus::kSubmitted);  // the restore reports SUBMITTED -> RUNNING
  Touch(job);
  ApplyBackground(model::RestoreJob{job.Spec(), job.attempt, job.failed_attempts, job.preemptions,
                                    job.last_checkpoint, reason, running});
  return running;
}

// An attempt under a stop that left nothing to adopt (it ended, or never began, while the server
// was down) is restored as stopping, and the end returned for the caller to apply: the attempt
// then ends the way its stop says (a termination or a timeout fails the job, a preemption
// requeues it and counts). Requeued as lost instead, a terminated job would run again: a restart
// must not undo an acknowledged TerminateServiceJob.
model::AttemptEnded Controller::RestoreLostStoppedAttempt(JobRecord& job) {
  // Still SCHEDULED with no host recorded: its processes never started (a launch held back, or
  // stopped before it began), so a preemption of it counts nothing.
  const bool began =
      job.status != model::JobStatus::kScheduled || (job.history && !job.history->hosts.empty());
  if (job.history) job.history->hosts.clear();
  // Its slots are held until its end frees them: a job dispatched meanwhile must not take them.
  RestoreDispatched(job);
  return model::AttemptEnded{.job = job.seq,
                             .attempt = job.attempt,
                             .outcome = model::AttemptOutcome::kFailed,
                             .reason = kLostReason,
                             .began = began};
}

}  // namespace allot::server
