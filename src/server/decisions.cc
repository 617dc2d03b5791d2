// Engine decisions become job-record changes and executor effects; executor reports become
// engine events.

#include <unistd.h>

#include <csignal>

#include "server/api_error.h"
#include "server/controller.h"
#include "server/job_identity.h"
#include "server/local_paths.h"
#include "server/log.h"

namespace allot::server {

namespace {

std::string TrainingJobArn(const Options& o, const JobRecord& job, int attempt) {
  return "arn:aws:sagemaker:" + o.region + ":" + o.account + ":training-job/AWSBatch" +
         (job.options().training_name.empty() ? job.name : job.options().training_name) +
         job.id.substr(0, 8) + "-" + std::to_string(attempt);
}

// Closes the open attempt, if any.
void CloseAttempt(JobRecord& job, Timestamp now, const std::string& reason) {
  if (!job.history || job.history->attempts.empty()) return;
  AttemptRecord& a = job.history->attempts.back();
  if (a.stopped_at != 0) return;
  a.stopped_at = now;
  a.status_reason = reason;
}

}  // namespace

void Controller::ApplyDecisions(const model::Decisions& decisions) {
  for (const model::Decision& d : decisions) {
    const model::JobId seq = std::visit(
        [](const auto& x) -> model::JobId {
          if constexpr (requires { x.job; }) {
            return x.job;
          } else {
            return x.preemptor;
          }
        },
        d);
    JobRecord* job = JobBySeq(seq);
    NoteDecision(d, job);  // history.cc: its lifecycle event, in this batch
    log::Info("decision", {{"job", job ? std::string_view{job->id} : std::string_view()},
                           {"decision", model::DecisionToString(d)}});
    if (const auto* p = std::get_if<model::Preemption>(&d)) {
      OnPreemption(*p);
      continue;
    }
    if (job == nullptr) continue;
    Touch(*job);
    if (const auto* s = std::get_if<model::StatusChanged>(&d)) {
      OnStatus(*job, *s);
    } else if (const auto* x = std::get_if<model::Dispatch>(&d)) {
      OnDispatch(*job, *x);
    } else if (const auto* stop = std::get_if<model::Stop>(&d)) {
      // Kept so that a restart re-adopting this attempt knows it was being stopped.
      job->History().stopping = StopRecord{stop->kind, stop->reason};
      const int attempt = stop->attempt;
      const Duration grace = options_.stop_grace;
      pending_effects_.push_back([this, seq, attempt, grace, kind = stop->kind] {
        StopAttempt(seq, attempt, grace, kind);
      });
    } else if (const auto* pa = std::get_if<model::PreemptedAttempt>(&d)) {
      OnPreempted(*job, *pa);
    }
  }
}

// The metrics of a status change: an attempt's end by outcome, a first start's wait and a
// restart's cost. A restored job (from SUBMITTED) counts nothing again.
void Controller::CountStatus(const JobRecord& job, const model::StatusChanged& s, Timestamp now) {
  const std::string queue(job.queue);
  const std::string share(job.share);
  const bool preempted =
      job.history && !job.history->attempts.empty() && job.history->attempts.back().preempted;
  if (model::IsDispatched(s.from) && !model::IsDispatched(s.to)) {
    const char* outcome = s.to == model::JobStatus::kSucceeded ? "succeeded"
                          : preempted                          ? "preempted"
                          : job.is_terminated                  ? "terminated"
                                                               : "failed";
    metrics_.attempts_ended.With({queue, share, outcome}).Add();
  }
  const bool launched =
      s.from == model::JobStatus::kScheduled || s.from == model::JobStatus::kStarting;
  if (s.to != model::JobStatus::kRunning || !launched) return;
  if (job.started_at == 0) {
    metrics_.first_start.With({queue, share})
        .Observe(static_cast<double>(std::max<Timestamp>(0, now - job.created_at)) / 1000);
  }
  const std::vector<AttemptRecord>& attempts = job.attempts();
  if (attempts.size() >= 2 && attempts[attempts.size() - 2].preempted) {
    const Duration took = std::max<Timestamp>(0, now - attempts.back().started_at);
    metrics_.restart.With({queue, share})
        .Add(static_cast<double>(took) / 1000 * job.InstanceCount());
  }
}

void Controller::OnStatus(JobRecord& job, const model::StatusChanged& s) {
  const Timestamp now = Now();
  CountStatus(job, s, now);
  const bool was_dispatched = model::IsDispatched(s.from);
  SetJobStatus(job, s.to);
  job.status_reason = s.reason;
  if (s.to == model::JobStatus::kRunnable) {
    if (was_dispatched) {
      CloseAttempt(job, now, s.reason);
      if (job.history) job.history->hosts.clear();
    }
    if (s.from != model::JobStatus::kRunnable) job.runnable_since = now;
  }
  if (s.to == model::JobStatus::kRunning && job.started_at == 0) job.started_at = now;
  if (!model::IsDispatched(s.to)) {
    if (job.history) job.history->stopping.reset();
    if (was_dispatched) ReleaseSlots(job);
  }
  if (model::IsTerminal(s.to)) {
    job.stopped_at = now;
    CloseAttempt(job, now, s.reason);
    if (job.history) job.history->hosts.clear();
    if (!job.attempts().empty()) {  // it left a tree in the data directory (job_files.cc)
      pending_effects_.push_back([this, seq = job.seq] { MeasureWhenEnded(seq); });
    }
  }
}

void Controller::OnDispatch(JobRecord& job, const model::Dispatch& d) {
  const Timestamp now = Now();
  JobHistory& h = job.History();
  h.attempts.push_back(
      {.resource_arn = TrainingJobArn(options_, job, d.attempt), .started_at = now});
  job.scheduled_at = now;
  job.attempt = d.attempt;
  h.dispatch_mode = d.mode;
  metrics_.dispatches.With({std::string(job.queue), std::string(job.share), MetricLabel(d.mode)})
      .Add();
  TakeSlots(job);
  const model::JobId seq = job.seq;
  const int attempt = d.attempt;
  pending_effects_.push_back(
      [this, seq, attempt, share = job.ShareKey()] { StartLaunch(seq, attempt, share); });
}

void Controller::OnPreempted(JobRecord& job, const model::PreemptedAttempt& p) {
  CloseAttempt(job, Now(), p.reason);
  JobHistory& h = job.History();
  if (!h.attempts.empty()) h.attempts.back().preempted = true;
  h.preempted_attempt_count = p.preempted_count;
  job.preemptions = p.preempted_count;
  if (!h.preemptions.empty()) h.preemptions.back().work_lost = p.work_lost;
  metrics_.lost_work.With({std::string(job.queue), std::string(job.share), MetricLabel(p.rule)})
      .Add(static_cast<double>(p.work_lost) / 1000);
}

void Controller::OnPreemption(const model::Preemption& p) {
  JobRecord* preemptor = JobBySeq(p.preemptor);
  // Both sides name each other by id, name and share (explain_ops.cc).
  const std::optional<RunnerUpRecord> runner_up = RunnerUpOf(p);
  CausedPreemption caused{.at = Now(), .victims = {}};
  for (const model::VictimRecord& v : p.victims) {
    JobRecord* victim = JobBySeq(v.victim);
    if (victim == nullptr) continue;
    Touch(*victim);
    JobHistory& h = victim->History();
    h.preemptions.push_back({.attempt = victim->attempt,
                             .preemptor = preemptor ? preemptor->id : std::to_string(p.preemptor),
                             .preemptor_name = preemptor ? preemptor->name : std::string(),
                             .preemptor_share = preemptor ? std::string(preemptor->share) : "",
                             .runner_up = runner_up,
                             .rule = v.rule,
                             .victim_priority = v.key.priority,
                             .work_lost_when_chosen = v.key.work_lost,
                             .attempt_started_at = v.key.started_at,
                             .at = Now()});
    h.stop_rule = v.rule;
    caused.victims.push_back({{victim->id, victim->name, std::string(victim->share)},
                              victim->attempt,
                              v.rule,
                              v.key.work_lost});
    metrics_.preemptions
        .With({std::string(victim->queue), MetricLabel(v.rule),
               preemptor ? std::string(preemptor->share) : std::string(), v.share})
        .Add();
  }
  if (preemptor != nullptr) {
    Touch(*preemptor);
    preemptor->History().caused.push_back(std::move(caused));
  }
}

Result<std::optional<exec::JobUser>> Controller::PathsUser(const std::string& queue,
                                                           const std::string& share,
                                                           bool allocate) {
  if (!options_.sandbox || ::geteuid() != 0) return std::optional<exec::JobUser>();
  if (allocate) {
    Result<exec::JobUser> user = ShareUser(
        *store_, JobUidRange{options_.job_uid_first, options_.job_uid_count}, queue, share);
    if (!user.ok()) return user.status();
    return std::optional<exec::JobUser>(*user);
  }
  Result<std::optional<exec::JobUser>> stored = StoredShareUser(*store_, queue, share);
  if (!stored.ok()) return stored.status();
  return PathsUserOf(*stored);
}

std::optional<exec::JobUser> Controller::PathsUserOf(
    const std::optional<exec::JobUser>& stored) const {
  if (!options_.sandbox || ::geteuid() != 0) return std::nullopt;
  return stored.value_or(exec::kNobodyUser);
}

Result<LaunchInfo> Controller::ReadCheckedLaunchInfo(const std::string& id, const std::string& name,
                                                     const std::string& queue,
                                                     const std::string& share, bool allocate) {
  const Result<std::optional<exec::JobUser>> paths_as = PathsUser(queue, share, allocate);
  if (!paths_as.ok()) return paths_as.status();
  return ReadLaunchInfo(id, name, /*check_paths=*/true, *paths_as);
}

Result<LaunchInfo> Controller::ReadLaunchInfo(const std::string& id, const std::string& name,
                                              bool check_paths,
                                              const std::optional<exec::JobUser>& paths_as) {
  Result<std::optional<std::string>> payload = store_->Get(store::Kind::kJobPayload, id);
  if (!payload.ok()) return payload.status();
  if (!payload.value()) return Internal("the store holds no serviceRequestPayload for job " + id);
  api::ParsedPayload parsed;
  try {
    parsed = api::ParsePayload(*payload.value(), name, api::PayloadSource::kStored);
  } catch (const ClientError& e) {
    // It was accepted at submission: only a change of the rules since can refuse it now.
    return Internal(std::string("the stored serviceRequestPayload no longer parses: ") + e.what());
  }
  if (!check_paths) return std::move(parsed.launch);
  // Where its file:// URIs lead is checked again at each launch: a root may have been taken
  // away, or a link under one swapped, since the job was submitted. The launch gets the paths
  // as they were checked, links resolved.
  Result<LaunchInfo> resolved = ResolveLocalPaths(parsed, options_.file_roots, data_dir_, paths_as);
  Status use = resolved.status();
  if (use.ok()) use = CheckLocalUse(parsed, *resolved, paths_as, /*channels_exist=*/false);
  if (!use.ok()) return FailedPrecondition("no longer allowed at launch: " + use.message());
  return resolved;
}

namespace {

// The sealed sandbox's part of the spec: the share's user (allocated on its first launch) and
// the limits of the instance type.
Status SealSpec(store::Store& store, const Options& options, exec::LaunchSpec& spec,
                const std::string& queue, const std::string& share) {
  spec.limits = options.LimitsFor(spec.instance_type);
  spec.readonly_paths = options.job_readonly_paths;
  if (!options.sandbox) return Status::Ok();
  Result<exec::JobUser> user =
      ShareUser(store, JobUidRange{options.job_uid_first, options.job_uid_count}, queue, share);
  if (!user.ok()) return user.status();
  spec.user = *user;
  return Status::Ok();
}

}  // namespace

// Asked before the part of a launch that may take long (the checkpoints' restore): an attempt
// stopped while it waited is not started at all (its end is reported), and one a shutting-down
// server did not start is requeued by the next start's recovery.
bool Controller::LaunchStillWanted(model::JobId seq, int attempt) {
  if (ShuttingDown()) return false;
  if (!StopPending(seq, attempt)) return true;
  ReportNotLaunched(seq, attempt);
  return false;
}

void Controller::ReportNotLaunched(model::JobId seq, int attempt) {
  log::Info("executor.launch_skipped", {{"job", static_cast<std::int64_t>(seq)},
                                        {"attempt", std::int64_t{attempt}},
                                        {"reason", "stopped before it started"}});
  std::lock_guard<std::mutex> lock(mu_);
  RecordReport([this, seq, attempt] {
    ApplyBackground(model::AttemptEnded{.job = seq,
                                        .attempt = attempt,
                                        .outcome = model::AttemptOutcome::kFailed,
                                        .reason = "Stopped before the attempt started",
                                        .began = false});
  });
}

void Controller::LaunchAttempt(model::JobId seq, int attempt) {
  exec::LaunchSpec spec;
  std::string id;
  std::string name;
  std::string queue;
  std::string share;
  {
    std::lock_guard<std::mutex> lock(mu_);
    JobRecord* job = JobBySeq(seq);
    auto view = engine_.GetJob(seq);
    if (job == nullptr || !view || view->attempt != attempt || !model::IsDispatched(view->status)) {
      return;
    }
    id = job->id;
    name = job->name;
    queue = std::string(job->queue);
    share = std::string(job->share);
    spec.job = seq;
    spec.job_id = job->id;
    spec.share = share;
    spec.attempt = attempt;
    spec.attempt_dir = AttemptDir(job->id, attempt);
    spec.job_dir = JobDir(job->id);
    spec.self_exe = self_exe_;
    spec.host_slots = SlotsOf(*job);
  }
  // The payload is read outside the lock: a store read must not stall every API call.
  // As the share's jobs will reach them: its uid is allocated here if this is its first launch.
  Result<LaunchInfo> launch = ReadCheckedLaunchInfo(id, name, queue, share, /*allocate=*/true);
  Status s = launch.status();
  store::Batch claim_records;
  if (launch.ok() && (!launch->channels.empty() || !launch->checkpoint_sync_dir.empty())) {
    // A link under a root may lead elsewhere since the submission: into another share's
    // checkpoints, say. The claims are checked again where the paths lead now, as resolved and
    // checked above, not resolved a second time: what is recorded is what the executor gets (in
    // memory; only the first check after a start reads the stored claims and payloads).
    std::lock_guard<std::mutex> lock(mu_);
    if (const JobRecord* job = JobBySeq(seq)) {
      s = checkpoint_claims_.CheckAtLaunch(*launch, *job, jobs_, *store_, &claim_records,
                                           /*resolved=*/true);
      if (s.code() == StatusCode::kInvalidArgument) {
        s = FailedPrecondition("no longer allowed at launch: " + s.message());
      }
    }
  }
  // Durable before the job may write there: its location stays its share's once it finished.
  if (s.ok() && !claim_records.empty()) s = store_->Commit(std::move(claim_records));
  if (s.ok()) {
    const LaunchInfo& info = launch.value();
    spec.name = info.training_job_name;
    spec.argv = info.argv;
    spec.environment = info.environment;
    spec.instance_type = info.instance_type;
    spec.instance_count = info.instance_count;
    spec.hyperparameters = info.hyperparameters;
    for (const auto& [channel, dir] : info.channels) spec.channels.push_back({channel, dir});
    spec.checkpoint_local_path = info.checkpoint_local_path;
    spec.checkpoint_sync_dir = info.checkpoint_sync_dir;
    s = SealSpec(*store_, options_, spec, queue, share);
  }
  if (s.ok() && !LaunchStillWanted(seq, attempt)) return;
  if (s.ok()) s = executor_->Launch(spec);
  if (s.ok()) return;
  log::Warn("executor.launch_failed", {{"job", static_cast<std::int64_t>(seq)},
                                       {"attempt", std::int64_t{attempt}},
                                       {"error", s.message()}});
  std::lock_guard<std::mutex> lock(mu_);
  RecordReport([this, seq, attempt, reason = s.message()] {
    ApplyBackground(
        model::AttemptEnded{seq, attempt, model::AttemptOutcome::kFailed,
                            "Received status from SageMaker: AlgorithmError: " + reason});
  });
}

void Controller::ExecutorStarted(model::JobId seq, int attempt,
                                 const std::vector<exec::HostProcess>& hosts) {
  log::Info("executor.started", {{"job", static_cast<std::int64_t>(seq)},
                                 {"attempt", std::int64_t{attempt}},
                                 {"hosts", static_cast<std::int64_t>(hosts.size())}});
  std::lock_guard<std::mutex> lock(mu_);
  RecordReport([this, seq, attempt, hosts] {
    if (JobRecord* job = JobBySeq(seq)) {
      // Identities, not bare pids: recovery signals a process only while pid and start time match.
      job->History().hosts = hosts;
      Touch(*job);
    }
    ApplyBackground(model::AttemptStarting{seq, attempt});
    ApplyBackground(model::AttemptRunning{seq, attempt});
  });
}

// The reference is written with the attempt, so a restart finds the attempt where it runs.
void Controller::ExecutorSubmitted(model::JobId seq, int attempt, const std::string& ref) {
  log::Info(
      "executor.submitted",
      {{"job", static_cast<std::int64_t>(seq)}, {"attempt", std::int64_t{attempt}}, {"ref", ref}});
  std::lock_guard<std::mutex> lock(mu_);
  RecordReport([this, seq, attempt, ref] {
    JobRecord* job = JobBySeq(seq);
    if (job == nullptr || !job->history || attempt < 1 ||
        static_cast<std::size_t>(attempt) > job->attempts().size()) {
      return;
    }
    job->history->attempts[static_cast<std::size_t>(attempt) - 1].executor_ref = ref;
    Touch(*job);
  });
}

void Controller::ExecutorCheckpoint(model::JobId seq, int attempt, Timestamp newest) {
  log::Info("executor.checkpoint", {{"job", static_cast<std::int64_t>(seq)},
                                    {"attempt", std::int64_t{attempt}},
                                    {"newest", newest}});
  std::lock_guard<std::mutex> lock(mu_);
  RecordReport([this, seq, attempt, newest] {
    ApplyBackground(model::CheckpointObserved{seq, attempt, newest});
    if (JobRecord* job = JobBySeq(seq)) Touch(*job);
  });
}

// Kept until a committed batch holds it: an exit status outlives a failed write (a full disk).
void Controller::ExecutorEnded(const exec::AttemptExit& exit) {
  log::Info("executor.ended", {{"job", static_cast<std::int64_t>(exit.job)},
                               {"attempt", std::int64_t{exit.attempt}},
                               {"outcome", exit.succeeded ? "succeeded" : "failed"},
                               {"reason", exit.reason},
                               {"checkpoint_error", exit.checkpoint_error}});
  std::lock_guard<std::mutex> lock(mu_);
  RecordReport([this, exit] {
    // The record says which limits held the attempt (issue 10), before its end closes it.
    JobRecord* job = JobBySeq(exit.job);
    if (job != nullptr && !exit.enforced_limits.empty() && job->history && exit.attempt >= 1 &&
        static_cast<std::size_t>(exit.attempt) <= job->attempts().size()) {
      job->history->attempts[static_cast<std::size_t>(exit.attempt) - 1].enforced_limits =
          exit.enforced_limits;
      Touch(*job);
    }
    // Lost checkpoints are the job's to know, whatever else became of the attempt: the engine
    // says them after the reason the attempt's end gives the job.
    ApplyBackground(model::AttemptEnded{
        exit.job, exit.attempt,
        exit.succeeded ? model::AttemptOutcome::kSucceeded : model::AttemptOutcome::kFailed,
        exit.succeeded ? "Received status from SageMaker: Training job completed" : exit.reason,
        exit.checkpoint_error});
  });
}

}  // namespace allot::server
