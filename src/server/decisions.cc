// Engine decisions become job-record changes and executor effects; executor reports become
// engine events.

#include <csignal>

#include "server/api_error.h"
#include "server/controller.h"
#include "server/log.h"

namespace allot::server {

namespace {

constexpr std::size_t kRecentPreemptions = 5;  // AWS keeps a sliding window

std::string TrainingJobArn(const Options& o, const JobRecord& job, int attempt) {
  return "arn:aws:sagemaker:" + o.region + ":" + o.account + ":training-job/AWSBatch" +
         job.launch.training_job_name + job.id.substr(0, 8) + "-" + std::to_string(attempt);
}

// Closes the open attempt, if any.
void CloseAttempt(Json& doc, Timestamp now, const std::string& reason) {
  Json& attempts = doc["attempts"];
  if (attempts.empty() || attempts.back().contains("stoppedAt")) return;
  attempts.back()["stoppedAt"] = now;
  attempts.back()["statusReason"] = reason;
}

}  // namespace

void Controller::ApplyDecisions(const model::Decisions& decisions) {
  for (const model::Decision& d : decisions) {
    const model::JobId seq = std::visit([](const auto& x) -> model::JobId {
      if constexpr (requires { x.job; }) {
        return x.job;
      } else {
        return x.preemptor;
      }
    }, d);
    JobRecord* job = JobBySeq(seq);
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
      job->doc["allot"]["stopping"] = {{"kind", model::ToString(stop->kind)},
                                       {"reason", stop->reason}};
      const int attempt = stop->attempt;
      const Duration grace = options_.stop_grace;
      pending_effects_.push_back(
          [this, seq, attempt, grace, kind = stop->kind] {
            executor_->Stop(seq, attempt, grace, kind);
          });
    } else if (const auto* pa = std::get_if<model::PreemptedAttempt>(&d)) {
      OnPreempted(*job, *pa);
    }
  }
}

void Controller::OnStatus(JobRecord& job, const model::StatusChanged& s) {
  Json& doc = job.doc;
  const Timestamp now = Now();
  const bool was_dispatched = model::IsDispatched(s.from);
  SetJobStatus(job, std::string(model::ToString(s.to)));
  if (s.reason.empty()) {
    doc.erase("statusReason");
  } else {
    doc["statusReason"] = s.reason;
  }
  if (s.to == model::JobStatus::kRunnable) {
    if (was_dispatched) {
      CloseAttempt(doc, now, s.reason);
      doc["allot"].erase("hosts");
    }
    if (s.from != model::JobStatus::kRunnable) doc["allot"]["runnableSince"] = now;
  }
  if (s.to == model::JobStatus::kRunning && !doc.contains("startedAt")) doc["startedAt"] = now;
  if (!model::IsDispatched(s.to)) {
    doc["allot"].erase("stopping");
    if (was_dispatched) ReleaseSlots(job);
  }
  if (model::IsTerminal(s.to)) {
    doc["stoppedAt"] = now;
    CloseAttempt(doc, now, s.reason);
    doc["allot"].erase("hosts");
  }
}

void Controller::OnDispatch(JobRecord& job, const model::Dispatch& d) {
  Json& doc = job.doc;
  const Timestamp now = Now();
  const std::string arn = TrainingJobArn(options_, job, d.attempt);
  const Json resource = {{"name", "TrainingJobArn"}, {"value", arn}};
  doc["attempts"].push_back({{"serviceResourceId", resource}, {"startedAt", now}});
  doc["latestAttempt"] = {{"serviceResourceId", resource}};
  doc["scheduledAt"] = now;
  doc["allot"]["attempt"] = d.attempt;
  doc["allot"]["dispatchMode"] = model::ToString(d.mode);
  TakeSlots(job);
  const model::JobId seq = job.seq;
  const int attempt = d.attempt;
  pending_effects_.push_back([this, seq, attempt] { LaunchAttempt(seq, attempt); });
}

void Controller::OnPreempted(JobRecord& job, const model::PreemptedAttempt& p) {
  Json& doc = job.doc;
  const Timestamp now = Now();
  CloseAttempt(doc, now, p.reason);
  Json& summary = doc["preemptionSummary"];
  summary["preemptedAttemptCount"] = p.preempted_count;
  Json& recent = summary["recentPreemptedAttempts"];
  if (!recent.is_array()) recent = Json::array();
  const Json& attempt = doc["attempts"].back();
  recent.push_back({{"serviceResourceId", attempt["serviceResourceId"]},
                    {"startedAt", attempt["startedAt"]},
                    {"stoppedAt", now},
                    {"statusReason", p.reason}});
  while (recent.size() > kRecentPreemptions) recent.erase(recent.begin());
  doc["allot"]["preemptions"] = p.preempted_count;
  Json& records = doc["allot"]["preemptionRecords"];
  if (!records.empty()) records.back()["workLostInstanceSeconds"] = static_cast<double>(p.work_lost) / 1000.0;
}

