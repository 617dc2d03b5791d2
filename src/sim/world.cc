#include "sim/world.h"

#include <algorithm>

namespace allot::sim::internal {

namespace {

engine::EngineOptions OptionsOf(const Policy& policy) {
  engine::EngineOptions o;
  o.victim_order = policy.victim_order;
  return o;
}

// The longest a stop may take: a preemptor waits for its victims that long.
Duration LongestStop(const Trace& trace, Duration grace) {
  for (const TraceJob& j : trace.jobs) grace = std::max(grace, j.stop.value_or(0));
  return grace;
}

}  // namespace

World::World(const Trace& trace, const Policy& policy, const SimOptions& options)
    : trace_(trace),
      policy_(policy),
      options_(options),
      engine_(OptionsOf(policy)),
      meter_(policy.cluster, trace, options.chart_buckets),
      checker_(policy.cluster, meter_, options.check_invariants,
               LongestStop(trace, options.stop_grace)),
      jobs_(trace.jobs.size()) {}

// ---------- the driving loop ----------

Result<RunResult> World::Run() {
  ALLOT_RETURN_IF_ERROR(Configure());
  std::size_t next = 0;
  while (next < trace_.jobs.size() || !timers_.empty()) {
    // Timers due at a submission's instant go first: capacity freed then is there for it.
    const bool timer_first =
        !timers_.empty() &&
        (next == trace_.jobs.size() || timers_.top().at <= Time(trace_.jobs[next].submit));
    if (timer_first) {
      const Timer t = timers_.top();
      timers_.pop();
      if (Stale(t)) continue;
      now_ = t.at;
      meter_.Advance(now_);
      ALLOT_RETURN_IF_ERROR(Fire(t));
    } else {
      now_ = Time(trace_.jobs[next].submit);
      meter_.Advance(now_);
      ALLOT_RETURN_IF_ERROR(Submit(static_cast<std::uint32_t>(next++)));
    }
    meter_.Settle();
    ALLOT_RETURN_IF_ERROR(checker_.Check(engine_, now_));
    ScheduleTick();
  }
  RunResult r = meter_.Finish(last_event_);
  r.policy = policy_.name;
  r.victim_order = policy_.victim_order == engine::VictimOrder::kNewestFirst ? "newest-first"
                                                                             : "least-work-lost";
  r.engine_events = events_;
  r.decisions = decisions_;
  r.invariant_checks = checker_.checks();
  r.jobs = JobResults();
  return r;
}

Status World::Configure() {
  for (const auto& e : policy_.cluster.environments) {
    ALLOT_RETURN_IF_ERROR(Feed(model::PutServiceEnvironment{e}));
  }
  for (const auto& q : policy_.cluster.queues) ALLOT_RETURN_IF_ERROR(Feed(model::PutJobQueue{q}));
  for (const auto& s : policy_.cluster.shares) ALLOT_RETURN_IF_ERROR(Feed(model::PutQuotaShare{s}));
  return Status::Ok();
}

Status World::Submit(std::uint32_t job) {
  const TraceJob& t = trace_.jobs[job];
  JobState& s = jobs_[job];
  const bool one_queue = t.queue.empty() && policy_.cluster.queues.size() == 1;
  model::SubmitJob submit;
  submit.spec.id = job + 1;
  submit.spec.queue = one_queue ? policy_.cluster.queues[0].name : t.queue;
  submit.spec.share = t.share;
  submit.spec.priority = t.priority;
  submit.spec.demand = {{t.unit, t.count}};
  submit.spec.created_at = now_;
  s.share = meter_.ShareIndex(submit.spec.queue, t.share);
  s.unit = meter_.UnitIndex(t.unit);
  if (s.share >= 0) SetWaiting(job, true);
  Status accepted;
  ALLOT_RETURN_IF_ERROR(Feed(std::move(submit), &accepted));
  meter_.Submitted(s.share, accepted.ok());
  if (accepted.ok() && s.share < 0) {
    return Internal("the engine accepted job " + std::to_string(job + 1) + " for share " + t.share +
                    ", which the cluster does not list");
  }
  if (!accepted.ok()) {
    if (s.share >= 0) SetWaiting(job, false);
    s.terminal = true;
    return Status::Ok();
  }
  for (const auto& [after, priority] : t.priority_changes) {
    At(now_ + after, Kind::kPriority, job, priority);
  }
  return Status::Ok();
}

Status World::Feed(model::Event event, Status* first) {
  std::vector<model::Event> pending{std::move(event)};
  for (std::size_t i = 0; i < pending.size(); ++i) {
    out_.clear();
    ++events_;
    const model::Event e = std::move(pending[i]);
    Status applied = engine_.Apply(e, now_, &out_);
    if (i == 0 && first != nullptr) {
      *first = std::move(applied);
    } else {
      ALLOT_RETURN_IF_ERROR(applied);
    }
    decisions_ += static_cast<std::int64_t>(out_.size());
    const model::Decisions made = std::move(out_);
    for (const model::Decision& d : made) ALLOT_RETURN_IF_ERROR(Handle(d, &pending));
  }
  return Status::Ok();
}

Status World::Fire(const Timer& t) {
  if (t.kind == Kind::kTick) {
    tick_at_ = -1;
    return Feed(model::Tick{});
  }
  JobState& s = jobs_[t.job];
  if (t.kind == Kind::kPriority) {
    if (s.terminal) return Status::Ok();  // it ended before the change came
    return Feed(model::UpdateJobPriority{t.job + 1, static_cast<std::int32_t>(t.attempt)});
  }
  switch (t.kind) {
    case Kind::kCheckpoint:
      s.saved = Progress(t.job);
      s.checkpoint_at = now_;
      ScheduleNextCheckpoint(t.job);
      return Feed(model::CheckpointObserved{t.job + 1, s.attempt, now_});
    case Kind::kFinish:
      s.saved = trace_.jobs[t.job].duration;
      return EndAttempt(t.job, model::AttemptOutcome::kSucceeded);
    case Kind::kStopDone:
      if (options_.checkpoint_on_stop && now_ > s.work_start) {
        s.saved = Progress(t.job);
        s.checkpoint_at = now_;
        ALLOT_RETURN_IF_ERROR(Feed(model::CheckpointObserved{t.job + 1, s.attempt, now_}));
      }
      return EndAttempt(t.job, model::AttemptOutcome::kRequeue);
    case Kind::kTick:
    case Kind::kPriority:
      break;
  }
  return Status::Ok();
}

// A timer of an attempt that has since ended (it finished early or was stopped).
bool World::Stale(const Timer& t) const {
  if (t.kind == Kind::kTick || t.kind == Kind::kPriority) return false;
  const JobState& s = jobs_[t.job];
  return !s.dispatched || s.attempt != t.attempt;
}

// ---------- the simulated executor ----------

Duration World::Interval(std::uint32_t job) const {
  const auto& own = trace_.jobs[job].checkpoint_interval;
  return own ? *own : options_.checkpoint_interval;
}

Duration World::StopTime(std::uint32_t job) const {
  return trace_.jobs[job].stop.value_or(options_.stop_grace);
}

std::vector<JobResult> World::JobResults() const {
  std::vector<JobResult> out;
  out.reserve(jobs_.size());
  auto seconds = [](Timestamp at) {
    return at < 0 ? -1.0 : static_cast<double>(at - kEpoch) / 1000.0;
  };
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    const TraceJob& t = trace_.jobs[i];
    const JobState& s = jobs_[i];
    JobResult r;
    r.name = t.name;
    r.queue = t.queue;
    r.share = t.share;
    r.submit = static_cast<double>(t.submit) / 1000.0;
    r.first_start = seconds(s.first_start);
    r.end = seconds(s.end);
    r.attempts = s.attempt;
    r.preemptions = s.preemptions;
    r.lost_instance_hours = static_cast<double>(s.lost) / 3'600'000.0;
    r.status = s.share < 0 || (s.terminal && s.end < 0) ? "REJECTED"
               : !s.terminal                            ? "UNFINISHED"
               : s.succeeded                            ? "SUCCEEDED"
                                                        : "FAILED";
    out.push_back(std::move(r));
  }
  return out;
}

