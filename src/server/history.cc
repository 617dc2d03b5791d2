// The usage history and the job lifecycle events (docs/observability.md, History and reports).
// Events are written in the batch of the decision or call they record; usage samples are taken
// on the controller's loop, never on a request, and go to the store through the same writer.

#include <algorithm>

#include "server/controller.h"
#include "server/log.h"

namespace allot::server {

namespace {

std::vector<std::pair<std::string, std::int64_t>> DemandOf(const JobRecord& job) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (const model::UnitCount& u : job.demand) out.emplace_back(u.unit, u.count);
  return out;
}

Timestamp AttemptDispatchedAt(const JobRecord& job) {
  const std::vector<AttemptRecord>& attempts = job.attempts();
  return attempts.empty() ? 0 : attempts.back().started_at;
}

std::string HostNames(const JobRecord& job) {
  std::string out;
  if (!job.history) return out;
  for (const exec::HostProcess& h : job.history->hosts) {
    if (!out.empty()) out += ',';
    out += h.host;
  }
  return out;
}

// The rule as the report names it (as the metrics label it too).
std::string RuleName(model::PreemptionRule rule) {
  switch (rule) {
    case model::PreemptionRule::kInShare:
      return "in-share";
    case model::PreemptionRule::kLimitLowered:
      return "limit-lowered";
    case model::PreemptionRule::kReclaim:
      break;
  }
  return "reclaim";
}

// The step a coarse resolution's point at `at` starts.
Timestamp StepStart(Timestamp at, Duration step) { return at - at % step; }

}  // namespace

void Controller::StartHistory() {
  std::lock_guard<std::mutex> lock(mu_);
  // Event keys carry a sequence number after the time: it goes on from the newest stored one.
  Result<std::vector<store::Record>> newest =
      store_->Range(store::Kind::kJobEvent, {.from = "", .to = "", .limit = 1, .descending = true});
  if (!newest.ok()) {
    // Keys stay unique without it (they begin with the event's time); said, not swallowed.
    log::Warn("history.newest_event_unread", {{"error", newest.status().message()}});
  } else if (!newest->empty()) {
    history_.next_event = JobEventSequence(newest->front().key).value_or(0) + 1;
  }
  history_.live = true;
  // The first sample comes one interval after the start, not at it: a start writes nothing
  // (docs/benchmarks.md, restart: "a start rewrites nothing unchanged").
  const Duration interval = std::max<Duration>(options_.history_interval, 1);
  history_.next_sample = StepStart(Now(), interval) + interval;
  history_.next_prune = Now() + kFiveMinutes;
}

void Controller::NoteEvent(JobEvent event, const JobRecord& job) {
  if (!history_.live || broken_) return;
  event.job = job.id;
  event.queue = std::string(job.queue);
  event.share = std::string(job.share);
  if (event.demand.empty()) event.demand = DemandOf(job);
  pending_.Put(store::Kind::kJobEvent, JobEventKey(event.at, history_.next_event++),
               EncodeJobEvent(event));
}

void Controller::NoteDecision(const model::Decision& d, const JobRecord* job) {
  if (job == nullptr || !history_.live) return;
  const Timestamp now = Now();
  if (const auto* s = std::get_if<model::StatusChanged>(&d)) {
    if (s->from == model::JobStatus::kSubmitted) {
      // A submission; a restore also passes through SUBMITTED, but only before history_.live.
      NoteEvent({.at = job->created_at,
                 .type = JobEventType::kSubmitted,
                 .name = job->name,
                 .priority = job->priority},
                *job);
    }
    if (model::IsDispatched(s->from) && !model::IsDispatched(s->to)) {
      NoteEvent({.at = now,
                 .type = JobEventType::kAttemptEnded,
                 .attempt = job->attempt,
                 .dispatched_at = AttemptDispatchedAt(*job),
                 .reason = s->reason},
                *job);
    }
    if (s->to == model::JobStatus::kRunning && s->from != model::JobStatus::kRunning) {
      NoteEvent({.at = now,
                 .type = JobEventType::kStarted,
                 .attempt = job->attempt,
                 .dispatched_at = AttemptDispatchedAt(*job),
                 .hosts = HostNames(*job)},
                *job);
    }
    if (model::IsTerminal(s->to)) {
      NoteEvent({.at = now,
                 .type = JobEventType::kEnded,
                 .attempt = job->attempt,
                 .reason = s->reason,
                 .status = std::string(model::ToString(s->to))},
                *job);
    }
  } else if (const auto* x = std::get_if<model::Dispatch>(&d)) {
    NoteEvent({.at = now,
               .type = JobEventType::kDispatched,
               .priority = job->priority,
               .attempt = x->attempt,
               .created_at = job->created_at,
               .dispatched_at = now,
               .reason = std::string(model::ToString(x->mode))},
              *job);
  } else if (const auto* p = std::get_if<model::PreemptedAttempt>(&d)) {
    JobEvent e{.at = now,
               .type = JobEventType::kPreempted,
               .attempt = p->attempt,
               .dispatched_at = AttemptDispatchedAt(*job),
               .reason = p->reason,
               .rule = RuleName(p->rule),
               .work_lost = p->work_lost};
    if (job->history && !job->history->preemptions.empty() &&
        job->history->preemptions.back().attempt == p->attempt) {
      const PreemptionRecord& r = job->history->preemptions.back();
      e.preemptor = r.preemptor;
      auto it = job_ids_.find(r.preemptor);
      if (it != job_ids_.end()) e.preemptor_share = std::string(jobs_.at(it->second).share);
      e.victim_priority = r.victim_priority;
      e.work_lost_when_chosen = r.work_lost_when_chosen;
      e.chosen_at = r.at;
    }
    NoteEvent(std::move(e), *job);
  }
}