void Controller::OnPreemption(const model::Preemption& p) {
  JobRecord* preemptor = JobBySeq(p.preemptor);
  for (const model::VictimRecord& v : p.victims) {
    JobRecord* victim = JobBySeq(v.victim);
    if (victim == nullptr) continue;
    Touch(*victim);
    victim->doc["allot"]["preemptionRecords"].push_back(
        {{"attempt", victim->doc["allot"]["attempt"]},
         {"preemptor", preemptor ? preemptor->id : std::to_string(p.preemptor)},
         {"rule", model::ToString(v.rule)},
         {"victimKey", {{"priority", v.key.priority},
                        {"workLostInstanceSeconds", static_cast<double>(v.key.work_lost) / 1000.0},
                        {"attemptStartedAt", v.key.started_at}}},
         {"at", Now()}});
    victim->doc["allot"]["stopRule"] = model::ToString(v.rule);
  }
}

void Controller::LaunchAttempt(model::JobId seq, int attempt) {
  exec::LaunchSpec spec;
  {
    std::lock_guard<std::mutex> lock(mu_);
    JobRecord* job = JobBySeq(seq);
    auto view = engine_.GetJob(seq);
    if (job == nullptr || !view || view->attempt != attempt || !model::IsDispatched(view->status)) {
      return;
    }
    spec.job = seq;
    spec.attempt = attempt;
    spec.name = job->launch.training_job_name;
    spec.argv = job->launch.argv;
    spec.environment = job->launch.environment;
    spec.instance_type = job->launch.instance_type;
    spec.instance_count = job->launch.instance_count;
    spec.attempt_dir = AttemptDir(job->id, attempt);
    spec.job_dir = JobDir(job->id);
    spec.hyperparameters = job->launch.hyperparameters;
    for (const auto& [name, dir] : job->launch.channels) spec.channels.push_back({name, dir});
    spec.checkpoint_local_path = job->launch.checkpoint_local_path;
    spec.checkpoint_sync_dir = job->launch.checkpoint_sync_dir;
    spec.self_exe = self_exe_;
    spec.host_slots = SlotsOf(*job);
  }
  Status s = executor_->Launch(spec);
  if (s.ok()) return;
  log::Warn("executor.launch_failed", {{"job", static_cast<std::int64_t>(seq)},
                                       {"attempt", std::int64_t{attempt}},
                                       {"error", s.message()}});
  std::lock_guard<std::mutex> lock(mu_);
  RecordReport([this, seq, attempt, reason = s.message()] {
    Apply(model::AttemptEnded{seq, attempt, model::AttemptOutcome::kFailed,
                              "Received status from SageMaker: AlgorithmError: " + reason},
          false);
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
      Json list = Json::array();
      for (const exec::HostProcess& h : hosts) {
        list.push_back({{"host", h.host},
                        {"pid", h.pid},
                        {"start_time", h.start_time},
                        {"child_pid", h.child_pid},
                        {"child_start_time", h.child_start_time}});
      }
      job->doc["allot"]["hosts"] = list;
      Touch(*job);
    }
    Apply(model::AttemptStarting{seq, attempt}, false);
    Apply(model::AttemptRunning{seq, attempt}, false);
  });
}

void Controller::ExecutorCheckpoint(model::JobId seq, int attempt, Timestamp newest) {
  log::Info("executor.checkpoint", {{"job", static_cast<std::int64_t>(seq)},
                                    {"attempt", std::int64_t{attempt}},
                                    {"newest", newest}});
  std::lock_guard<std::mutex> lock(mu_);
  RecordReport([this, seq, attempt, newest] {
    Apply(model::CheckpointObserved{seq, attempt, newest}, false);
    if (JobRecord* job = JobBySeq(seq)) Touch(*job);
  });
}

// Kept until a committed batch holds it: an exit status outlives a failed write (a full disk).
void Controller::ExecutorEnded(const exec::AttemptExit& exit) {
  log::Info("executor.ended", {{"job", static_cast<std::int64_t>(exit.job)},
                               {"attempt", std::int64_t{exit.attempt}},
                               {"outcome", exit.succeeded ? "succeeded" : "failed"},
                               {"reason", exit.reason}});
  std::lock_guard<std::mutex> lock(mu_);
  RecordReport([this, exit] {
    Apply(model::AttemptEnded{exit.job, exit.attempt,
                              exit.succeeded ? model::AttemptOutcome::kSucceeded
                                             : model::AttemptOutcome::kFailed,
                              exit.succeeded ? "Received status from SageMaker: Training job "
                                               "completed"
                                             : exit.reason},
          false);
  });
}

}  // namespace allot::server
