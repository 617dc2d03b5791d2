#include "engine/support/shadow_model.h"

#include <algorithm>
#include <type_traits>
#include <variant>

namespace allot::testing {

namespace {

std::string JobName(model::JobId id) { return "job " + std::to_string(id); }

template <typename T>
constexpr bool kIsConfigEvent =
    std::is_same_v<T, model::PutServiceEnvironment> ||
    std::is_same_v<T, model::DeleteServiceEnvironment> || std::is_same_v<T, model::PutJobQueue> ||
    std::is_same_v<T, model::DeleteJobQueue> || std::is_same_v<T, model::PutQuotaShare> ||
    std::is_same_v<T, model::DeleteQuotaShare>;

// Whether the first decision about nominee `id` is one that a nominee gets: its PREEMPTOR
// dispatch or its end. A normal dispatch or a new Preemption means the engine returned it to
// waiting before, and nothing says exactly when: the shadow returns it at the start.
bool StaysNominated(const model::Decisions& decisions, model::JobId id) {
  for (const model::Decision& d : decisions) {
    if (const auto* x = std::get_if<model::Dispatch>(&d); x && x->job == id) {
      return x->mode == model::DispatchMode::kPreemptor;
    }
    if (const auto* x = std::get_if<model::Preemption>(&d); x && x->preemptor == id) return false;
    if (const auto* x = std::get_if<model::StatusChanged>(&d);
        x && x->job == id && model::IsTerminal(x->to)) {
      return true;
    }
  }
  return false;
}

}  // namespace

// ---------------------------------------------------------------- configuration

std::optional<std::size_t> ShadowModel::FindQueue(const std::string& name) const {
  for (std::size_t i = 0; i < queues_.size(); ++i) {
    if (queues_[i].config.name == name) return i;
  }
  return std::nullopt;
}

std::optional<std::size_t> ShadowModel::FindShare(const Queue& q, const std::string& name) const {
  for (std::size_t i = 0; i < q.shares.size(); ++i) {
    if (q.shares[i].config.name == name) return i;
  }
  return std::nullopt;
}

std::size_t ShadowModel::UnitIndex(Queue& q, const std::string& unit) {
  auto it = std::find(q.units.begin(), q.units.end(), unit);
  if (it != q.units.end()) return static_cast<std::size_t>(it - q.units.begin());
  q.units.push_back(unit);
  Refresh(q);
  return q.units.size() - 1;
}

void ShadowModel::Refresh(Queue& q) {
  auto lookup = [](const std::vector<model::CapacityLimit>& limits, const std::string& unit) {
    std::int64_t v = 0;
    for (const model::CapacityLimit& l : limits) {
      if (l.unit == unit) v = l.max_capacity;
    }
    return v;
  };
  auto env = environments_.find(q.config.service_environment);
  q.pool.assign(q.units.size(), 0);
  for (std::size_t u = 0; u < q.units.size(); ++u) {
    if (env != environments_.end()) q.pool[u] = lookup(env->second.capacity_limits, q.units[u]);
  }
  for (Share& s : q.shares) {
    s.limit.assign(q.units.size(), 0);
    for (std::size_t u = 0; u < q.units.size(); ++u) {
      s.limit[u] = lookup(s.config.capacity_limits, q.units[u]);
    }
  }
}

std::int64_t ShadowModel::Limit(const Queue& q, std::size_t s, std::size_t u) const {
  return q.shares[s].deleted ? 0 : q.shares[s].limit[u];
}

std::optional<std::int64_t> ShadowModel::Cap(const Queue& q, std::size_t s, std::size_t u) const {
  const Share& share = q.shares[s];
  if (share.deleted || share.config.strategy != model::SharingStrategy::kLendAndBorrow) return 0;
  if (share.config.borrow_limit == model::kUnlimitedBorrow) return std::nullopt;
  return share.limit[u] * share.config.borrow_limit / 100;
}

std::int64_t ShadowModel::Idle(const Queue& q, std::size_t s, std::size_t u,
                               std::int64_t used) const {
  const Share& share = q.shares[s];
  if (share.deleted || share.config.strategy == model::SharingStrategy::kReserve) return 0;
  return std::max<std::int64_t>(0, share.limit[u] - used);
}

std::int64_t ShadowModel::Pool(const Queue& q, std::size_t u) const { return q.pool[u]; }

bool ShadowModel::EnvironmentEnabled(const Queue& q) const {
  auto env = environments_.find(q.config.service_environment);
  return env != environments_.end() && env->second.state == model::State::kEnabled;
}

bool ShadowModel::ConfigValid(const model::Event& event) const {
  if (const auto* put = std::get_if<model::PutQuotaShare>(&event)) {
    const model::QuotaShareConfig& c = put->config;
    std::optional<std::size_t> q = FindQueue(c.queue);
    if (!q) return false;
    std::optional<std::size_t> s = FindShare(queues_[*q], c.name);
    if (s && queues_[*q].shares[*s].deleted) return false;
    if (!s && queues_[*q].shares.size() >= 20) return false;
    if (c.capacity_limits.empty() || c.capacity_limits.size() > 5) return false;
    for (const model::CapacityLimit& l : c.capacity_limits) {
      if (l.max_capacity < 1) return false;
    }
    if (c.borrow_limit < -1) return false;
    return c.borrow_limit == -1 || c.strategy == model::SharingStrategy::kLendAndBorrow;
  }
  if (const auto* del = std::get_if<model::DeleteQuotaShare>(&event)) {
    std::optional<std::size_t> q = FindQueue(del->queue);
    if (!q) return false;
    std::optional<std::size_t> s = FindShare(queues_[*q], del->name);
    return s && !queues_[*q].shares[*s].deleted &&
           queues_[*q].shares[*s].config.state == model::State::kDisabled;
  }
  return true;  // environment and queue puts: the scenario only sends valid ones
}

void ShadowModel::ApplyConfig(const model::Event& event) {
  if (const auto* env = std::get_if<model::PutServiceEnvironment>(&event)) {
    environments_[env->config.name] = env->config;
    for (Queue& q : queues_) {
      if (q.config.service_environment != env->config.name) continue;
      for (const model::CapacityLimit& l : env->config.capacity_limits) UnitIndex(q, l.unit);
      Refresh(q);
    }
  } else if (const auto* put = std::get_if<model::PutJobQueue>(&event)) {
    std::optional<std::size_t> q = FindQueue(put->config.name);
    if (!q) {
      queues_.emplace_back();
      q = queues_.size() - 1;
    }
    queues_[*q].config = put->config;
    auto e = environments_.find(put->config.service_environment);
    if (e != environments_.end()) {
      for (const model::CapacityLimit& l : e->second.capacity_limits)
        UnitIndex(queues_[*q], l.unit);
    }
    Refresh(queues_[*q]);
  } else if (const auto* share = std::get_if<model::PutQuotaShare>(&event)) {
    Queue& q = queues_[*FindQueue(share->config.queue)];
    std::optional<std::size_t> s = FindShare(q, share->config.name);
    if (!s) {
      q.shares.emplace_back();
      s = q.shares.size() - 1;
    }
    q.shares[*s].config = share->config;
    for (const model::CapacityLimit& l : share->config.capacity_limits) UnitIndex(q, l.unit);
    Refresh(q);
  } else if (const auto* del = std::get_if<model::DeleteQuotaShare>(&event)) {
    Queue& q = queues_[*FindQueue(del->queue)];
    q.shares[*FindShare(q, del->name)].deleted = true;
  }
}

bool ShadowModel::SubmissionValid(const model::JobSpec& spec) const {
  std::optional<std::size_t> q = FindQueue(spec.queue);
  if (!q || queues_[*q].config.state != model::State::kEnabled) return false;
  std::optional<std::size_t> s = FindShare(queues_[*q], spec.share);
  if (!s) return false;
  const Share& share = queues_[*q].shares[*s];
  if (share.deleted || share.config.state != model::State::kEnabled) return false;
  if (spec.priority < 0 || spec.priority > 9999) return false;
  if (spec.retry.attempts < 1 || spec.retry.attempts > 10) return false;
  return jobs_.count(spec.id) == 0 && !spec.demand.empty();
}

// ---------------------------------------------------------------- events

std::string ShadowModel::Observe(const model::Event& event, Timestamp now, const Status& status,
                                 const model::Decisions& decisions, const engine::Engine& engine) {
  now_ = std::max(now_, now);
  config_event_ =
      std::visit([](const auto& x) { return kIsConfigEvent<std::decay_t<decltype(x)>>; }, event);
  // Timers fire before the event is handled: their decisions come first.
  const std::size_t timers = TimerPrefix(decisions);
  std::string err = FollowDecisions(decisions, 0, timers);
  if (err.empty()) err = ApplyEvent(event, now, status);
  if (!err.empty()) return err;
  if (config_event_) {
    ++epoch_;
    for (std::size_t q = 0; q < queues_.size(); ++q) ResetAllowances(q);
  }
  err = DropSilentNominees(decisions, engine);
  if (err.empty()) err = FollowDecisions(decisions, timers, decisions.size());
  return err.empty() ? AfterApply(engine) : err;
}

std::size_t ShadowModel::TimerPrefix(const model::Decisions& decisions) {
  std::set<model::JobId> timed_out;
  std::size_t i = 0;
  for (; i < decisions.size(); ++i) {
    if (const auto* stop = std::get_if<model::Stop>(&decisions[i])) {
      if (stop->kind != model::StopKind::kTimeout) break;
      timed_out.insert(stop->job);
      continue;
    }
    const auto* st = std::get_if<model::StatusChanged>(&decisions[i]);
    if (st == nullptr) break;
    const bool limit_action = st->to == model::JobStatus::kFailed &&
                              st->reason.starts_with("Terminated by JobStateTimeLimit action");
    const bool stop_reason = st->from == st->to && timed_out.count(st->job) > 0;
    if (!limit_action && !stop_reason) break;
  }
  return i;
}

std::string ShadowModel::FollowDecisions(const model::Decisions& decisions, std::size_t begin,
                                         std::size_t end) {
  std::string err;
  for (std::size_t i = begin; i < end; ++i) {
    // A decision changes only its job's queue (a preemption: the preemptor's).
    const model::JobId id = std::visit(
        [](const auto& x) -> model::JobId {
          if constexpr (requires { x.preemptor; }) {
            return x.preemptor;
          } else {
            return x.job;
          }
        },
        decisions[i]);
    auto it = jobs_.find(id);
    const std::optional<std::size_t> queue =
        it == jobs_.end() ? std::nullopt : std::optional<std::size_t>(it->second.queue);
    err = OnDecision(decisions[i]);
    if (err.empty() && queue) err = CheckInvariants(*queue);
    if (!err.empty()) {
      return "after decision #" + std::to_string(i) + " (" + model::DecisionToString(decisions[i]) +
             "): " + err;
    }
  }
  return "";
}

std::string ShadowModel::ApplyEvent(const model::Event& event, Timestamp now,
                                    const Status& status) {
  if (config_event_) {
    const bool valid = ConfigValid(event);
    if (status.ok()) ApplyConfig(event);
    if (valid != status.ok()) {
      return "configuration event " + std::string(valid ? "refused: " : "accepted: ") +
             model::EventToString(event) + " " + status.ToString();
    }
    return "";
  }
  if (const auto* submit = std::get_if<model::SubmitJob>(&event)) {
    const bool valid = SubmissionValid(submit->spec);
    if (valid != status.ok()) {
      return std::string("submission ") + (valid ? "refused: " : "accepted: ") + status.ToString();
    }
    if (!valid) return "";
    ++epoch_;
    Job job;
    job.spec = submit->spec;
    job.queue = *FindQueue(job.spec.queue);
    Queue& q = queues_[job.queue];
    job.share = *FindShare(q, job.spec.share);
    for (const model::UnitCount& c : job.spec.demand) {
      job.need.emplace_back(UnitIndex(q, c.unit), c.count);
    }
    jobs_[job.spec.id] = std::move(job);
    return "";
  }
  if (std::holds_alternative<model::Tick>(event)) return "";
  if (const auto* hold = std::get_if<model::HoldDispatches>(&event)) {
    if (status.ok() != (!hold->held || !hold->reason.empty())) {
      return "a hold of dispatches " + std::string(status.ok() ? "accepted" : "refused") +
             (hold->reason.empty() ? " without" : " with") + " a reason";
    }
    if (status.ok()) dispatches_held_ = hold->held;
    return "";
  }
  // Every other event names a job: known (live) jobs are accepted, others refused.
  const model::JobId id = std::visit(
      [](const auto& x) -> model::JobId {
        if constexpr (requires { x.job; }) {
          return x.job;
        } else {
          return 0;
        }
      },
      event);
  auto it = jobs_.find(id);
  // Executor reports about a job that is not live are late, not wrong: the engine ignores them
  // with OK. Priority changes and terminations of such a job are refused.
  const bool report = !std::holds_alternative<model::UpdateJobPriority>(event) &&
                      !std::holds_alternative<model::TerminateJob>(event);
  if (report && it == jobs_.end()) {
    return status.ok() ? ""
                       : JobName(id) + ": a late executor report was refused: " + status.ToString();
  }
  if ((it != jobs_.end()) != status.ok()) {
    return JobName(id) + (status.ok() ? " unknown to the shadow but the event was accepted"
                                      : " is live but the event was refused: " + status.ToString());
  }
  if (it == jobs_.end()) return "";
  Job& job = it->second;
  const bool holds = job.state == JobState::kDispatched || job.state == JobState::kStopping;
  if (const auto* p = std::get_if<model::UpdateJobPriority>(&event)) {
    job.spec.priority = p->priority;
    ++epoch_;
  } else if (std::holds_alternative<model::TerminateJob>(event)) {
    if (job.state == JobState::kStopping) job.stop_final = true;  // a preemption becomes final
  } else if (const auto* r = std::get_if<model::AttemptRunning>(&event)) {
    if (holds && r->attempt == job.attempt && job.running_since < 0) job.running_since = now;
  } else if (const auto* e = std::get_if<model::AttemptEnded>(&event)) {
    if (holds && e->attempt == job.attempt) {
      job.state = JobState::kWaiting;
      job.running_since = -1;
      job.preemption_victim = false;
      job.stop_seen = false;
      job.stop_final = false;
    }
  }
  return "";
}

// Nominees the engine returned to waiting say so only through GetJob: the doc allows it after a
// configuration change, or once no job in the nominee's queue is stopping.
std::string ShadowModel::DropSilentNominees(const model::Decisions& decisions,
                                            const engine::Engine& engine) {
  for (auto& [id, job] : jobs_) {
    if (job.state != JobState::kNominated) continue;
    std::optional<engine::JobView> view = engine.GetJob(id);
    if (StaysNominated(decisions, id)) continue;
    if (view && view->nominated &&
        !std::any_of(decisions.begin(), decisions.end(), [id](const model::Decision& d) {
          const auto* p = std::get_if<model::Preemption>(&d);
          return p != nullptr && p->preemptor == id;
        })) {
      continue;
    }
    std::string err = Unnominate(job);
    if (!err.empty()) return err;
  }
  return "";
}

std::string ShadowModel::Unnominate(Job& job) {
  bool stopping = false;
  for (const auto& [id, other] : jobs_) {
    stopping = stopping || (other.queue == job.queue && other.state == JobState::kStopping);
  }
  if (!config_event_ && stopping) {
    return JobName(job.spec.id) +
           " returned from nominated to waiting without a configuration change while jobs of its "
           "queue are stopping";
  }
  job.state = JobState::kWaiting;
  return "";
}

// ---------------------------------------------------------------- decisions

std::string ShadowModel::OnDecision(const model::Decision& d) {
  if (const auto* x = std::get_if<model::StatusChanged>(&d)) return OnStatus(*x);
  if (const auto* x = std::get_if<model::Dispatch>(&d)) return OnDispatch(*x);
  if (const auto* x = std::get_if<model::Stop>(&d)) return OnStop(*x);
  if (const auto* x = std::get_if<model::Preemption>(&d)) return OnPreemption(*x);
  const auto& p = std::get<model::PreemptedAttempt>(d);
  auto it = jobs_.find(p.job);
  if (it == jobs_.end()) return "PreemptedAttempt for unknown " + JobName(p.job);
  it->second.preemptions = p.preempted_count;
  return "";
}

std::string ShadowModel::OnStatus(const model::StatusChanged& d) {
  auto it = jobs_.find(d.job);
  if (it == jobs_.end()) return "StatusChanged for unknown " + JobName(d.job);
  const bool holds =
      it->second.state == JobState::kDispatched || it->second.state == JobState::kStopping;
  if ((model::IsTerminal(d.to) || d.to == model::JobStatus::kRunnable) && holds) {
    return JobName(d.job) + " became " + std::string(model::ToString(d.to)) +
           " while its attempt still holds capacity (no AttemptEnded)";
  }
  if ((d.to == model::JobStatus::kStarting || d.to == model::JobStatus::kRunning) && !holds) {
    return JobName(d.job) + " became " + std::string(model::ToString(d.to)) +
           " without holding capacity";
  }
  if (model::IsTerminal(d.to)) jobs_.erase(it);
  return "";
}

std::string ShadowModel::OnDispatch(const model::Dispatch& d) {
  auto it = jobs_.find(d.job);
  if (it == jobs_.end()) return "Dispatch of unknown " + JobName(d.job);
  Job& job = it->second;
  const Queue& q = queues_[job.queue];
  if (job.state == JobState::kDispatched || job.state == JobState::kStopping) {
    return "Dispatch of " + JobName(d.job) + " which already holds capacity";
  }
  if (!EnvironmentEnabled(q)) return "Dispatch while the service environment is DISABLED";
  if (dispatches_held_) return "Dispatch of " + JobName(d.job) + " while dispatches are held";
  if (q.shares[job.share].deleted) return "Dispatch of a job of a deleted share";
  if (d.attempt != job.attempt + 1) {
    return "Dispatch attempt " + std::to_string(d.attempt) + ", expected " +
           std::to_string(job.attempt + 1);
  }
  std::string err;
  if (d.mode == model::DispatchMode::kPreemptor) {
    if (job.state != JobState::kNominated) return "PREEMPTOR dispatch of a job not nominated";
    err = Fit(job.queue, View(job.queue, false), job, FitMode::kBorrowing);
    if (!err.empty()) return "nominee dispatched but does not fit the actual view: " + err;
  } else {
    if (job.state == JobState::kNominated) err = Unnominate(job);
    if (!err.empty()) return err;
    if (d.mode == model::DispatchMode::kBorrowed &&
        q.shares[job.share].config.strategy != model::SharingStrategy::kLendAndBorrow) {
      return "BORROWED dispatch in a share that is not LEND_AND_BORROW";
    }
    const FitMode mode =
        d.mode == model::DispatchMode::kBorrowed ? FitMode::kBorrowing : FitMode::kWithinQuota;
    err = Fit(job.queue, View(job.queue, false), job, mode);
    if (err.empty()) err = Fit(job.queue, View(job.queue, true), job, mode);
    if (!err.empty()) return "dispatched job does not fit both views: " + err;
    err = CheckPlaceKept(job, mode);
    if (!err.empty()) return err;
  }
  job.state = JobState::kDispatched;
  job.attempt = d.attempt;
  job.running_since = -1;
  return "";
}

std::string ShadowModel::OnStop(const model::Stop& d) {
  auto it = jobs_.find(d.job);
  if (it == jobs_.end()) return "Stop of unknown " + JobName(d.job);
  Job& job = it->second;
  if (job.state != JobState::kDispatched && job.state != JobState::kStopping) {
    return "Stop of " + JobName(d.job) + " which holds no capacity";
  }
  if (d.attempt != job.attempt) return "Stop names attempt " + std::to_string(d.attempt);
  if (d.kind == model::StopKind::kPreemption && !job.preemption_victim) {
    return "PREEMPTION stop of " + JobName(d.job) + " without a Preemption decision naming it";
  }
  if (d.kind == model::StopKind::kTimeout) {
    const std::optional<std::int64_t>& t = job.spec.attempt_timeout_seconds;
    if (!t || job.running_since < 0 || now_ < job.running_since + Seconds(*t)) {
      return "TIMEOUT stop of " + JobName(d.job) + " before its timeout";
    }
  }
  job.stop_seen = true;
  job.state = JobState::kStopping;
  return "";
}

std::string ShadowModel::OnPreemption(const model::Preemption& d) {
  auto it = jobs_.find(d.preemptor);
  if (it == jobs_.end()) return "Preemption by unknown " + JobName(d.preemptor);
  if (dispatches_held_)
    return "Preemption by " + JobName(d.preemptor) + " while dispatches are held";
  Job& preemptor = it->second;
  if (preemptor.state == JobState::kNominated) {
    std::string err = Unnominate(preemptor);
    if (!err.empty()) return err;
  }
  if (preemptor.state != JobState::kWaiting) return "preemptor is not waiting";
  std::string err = CheckVictims(preemptor, d);
  if (err.empty()) err = CheckVictimSet(preemptor, d);
  if (err.empty()) err = CheckThrash(d);
  if (!err.empty()) return err;
  preemptor.state = JobState::kNominated;
  for (const model::VictimRecord& v : d.victims) {
    Job& victim = jobs_.at(v.victim);
    victim.state = JobState::kStopping;
    victim.preemption_victim = true;
    victim.stop_seen = false;
  }
  return "";
}

std::string ShadowModel::CheckThrash(const model::Preemption& d) {
  for (const model::VictimRecord& v : d.victims) {
    auto back = preempted_.find({v.victim, d.preemptor});
    if (back != preempted_.end() && back->second == epoch_) {
      return "thrash: " + JobName(v.victim) + " preempted " + JobName(d.preemptor) +
             " before, and now the reverse, with no submission, priority or configuration "
             "change in between";
    }
  }
  for (const model::VictimRecord& v : d.victims) preempted_[{d.preemptor, v.victim}] = epoch_;
  return "";
}

}  // namespace allot::testing