Duration World::Progress(std::uint32_t job) const {
  const JobState& s = jobs_[job];
  const Duration done =
      s.saved + std::max<Duration>(0, now_ - std::max(s.work_start, s.checkpoint_at));
  return std::min(done, trace_.jobs[job].duration);
}

void World::At(Timestamp at, Kind kind, std::uint32_t job, int attempt) {
  timers_.push({at, seq_++, kind, job, attempt});
}

void World::ScheduleNextCheckpoint(std::uint32_t job) {
  const Duration interval = Interval(job);
  if (interval <= 0) return;
  const JobState& s = jobs_[job];
  const Timestamp from = std::max(s.work_start, s.checkpoint_at);
  const Timestamp finish = from + (trace_.jobs[job].duration - s.saved);
  if (from + interval < finish) At(from + interval, Kind::kCheckpoint, job, s.attempt);
}

void World::ScheduleTick() {
  const std::optional<Timestamp> due = engine_.NextDeadline();
  if (!due || (tick_at_ >= 0 && tick_at_ <= *due)) return;
  tick_at_ = std::max(*due, now_);
  At(tick_at_, Kind::kTick, 0, 0);
}

void World::SetWaiting(std::uint32_t job, bool waiting) {
  JobState& s = jobs_[job];
  if (s.waiting == waiting) return;
  s.waiting = waiting;
  meter_.AddWaiting(s.share, s.unit, Count(job), waiting ? +1 : -1);
}

