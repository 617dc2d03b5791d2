#include "engine/support/random_scenario.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "common/rng.h"
#include "engine/engine.h"
#include "engine/support/shadow_model.h"
#include "model/capacity.h"
#include "model/event.h"

namespace allot::testing {

namespace {

const std::vector<std::string>& AllUnits() {
  static const std::vector<std::string> units = {"ml.g5.xlarge", "ml.m5.large", "ml.p4d.24xlarge"};
  return units;
}

const std::vector<std::string>& FailureReasons() {
  static const std::vector<std::string> reasons = {
      "AlgorithmError: OutOfMemory", "ClientError: bad input", "CapacityError: no capacity"};
  return reasons;
}

class Driver {
 public:
  Driver(std::uint64_t seed, const ScenarioOptions& options)
      : rng_(seed), options_(options), now_(Seconds(1'700'000'000)) {}

  ScenarioResult Run();

 private:
  struct ShareInfo {
    model::QuotaShareConfig config;
    bool deleted = false;
  };
  struct QueueInfo {
    std::string name;
    model::ServiceEnvironmentConfig env;
    std::vector<ShareInfo> shares;
  };
  struct Attempt {
    model::JobId job = 0;
    int attempt = 0;
    int phase = 0;  // 0 dispatched, 1 starting reported, 2 running reported
    bool stopped = false;
    int delay = 0;  // events until a stopped attempt reports AttemptEnded
  };

  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(rng_.Uniform(0, static_cast<std::int64_t>(v.size()) - 1))];
  }
  std::int64_t Between(std::int64_t lo, std::int64_t hi) { return rng_.Uniform(lo, hi); }

  void Setup();
  void Step();
  bool Apply(const model::Event& event, bool expect_silent = false);
  void Follow(const model::Decisions& decisions);

  std::vector<model::CapacityLimit> RandomPool(const QueueInfo& q,
                                               const std::vector<std::string>& units);
  std::vector<model::CapacityLimit> RandomLimits(const std::vector<std::string>& units,
                                                 int percent);
  model::QuotaShareConfig RandomShare(const std::string& queue, const std::string& name,
                                      const std::vector<std::string>& units);
  model::Event RandomSubmit();
  model::Event RandomReport();
  model::Event RandomConfigChange();
  model::Event RandomJobEvent();
  std::optional<model::Event> DueStoppedEnd();