void Controller::NotePriority(const JobRecord& job, std::int32_t old_priority) {
  if (old_priority == job.priority) return;
  NoteEvent({.at = Now(),
             .type = JobEventType::kPriority,
             .priority = job.priority,
             .old_priority = old_priority,
             .by = caller_ != nullptr ? caller_->user : std::string()},
            job);
}

namespace {

// Adds a fine sample to a coarse step's sums; when the sample starts a new step, the finished
// step's average goes into `batch` first.
void Accumulate(UsageAverage& avg, UsageResolution resolution, Duration step,
                const UsageSample& fine, store::Batch& batch) {
  const Timestamp start = StepStart(fine.at, step);
  if (avg.step_start >= 0 && avg.step_start != start && avg.samples > 0) {
    UsageSample coarse{.resolution = resolution, .at = avg.step_start, .queue = fine.queue};
    const auto n = static_cast<double>(avg.samples);
    for (auto& [key, sum] : avg.sums) {
      UsagePoint p = sum;
      p.used /= n;
      p.borrowed /= n;
      p.lent /= n;
      p.waiting /= n;
      coarse.points.push_back(std::move(p));
    }
    batch.Put(store::Kind::kUsageSample, UsageSampleKey(resolution, coarse.at, coarse.queue),
              EncodeUsageSample(coarse));
    avg.sums.clear();
    avg.samples = 0;
  }
  avg.step_start = start;
  ++avg.samples;
  for (const UsagePoint& p : fine.points) {
    UsagePoint& sum = avg.sums[{p.share, p.unit, ""}];
    sum.share = p.share;
    sum.unit = p.unit;
    sum.limit = p.limit;  // the latest
    sum.used += p.used;
    sum.borrowed += p.borrowed;
    sum.lent += p.lent;
    sum.waiting += p.waiting;
  }
}

}  // namespace

Timestamp Controller::SampleUsageIfDue() {
  if (!history_.live || options_.history_interval <= 0) return kNoDeadline;
  const Timestamp now = Now();
  if (now < history_.next_sample) return history_.next_sample;
  const Duration interval = options_.history_interval;
  // Points sit on multiples of the interval, so every queue's samples line up.
  const Timestamp at = StepStart(now, interval);
  history_.next_sample = at + interval;
  for (const auto& [name, queue] : queues_) {
    Result<engine::QueueUsage> usage = engine_.Usage(name);
    if (!usage.ok()) {
      log::Warn("history.sample_failed", {{"queue", name}, {"error", usage.status().message()}});
      continue;
    }
    UsageSample sample{.resolution = UsageResolution::kFine, .at = at, .queue = name};
    for (const engine::ShareUsage& share : usage->shares) {
      for (const engine::UnitUsage& u : share.units) {
        sample.points.push_back({.share = share.name,
                                 .unit = u.unit,
                                 .limit = static_cast<double>(u.limit),
                                 .used = static_cast<double>(u.used),
                                 .borrowed = static_cast<double>(u.borrowed),
                                 .lent = static_cast<double>(u.lent),
                                 .waiting = static_cast<double>(u.waiting)});
      }
    }
    Accumulate(history_.five_minutes[name], UsageResolution::kFiveMinutes, kFiveMinutes, sample,
               pending_);
    Accumulate(history_.hours[name], UsageResolution::kHour, kHour, sample, pending_);
    pending_.Put(store::Kind::kUsageSample, UsageSampleKey(sample.resolution, at, name),
                 EncodeUsageSample(sample));
  }
  if (now >= history_.next_prune) {
    history_.next_prune = now + kFiveMinutes;
    PruneHistory(now);
  }
  Finish();
  return history_.next_sample;
}

// Drops what each resolution keeps no longer, and job events past the retention: a bounded
// number of records per call, the oldest first, so a long-stopped server catches up in steps.
void Controller::PruneHistory(Timestamp now) {
  constexpr std::size_t kPerCall = 4096;
  const Duration retention = options_.history_retention;
  const std::pair<UsageResolution, Duration> kept[] = {
      {UsageResolution::kFine, std::min(kFineKept, retention)},
      {UsageResolution::kFiveMinutes, std::min(kFiveMinutesKept, retention)},
      {UsageResolution::kHour, retention}};
  for (const auto& [resolution, keep] : kept) {
    Result<std::vector<store::Record>> old =
        store_->Range(store::Kind::kUsageSample, {.from = UsageSampleBound(resolution, 0),
                                                  .to = UsageSampleBound(resolution, now - keep),
                                                  .limit = kPerCall});
    if (!old.ok()) {  // the next prune tries again; the failure is not silent meanwhile
      log::Warn("history.prune_failed", {{"error", old.status().message()}});
      continue;
    }
    for (const store::Record& r : *old) pending_.Delete(store::Kind::kUsageSample, r.key);
  }
  Result<std::vector<store::Record>> old =
      store_->Range(store::Kind::kJobEvent,
                    {.from = "", .to = JobEventBound(now - retention), .limit = kPerCall});
  if (!old.ok()) {
    log::Warn("history.prune_failed", {{"error", old.status().message()}});
    return;
  }
  for (const store::Record& r : *old) pending_.Delete(store::Kind::kJobEvent, r.key);
  if (!old->empty()) {
    log::Info("history.pruned", {{"job_events", static_cast<std::int64_t>(old->size())}});
  }
}

}  // namespace allot::server
