#include "server/report.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "server/job_record.h"

namespace allot::server {

namespace {

constexpr double kMillisPerHour = 3'600'000.0;

// Milliseconds of [from, to) inside [since, until).
Duration Overlap(Timestamp from, Timestamp to, Timestamp since, Timestamp until) {
  return std::max<Duration>(0, std::min(to, until) - std::max(from, since));
}

// Nearest rank: the smallest value with at least p of the sample at or below it.
double Percentile(std::vector<double> sorted, double p) {
  if (sorted.empty()) return 0;
  std::sort(sorted.begin(), sorted.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

struct Accumulator {
  ShareReport report;
  std::vector<double> waits;
};

class Builder {
 public:
  explicit Builder(const ReportInput& in) : in_(in) {}

  UsageReport Build() {
    for (const JobEvent& e : in_.events) OnEvent(e);
    for (const OpenAttempt& a : in_.open) {
      AddUsed(a.queue, a.share, a.demand, a.dispatched_at, in_.until);
    }
    for (const UsageSample& s : in_.samples) OnSample(s);
    return Finish();
  }

 private:
  bool Visible(const std::string& queue, const std::string& share) const {
    return !in_.visible || in_.visible(queue, share);
  }
  bool InWindow(Timestamp at) const { return at >= in_.since && at < in_.until; }

  // A plain queue's jobs name no share (as DescribeServiceJob shows them) and its samples name
  // its internal share: both are that one share here, named as the samples name it. Whether the
  // caller sees it is judged on the name the event or sample holds, as the other endpoints do.
  Accumulator* Entry(const std::string& queue, const std::string& share) {
    if (!Visible(queue, share)) return nullptr;
    const std::string name = share.empty() ? std::string(kImplicitShare) : share;
    Accumulator& a = shares_[{queue, name}];
    a.report.queue = queue;
    a.report.share = name;
    return &a;
  }

  ShareReport* Share(const std::string& queue, const std::string& share) {
    Accumulator* a = Entry(queue, share);
    return a != nullptr ? &a->report : nullptr;
  }

  void AddUsed(const std::string& queue, const std::string& share,
               const std::vector<std::pair<std::string, std::int64_t>>& demand, Timestamp from,
               Timestamp to) {
    ShareReport* r = Share(queue, share);
    if (r == nullptr) return;
    const Duration held = Overlap(from, to, in_.since, in_.until);
    for (const auto& [unit, count] : demand) {
      const double hours = static_cast<double>(count * held) / kMillisPerHour;
      r->used_by_unit[unit] += hours;
      r->used_instance_hours += hours;
    }
  }

  void OnEvent(const JobEvent& e) {
    switch (e.type) {
      case JobEventType::kAttemptEnded:
        AddUsed(e.queue, e.share, e.demand, e.dispatched_at, e.at);
        return;
      case JobEventType::kPreempted:
        preempted_attempts_.insert({e.job, e.attempt});
        break;
      default:
        break;
    }
    if (!InWindow(e.at)) return;
    ShareReport* r = Share(e.queue, e.share);
    if (r == nullptr) return;
    switch (e.type) {
      case JobEventType::kSubmitted:
        ++r->submitted;
        break;
      case JobEventType::kDispatched:
        if (e.attempt == 1 && e.created_at > 0) {
          Entry(e.queue, e.share)
              ->waits.push_back(static_cast<double>(e.at - e.created_at) / 1000.0);
        }
        break;
      case JobEventType::kStarted:
        // A resumed attempt: from its dispatch to its processes running, its instances wait.
        if (preempted_attempts_.count({e.job, e.attempt - 1}) > 0 && e.dispatched_at > 0) {
          r->restart_instance_hours +=
              static_cast<double>(e.Instances() *
                                  Overlap(e.dispatched_at, e.at, in_.since, in_.until)) /
              kMillisPerHour;
        }
        break;
      case JobEventType::kPreempted:
        ++r->preemptions[e.rule.empty() ? "reclaim" : e.rule];
        r->lost_instance_hours += static_cast<double>(e.work_lost) / kMillisPerHour;
        break;
      case JobEventType::kEnded:
        ++(e.status == "SUCCEEDED" ? r->succeeded : r->failed);
        break;
      default:
        break;
    }
  }

  void OnSample(const UsageSample& s) {
    const Duration step = s.resolution == UsageResolution::kFine          ? in_.fine_step
                          : s.resolution == UsageResolution::kFiveMinutes ? Seconds(300)
                                                                          : Seconds(3600);
    Timestamp from = in_.since;
    Timestamp to = in_.until;
    if (auto w = in_.sample_windows.find(s.resolution); w != in_.sample_windows.end()) {
      from = std::max(from, w->second.first);
      to = std::min(to, w->second.second);
    }
    const Duration covered = Overlap(s.at, s.at + step, from, to);
    if (covered == 0) return;
    const double hours = static_cast<double>(covered) / kMillisPerHour;
    std::map<std::string, std::vector<const UsagePoint*>> by_unit;
    for (const UsagePoint& p : s.points) {
      by_unit[p.unit].push_back(&p);
      if (ShareReport* r = Share(s.queue, p.share)) {
        r->borrowed_instance_hours += p.borrowed * hours;
        r->lent_instance_hours += p.lent * hours;
      }
    }
    for (const auto& [unit, points] : by_unit) {
      double lent = 0;
      for (const UsagePoint* p : points) lent += p->lent;
      if (lent <= 0) continue;
      for (const UsagePoint* b : points) {
        if (b->borrowed <= 0) continue;
        for (const UsagePoint* l : points) {
          if (l->lent <= 0 || l == b) continue;
          const bool see_b = Visible(s.queue, b->share);
          const bool see_l = Visible(s.queue, l->share);
          if (!see_b && !see_l) continue;
          const std::string borrower = see_b ? b->share : kOtherShares;
          const std::string lender = see_l ? l->share : kOtherShares;
          flows_[{s.queue, unit, borrower, lender}] += b->borrowed * (l->lent / lent) * hours;
        }
      }
    }
  }

  std::optional<double> Price(const std::string& unit) {
    if (!in_.prices) return std::nullopt;
    auto it = in_.prices->find(unit);
    if (it != in_.prices->end()) return it->second;
    unpriced_.insert(unit);
    return std::nullopt;
  }

  UsageReport Finish() {
    UsageReport out;
    out.since = in_.since;
    out.until = in_.until;
    for (auto& [key, a] : shares_) {
      ShareReport r = std::move(a.report);
      r.waits = static_cast<std::int64_t>(a.waits.size());
      r.wait_p50_seconds = Percentile(a.waits, 0.50);
      r.wait_p99_seconds = Percentile(a.waits, 0.99);
      if (in_.prices) {
        double cost = 0;
        for (const auto& [unit, hours] : r.used_by_unit) cost += hours * Price(unit).value_or(0);
        r.cost = cost;
      }
      out.shares.push_back(std::move(r));
    }
    for (const auto& [key, hours] : flows_) {
      const auto& [queue, unit, borrower, lender] = key;
      LendingFlow f{queue, unit, borrower, lender, hours, std::nullopt};
      if (in_.prices) {
        if (std::optional<double> price = Price(unit)) f.cost = hours * *price;
      }
      out.lending.push_back(std::move(f));
    }
    out.unpriced_units.assign(unpriced_.begin(), unpriced_.end());
    return out;
  }

  const ReportInput& in_;
  std::map<std::pair<std::string, std::string>, Accumulator> shares_;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, double> flows_;
  std::set<std::pair<std::string, int>> preempted_attempts_;
  std::set<std::string> unpriced_;
};

struct JobTrail {
  const JobEvent* submitted = nullptr;
  bool ended = false;
  int attempts = 0;
  Duration held = 0;                       // instance-less: time of the ended attempts
  std::map<int, Duration> lost;            // attempt -> work lost per instance
  std::map<int, Timestamp> chosen;         // attempt -> when its preemption stop began
  std::map<int, Timestamp> attempt_ended;  // attempt -> its end
  std::vector<std::pair<Timestamp, std::int32_t>> priorities;
};

}  // namespace

UsageReport ComputeReport(const ReportInput& input) { return Builder(input).Build(); }

Export ExportJobs(const std::vector<JobEvent>& events, Timestamp since, Timestamp until) {
  std::map<std::string, JobTrail> trails;
  std::vector<std::string> order;  // by submission
  for (const JobEvent& e : events) {
    if (e.type == JobEventType::kSubmitted) {
      if (e.at < since || e.at >= until) continue;
      trails[e.job].submitted = &e;
      order.push_back(e.job);
      continue;
    }
    auto it = trails.find(e.job);
    if (it == trails.end()) continue;
    JobTrail& t = it->second;
    switch (e.type) {
      case JobEventType::kAttemptEnded:
        ++t.attempts;
        t.held += std::max<Duration>(0, e.at - e.dispatched_at);
        t.attempt_ended[e.attempt] = e.at;
        break;
      case JobEventType::kPreempted: {
        const std::int64_t n = std::max<std::int64_t>(1, e.Instances());
        t.lost[e.attempt] = e.work_lost / n;
        if (e.chosen_at > 0) t.chosen[e.attempt] = e.chosen_at;
        break;
      }
      case JobEventType::kPriority:
        t.priorities.emplace_back(e.at, e.priority);
        break;
      case JobEventType::kEnded:
        t.ended = true;
        break;
      default:
        break;
    }
  }
  Export out;
  for (const std::string& id : order) {
    const JobTrail& t = trails.at(id);
    if (!t.ended) {
      ++out.unfinished;
      continue;
    }
    if (t.attempts == 0) {
      ++out.never_ran;
      continue;
    }
    const JobEvent& s = *t.submitted;
    ExportedJob j;
    j.id = s.job;
    j.name = s.name;
    j.queue = s.queue;
    j.share = s.share;
    if (!s.demand.empty()) {
      j.unit = s.demand.front().first;
      j.count = s.demand.front().second;
    }
    j.priority = s.priority;
    j.submitted = s.at;
    Duration lost = 0;
    for (const auto& [attempt, l] : t.lost) lost += l;
    j.duration = std::max<Duration>(1, t.held - lost);
    for (const auto& [attempt, at] : t.chosen) {
      auto end = t.attempt_ended.find(attempt);
      if (end == t.attempt_ended.end()) continue;
      const Duration stop = std::max<Duration>(0, end->second - at);
      j.stop = std::max(j.stop.value_or(0), stop);
    }
    for (const auto& [at, priority] : t.priorities) {
      j.priority_changes.emplace_back(at - s.at, priority);
    }
    out.jobs.push_back(std::move(j));
  }
  return out;
}

}  // namespace allot::server