  Rng rng_;
  ScenarioOptions options_;
  Timestamp now_;
  engine::Engine engine_;
  ShadowModel shadow_;
  std::vector<QueueInfo> queues_;
  std::vector<Attempt> attempts_;
  std::vector<model::JobId> live_;
  std::map<model::JobId, int> last_attempt_;
  model::JobId next_id_ = 1;
  bool held_ = false;  // the driver holds dispatches (model::HoldDispatches)
  ScenarioResult result_;
};

ScenarioResult Driver::Run() {
  Setup();
  const std::int64_t events = Between(options_.min_events, options_.max_events);
  for (std::int64_t i = 0; i < events && result_.error.empty(); ++i) {
    now_ += Seconds(Between(0, 60));
    Step();
  }
  return std::move(result_);
}

std::vector<model::CapacityLimit> Driver::RandomLimits(const std::vector<std::string>& units,
                                                       int percent) {
  std::vector<model::CapacityLimit> limits;
  for (const std::string& u : units) {
    if (rng_.Chance(percent)) limits.push_back({u, Between(1, 8)});
  }
  if (limits.empty()) limits.push_back({Pick(units), Between(1, 8)});
  return limits;
}

model::QuotaShareConfig Driver::RandomShare(const std::string& queue, const std::string& name,
                                            const std::vector<std::string>& units) {
  model::QuotaShareConfig c;
  c.queue = queue;
  c.name = name;
  c.capacity_limits = RandomLimits(units, 75);
  const std::int64_t strategy = Between(0, 99);
  c.strategy = strategy < 25   ? model::SharingStrategy::kReserve
               : strategy < 55 ? model::SharingStrategy::kLend
                               : model::SharingStrategy::kLendAndBorrow;
  static const std::vector<std::int64_t> kBorrow = {-1, 0, 50, 100, 200};
  c.borrow_limit = Pick(kBorrow);
  // A borrowLimit other than -1 is allowed only with LEND_AND_BORROW.
  if (c.strategy != model::SharingStrategy::kLendAndBorrow) c.borrow_limit = -1;
  c.in_share_preemption = rng_.Chance(50);
  return c;
}

void Driver::Setup() {
  const std::int64_t queue_count = Between(1, 2);
  for (std::int64_t qi = 0; qi < queue_count; ++qi) {
    QueueInfo q;
    q.name = "q" + std::to_string(qi);
    q.env.name = "env" + std::to_string(qi);
    std::vector<std::string> units = AllUnits();
    const std::int64_t keep = Between(1, 3);
    while (static_cast<std::int64_t>(units.size()) > keep) {
      units.erase(units.begin() + Between(0, static_cast<std::int64_t>(units.size()) - 1));
    }
    const std::int64_t shares = Between(2, queue_count == 1 ? 6 : 4);
    for (std::int64_t s = 0; s < shares; ++s) {
      q.shares.push_back({RandomShare(q.name, "s" + std::to_string(s), units)});
    }
    q.env.capacity_limits = RandomPool(q, units);
    Apply(model::PutServiceEnvironment{q.env});
    model::JobQueueConfig qc{.name = q.name, .service_environment = q.env.name};
    if (rng_.Chance(30)) qc.time_limit_actions.push_back({"MISCONFIGURATION:", 600});
    if (rng_.Chance(20)) qc.time_limit_actions.push_back({"CAPACITY:", 900});
    Apply(model::PutJobQueue{qc});
    for (const ShareInfo& share : q.shares) Apply(model::PutQuotaShare{share.config});
    queues_.push_back(std::move(q));
  }
}

// Mostly close to the sum of the shares' limits, so that shares borrow and reclaim; sometimes
// any size from 1 to 8.
std::vector<model::CapacityLimit> Driver::RandomPool(const QueueInfo& q,
                                                     const std::vector<std::string>& units) {
  if (rng_.Chance(30)) return RandomLimits(units, 100);
  std::vector<model::CapacityLimit> pool;
  for (const std::string& u : units) {
    std::int64_t sum = 0;
    for (const ShareInfo& s : q.shares) {
      for (const model::CapacityLimit& l : s.config.capacity_limits) {
        if (l.unit == u && !s.deleted) sum += l.max_capacity;
      }
    }
    pool.push_back({u, std::max<std::int64_t>(1, sum + Between(-3, 1))});
  }
  return pool;
}

void Driver::Step() {
  for (Attempt& a : attempts_) {
    if (a.stopped) --a.delay;
  }
  if (std::optional<model::Event> end = DueStoppedEnd()) {
    Apply(*end);
    return;
  }
  const std::int64_t roll = Between(0, 99);
  if (roll < 35) {
    Apply(RandomSubmit());
  } else if (roll < 65 && !attempts_.empty()) {
    Apply(RandomReport());
  } else if (roll < 77 && !live_.empty()) {
    Apply(RandomJobEvent());
  } else if (roll < 85) {
    Apply(RandomConfigChange());
  } else if (roll == 88 || (held_ && roll < 96)) {
    // A hold now and then (a server whose disk is full), released within a dozen steps or so;
    // once in a while one without a reason, which the engine refuses.
    const bool hold = !held_;
    std::string reason = hold && !rng_.Chance(5) ? "the disk is full" : "";
    const bool taken = !hold || !reason.empty();
    Apply(model::HoldDispatches{.held = hold, .reason = std::move(reason)});
    if (taken) held_ = hold;
  } else if (roll < 88 && !last_attempt_.empty()) {
    // A late report for an attempt that is not the current one: ignored, no decision.
    auto it = last_attempt_.begin();
    std::advance(it, Between(0, static_cast<std::int64_t>(last_attempt_.size()) - 1));
    if (std::find(live_.begin(), live_.end(), it->first) == live_.end()) return;
    const int stale = it->second > 1 ? it->second - 1 : it->second + 3;
    const std::optional<Timestamp> deadline = engine_.NextDeadline();
    Apply(model::AttemptRunning{it->first, stale}, !deadline || *deadline > now_);
  } else {
    const std::optional<Timestamp> deadline = engine_.NextDeadline();
    if (deadline && rng_.Chance(50)) now_ = std::max(now_, *deadline);
    Apply(model::Tick{});
  }
}

std::optional<model::Event> Driver::DueStoppedEnd() {
  for (std::size_t i = 0; i < attempts_.size(); ++i) {
    const Attempt a = attempts_[i];
    if (!a.stopped || a.delay > 0) continue;
    attempts_.erase(attempts_.begin() + static_cast<std::ptrdiff_t>(i));
    const std::int64_t roll = Between(0, 99);
    model::AttemptOutcome outcome = roll < 80   ? model::AttemptOutcome::kFailed
                                    : roll < 95 ? model::AttemptOutcome::kSucceeded
                                                : model::AttemptOutcome::kRequeue;
    return model::AttemptEnded{a.job, a.attempt, outcome, "Killed: SIGTERM"};
  }
  return std::nullopt;
}

model::Event Driver::RandomSubmit() {
  const QueueInfo& q = Pick(queues_);
  std::vector<const ShareInfo*> shares;
  for (const ShareInfo& s : q.shares) {
    if (!s.deleted) shares.push_back(&s);
  }
  model::JobSpec spec;
  spec.id = rng_.Chance(3) && !live_.empty() ? Pick(live_) : next_id_++;
  spec.queue = q.name;
  spec.share = shares.empty() ? "s0" : Pick(shares)->config.name;
  // A busy borrower: most reclaims need a share that borrows a lot.
  for (const ShareInfo* s : shares) {
    if (s->config.strategy == model::SharingStrategy::kLendAndBorrow && rng_.Chance(35)) {
      spec.share = s->config.name;
      break;
    }
  }
  spec.priority = static_cast<std::int32_t>(Between(0, 5));
  std::vector<model::UnitCount> parts;
  const std::int64_t kinds = Between(1, 2);
  for (std::int64_t k = 0; k < kinds; ++k) {
    const std::string unit = rng_.Chance(90) ? Pick(q.env.capacity_limits).unit : Pick(AllUnits());
    parts.push_back({unit, Between(1, rng_.Chance(70) ? 2 : 4)});
  }
  spec.demand = model::NormalizeDemand(parts).value();
  const std::int64_t retries = Between(0, 4);
  if (retries < 2) spec.preemption_retries = static_cast<std::int32_t>(retries);
  spec.retry.attempts = static_cast<int>(Between(1, 3));
  if (rng_.Chance(40)) {
    spec.retry.evaluate_on_exit = {{model::RetryAction::kExit, "*OutOfMemory*"},
                                   {model::RetryAction::kRetry, "*"}};
  }
  if (rng_.Chance(20)) spec.attempt_timeout_seconds = Between(30, 300);
  spec.created_at = now_;
  return model::SubmitJob{std::move(spec)};
}

model::Event Driver::RandomReport() {
  Attempt& a = attempts_[static_cast<std::size_t>(
      Between(0, static_cast<std::int64_t>(attempts_.size()) - 1))];
  if (a.phase == 0) {
    a.phase = 1;
    return model::AttemptStarting{a.job, a.attempt};
  }
  if (a.phase == 1) {
    a.phase = 2;
    return model::AttemptRunning{a.job, a.attempt};
  }
  if (a.stopped || rng_.Chance(55)) {
    return model::CheckpointObserved{a.job, a.attempt, now_ - Seconds(Between(0, 5))};
  }
  const Attempt ended = a;
  attempts_.erase(attempts_.begin() + (&a - attempts_.data()));
  const std::int64_t roll = Between(0, 99);
  if (roll < 50) return model::AttemptEnded{ended.job, ended.attempt, {}, ""};
  if (roll < 90) {
    return model::AttemptEnded{ended.job, ended.attempt, model::AttemptOutcome::kFailed,
                               Pick(FailureReasons())};
  }
  return model::AttemptEnded{ended.job, ended.attempt, model::AttemptOutcome::kRequeue,
                             "CapacityError: lost on restart"};
}

model::Event Driver::RandomJobEvent() {
  const model::JobId job = rng_.Chance(5) ? 999'999 : Pick(live_);
  if (rng_.Chance(60)) {
    return model::UpdateJobPriority{job, static_cast<std::int32_t>(Between(0, 5))};
  }
  return model::TerminateJob{job, "Terminated by the property test"};
}

model::Event Driver::RandomConfigChange() {
  QueueInfo& q =
      queues_[static_cast<std::size_t>(Between(0, static_cast<std::int64_t>(queues_.size()) - 1))];
  std::vector<std::string> units;
  for (const model::CapacityLimit& l : q.env.capacity_limits) units.push_back(l.unit);
  const std::int64_t roll = Between(0, 99);
  if (roll < 20) {
    if (rng_.Chance(15)) {
      q.env.state =
          q.env.state == model::State::kEnabled ? model::State::kDisabled : model::State::kEnabled;
    } else {
      q.env.capacity_limits = RandomPool(q, units);
    }
    return model::PutServiceEnvironment{q.env};
  }
  ShareInfo& s = q.shares[static_cast<std::size_t>(
      Between(0, static_cast<std::int64_t>(q.shares.size()) - 1))];
  if (s.deleted) return model::Tick{};
  if (roll < 30) {
    const model::Event del = model::DeleteQuotaShare{q.name, s.config.name};
    if (s.config.state == model::State::kDisabled) s.deleted = true;
    return del;
  }
  if (roll < 50) {
    s.config.state =
        s.config.state == model::State::kEnabled ? model::State::kDisabled : model::State::kEnabled;
  } else if (roll < 85) {
    s.config.capacity_limits = RandomLimits(units, 75);
  } else {
    const model::QuotaShareConfig fresh = RandomShare(q.name, s.config.name, units);
    s.config.strategy = fresh.strategy;
    s.config.borrow_limit = fresh.borrow_limit;
    s.config.in_share_preemption = fresh.in_share_preemption;
  }
  return model::PutQuotaShare{s.config};
}

bool Driver::Apply(const model::Event& event, bool expect_silent) {
  model::Decisions decisions;
  const Status status = engine_.Apply(event, now_, &decisions);
  ++result_.events;
  result_.log += "t=" + std::to_string((now_ - Seconds(1'700'000'000)) / 1000) + "s " +
                 model::EventToString(event) + (status.ok() ? "" : " => " + status.ToString()) +
                 "\n";
  for (const model::Decision& d : decisions) {
    const std::string line = model::DecisionToString(d);
    result_.log += "    " + line + "\n";
    result_.transcript += line + "\n";
  }
  result_.transcript += status.ok() ? "ok\n" : "refused\n";
  result_.decisions += static_cast<std::int64_t>(decisions.size());
  if (const auto* submit = std::get_if<model::SubmitJob>(&event); submit && status.ok()) {
    live_.push_back(submit->spec.id);
  }
  Follow(decisions);
  if (!options_.check) return true;
  if (expect_silent && !decisions.empty()) {
    result_.error = "a report for a stale attempt produced decisions";
  } else {
    result_.error = shadow_.Observe(event, now_, status, decisions, engine_);
  }
  return result_.error.empty();
}

void Driver::Follow(const model::Decisions& decisions) {
  for (const model::Decision& d : decisions) {
    if (const auto* x = std::get_if<model::Dispatch>(&d)) {
      attempts_.push_back({x->job, x->attempt});
      last_attempt_[x->job] = x->attempt;
    } else if (const auto* stop = std::get_if<model::Stop>(&d)) {
      for (Attempt& a : attempts_) {
        if (a.job != stop->job || a.attempt != stop->attempt || a.stopped) continue;
        a.stopped = true;
        a.delay = static_cast<int>(Between(0, 4));
      }
    } else if (const auto* p = std::get_if<model::Preemption>(&d)) {
      ++result_.preemptions;
      for (const model::VictimRecord& v : p->victims) ++result_.victims[static_cast<int>(v.rule)];
    } else if (const auto* s = std::get_if<model::StatusChanged>(&d)) {
      if (!model::IsTerminal(s->to)) continue;
      std::erase(live_, s->job);
      last_attempt_.erase(s->job);
    }
  }
}

}  // namespace

ScenarioResult RunScenario(std::uint64_t seed, const ScenarioOptions& options) {
  Driver driver(seed, options);
  return driver.Run();
}

}  // namespace allot::testing