void World::OnDispatch(const model::Dispatch& d, std::vector<model::Event>* follow) {
  const auto job = static_cast<std::uint32_t>(d.job - 1);
  JobState& s = jobs_[job];
  const TraceJob& t = trace_.jobs[job];
  SetWaiting(job, false);
  s.dispatched = true;
  s.attempt = d.attempt;
  s.attempt_start = now_;
  s.checkpoint_at = 0;
  // A resumed attempt reloads before it works again; the first attempt starts at once.
  s.work_start = now_ + (s.started ? options_.restart_overhead : 0);
  if (!s.started) meter_.FirstDispatch(s.share, t.group, now_ - Time(t.submit));
  if (!s.started) s.first_start = now_;
  s.started = true;
  meter_.AddHeld(s.share, s.unit, Count(job));
  checker_.Dispatched(d.job);
  At(s.work_start + (t.duration - s.saved), Kind::kFinish, job, s.attempt);
  ScheduleNextCheckpoint(job);
  follow->push_back(model::AttemptStarting{d.job, d.attempt});
  follow->push_back(model::AttemptRunning{d.job, d.attempt});
}

Status World::EndAttempt(std::uint32_t job, model::AttemptOutcome outcome) {
  JobState& s = jobs_[job];
  const std::int64_t count = Count(job);
  s.dispatched = false;
  meter_.AddHeld(s.share, s.unit, -count);
  checker_.AttemptEnded(job + 1);
  // What this attempt cost beyond useful work: the restart overhead it spent, and (if it was
  // stopped) the work since its last checkpoint, which the next attempt redoes.
  ended_job_ = job;
  ended_restart_ = count * std::max<Duration>(0, std::min(now_, s.work_start) - s.attempt_start);
  ended_lost_ = count * (Progress(job) - s.saved);
  ended_engine_lost_ = count * (now_ - std::max(s.checkpoint_at, s.attempt_start));
  ended_preempted_ = false;
  const int attempt = s.attempt;
  ALLOT_RETURN_IF_ERROR(Feed(model::AttemptEnded{job + 1, attempt, outcome, ""}));
  if (!ended_preempted_) meter_.Restarted(s.share, ended_restart_);
  return Status::Ok();
}

void World::OnStatus(const model::StatusChanged& c) {
  const auto job = static_cast<std::uint32_t>(c.job - 1);
  JobState& s = jobs_[job];
  if (c.to == model::JobStatus::kRunnable && !s.dispatched) SetWaiting(job, true);
  if (!model::IsTerminal(c.to)) return;
  SetWaiting(job, false);
  s.terminal = true;
  s.end = now_;
  s.succeeded = c.to == model::JobStatus::kSucceeded;
  checker_.Finished(c.job);
  if (c.to == model::JobStatus::kSucceeded) {
    const TraceJob& t = trace_.jobs[job];
    meter_.Succeeded(s.share, now_ - Time(t.submit), t.duration);
  } else {
    meter_.Failed(s.share);
  }
}

void World::OnPreempted(const model::PreemptedAttempt& p) {
  const auto job = static_cast<std::uint32_t>(p.job - 1);
  if (job != ended_job_) return;
  ended_preempted_ = true;
  ++jobs_[job].preemptions;
  jobs_[job].lost += ended_lost_;
  meter_.Preempted(jobs_[job].share, p.rule, ended_lost_, ended_restart_);
  preempted_status_ = checker_.CheckWorkLost(p, ended_engine_lost_, now_);
}

Status World::Handle(const model::Decision& d, std::vector<model::Event>* follow) {
  if (const auto* x = std::get_if<model::Dispatch>(&d)) {
    OnDispatch(*x, follow);
  } else if (const auto* st = std::get_if<model::StatusChanged>(&d)) {
    OnStatus(*st);
  } else if (const auto* stop = std::get_if<model::Stop>(&d)) {
    const auto job = static_cast<std::uint32_t>(stop->job - 1);
    At(now_ + StopTime(job), Kind::kStopDone, job, stop->attempt);
  } else if (const auto* p = std::get_if<model::Preemption>(&d)) {
    checker_.Nominated(*p);
  } else if (const auto* pa = std::get_if<model::PreemptedAttempt>(&d)) {
    OnPreempted(*pa);
    Status s = std::move(preempted_status_);
    preempted_status_ = Status::Ok();
    return s;
  }
  last_event_ = now_;
  return Status::Ok();
}

}  // namespace allot::sim::internal
