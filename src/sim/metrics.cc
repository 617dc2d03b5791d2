#include "sim/metrics.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace allot::sim::internal {

namespace {

constexpr double kMillisPerHour = 3600.0 * 1000.0;

template <typename T>
Distribution Distribute(std::vector<T> v, double scale) {
  Distribution d;
  d.count = static_cast<std::int64_t>(v.size());
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (const T& x : v) sum += static_cast<double>(x);
  // Nearest rank: the smallest sample with at least p percent of the samples at or below it.
  auto rank = [&v](double p) {
    const auto n = static_cast<double>(v.size());
    const auto r = static_cast<std::size_t>(std::ceil(p / 100.0 * n));
    return static_cast<double>(v[std::max<std::size_t>(r, 1) - 1]);
  };
  d.mean = sum / static_cast<double>(v.size()) * scale;
  d.p50 = rank(50) * scale;
  d.p90 = rank(90) * scale;
  d.p99 = rank(99) * scale;
  d.max = static_cast<double>(v.back()) * scale;
  return d;
}

}  // namespace

// ---------- BucketSeries ----------

BucketSeries::BucketSeries(std::size_t series, int max_buckets)
    : series_(series), max_(static_cast<std::size_t>(std::max(2, max_buckets))) {}

void BucketSeries::Widen() {
  std::vector<std::vector<double>> merged((sums_.size() + 1) / 2, std::vector<double>(series_));
  for (std::size_t b = 0; b < sums_.size(); ++b) {
    for (std::size_t i = 0; i < series_; ++i) merged[b / 2][i] += sums_[b][i];
  }
  sums_ = std::move(merged);
  width_ *= 2;
}

void BucketSeries::Add(Timestamp from, Timestamp to, const std::vector<double>& values) {
  while (from < to) {
    while (static_cast<std::size_t>(from / width_) >= max_) Widen();
    const auto b = static_cast<std::size_t>(from / width_);
    if (sums_.size() <= b) sums_.resize(b + 1, std::vector<double>(series_));
    const Timestamp end = std::min(to, static_cast<Timestamp>(b + 1) * width_);
    const auto dt = static_cast<double>(end - from);
    for (std::size_t i = 0; i < series_; ++i) sums_[b][i] += values[i] * dt;
    from = end;
  }
}

std::vector<double> BucketSeries::Means(std::size_t i, Timestamp end) const {
  std::vector<double> out;
  for (std::size_t b = 0; b < sums_.size(); ++b) {
    const Timestamp begin = static_cast<Timestamp>(b) * width_;
    const Timestamp covered = std::min<Timestamp>(width_, end - begin);
    out.push_back(covered > 0 ? sums_[b][i] / static_cast<double>(covered) : 0.0);
  }
  return out;
}

// ---------- Meter: set-up ----------

Meter::Meter(const Cluster& cluster, const Trace& trace, int chart_buckets)
    : chart_(0, chart_buckets) {
  std::set<std::string> units;
  for (const auto& e : cluster.environments) {
    for (const auto& l : e.capacity_limits) units.insert(l.unit);
  }
  for (const auto& s : cluster.shares) {
    for (const auto& l : s.capacity_limits) units.insert(l.unit);
  }
  for (const TraceJob& j : trace.jobs) units.insert(j.unit);
  for (const std::string& u : units) units_.emplace(u, static_cast<int>(units_.size()));

  std::vector<const model::QuotaShareConfig*> sorted;
  for (const auto& s : cluster.shares) sorted.push_back(&s);
  std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
    return std::tie(a->queue, a->name) < std::tie(b->queue, b->name);
  });
  std::map<std::string, int> queue_index;
  for (const auto& q : cluster.queues) {
    const int qi = static_cast<int>(queue_index.size());
    queue_index.emplace(q.name, qi);
    pool_.emplace_back(units_.size(), 0);
    queue_shares_.emplace_back();
    for (const auto& e : cluster.environments) {
      if (e.name != q.service_environment) continue;
      for (const auto& l : e.capacity_limits)
        pool_.back()[static_cast<std::size_t>(UnitIndex(l.unit))] += l.max_capacity;
    }
  }
  for (const auto* s : sorted) {
    auto q = queue_index.find(s->queue);
    if (q == queue_index.end()) continue;
    ShareInfo info{s->queue, s->name, s->strategy, q->second,
                   std::vector<std::int64_t>(units_.size(), 0)};
    for (const auto& l : s->capacity_limits)
      info.limit[static_cast<std::size_t>(UnitIndex(l.unit))] += l.max_capacity;
    share_index_.emplace(std::make_pair(s->queue, s->name), static_cast<int>(shares_.size()));
    queue_shares_[static_cast<std::size_t>(q->second)].push_back(static_cast<int>(shares_.size()));
    shares_.push_back(std::move(info));
  }
  held_.assign(shares_.size() * units_.size(), 0);
  waiting_.assign(shares_.size() * units_.size(), 0);
  waiting_needs_.resize(shares_.size() * units_.size());
  acc_.resize(shares_.size());
  chart_ = BucketSeries(shares_.size() + 1, chart_buckets);
}

int Meter::ShareIndex(const std::string& queue, const std::string& share) const {
  auto it = share_index_.find({queue, share});
  return it == share_index_.end() ? -1 : it->second;
}

int Meter::UnitIndex(const std::string& unit) const {
  auto it = units_.find(unit);
  return it == units_.end() ? -1 : it->second;
}

std::int64_t Meter::Limit(int share, int unit) const {
  return shares_[static_cast<std::size_t>(share)].limit[static_cast<std::size_t>(unit)];
}

// ---------- Meter: integration ----------

void Meter::IntegrateQueue(int queue, double dt, std::vector<double>* chart) {
  const std::vector<int>& members = queue_shares_[static_cast<std::size_t>(queue)];
  for (std::size_t u = 0; u < units_.size(); ++u) {
    std::int64_t held = 0, waiting = 0, sum_b = 0, sum_i = 0;
    for (int s : members) {
      const std::size_t c = Cell(s, static_cast<int>(u));
      const std::int64_t limit = shares_[static_cast<std::size_t>(s)].limit[u];
      held += held_[c];
      waiting += waiting_[c];
      sum_b += std::max<std::int64_t>(0, held_[c] - limit);
      if (shares_[static_cast<std::size_t>(s)].strategy != model::SharingStrategy::kReserve) {
        sum_i += std::max<std::int64_t>(0, limit - held_[c]);
      }
    }
    if (held == 0 && waiting == 0) continue;
    const std::int64_t idle =
        std::max<std::int64_t>(0, pool_[static_cast<std::size_t>(queue)][u] - held);
    overall_.iww += static_cast<double>(std::min(idle, waiting)) * dt;
    for (int s : members) {
      const ShareInfo& info = shares_[static_cast<std::size_t>(s)];
      Accumulators& a = acc_[static_cast<std::size_t>(s)];
      const std::size_t c = Cell(s, static_cast<int>(u));
      const std::int64_t limit = info.limit[u];
      const std::int64_t b = std::max<std::int64_t>(0, held_[c] - limit);
      const std::int64_t demand_in_quota = std::min(held_[c] + waiting_[c], limit);
      const std::int64_t short_of = std::max<std::int64_t>(0, demand_in_quota - held_[c]);
      a.used += static_cast<double>(held_[c]) * dt;
      a.borrowed += static_cast<double>(b) * dt;
      a.demand += static_cast<double>(held_[c] + waiting_[c]) * dt;
      a.iww += static_cast<double>(std::min(idle, waiting_[c])) * dt;
      a.shortfall += static_cast<double>(std::min(short_of, sum_b - b)) * dt;
      if (info.strategy != model::SharingStrategy::kReserve && sum_i > 0) {
        const std::int64_t lendable = std::max<std::int64_t>(0, limit - held_[c]);
        a.lent += static_cast<double>(sum_b) * static_cast<double>(lendable) /
                  static_cast<double>(sum_i) * dt;
      }
      (*chart)[static_cast<std::size_t>(s)] += static_cast<double>(held_[c]);
      chart->back() += static_cast<double>(held_[c]);
    }
  }
}

void Meter::Advance(Timestamp t) {
  if (start_ < 0) start_ = last_ = t;
  if (t <= last_) return;
  const auto dt = static_cast<double>(t - last_);
  std::vector<double> chart(shares_.size() + 1, 0.0);
  for (std::size_t q = 0; q < queue_shares_.size(); ++q)
    IntegrateQueue(static_cast<int>(q), dt, &chart);
  chart_.Add(last_ - start_, t - start_, chart);
  last_ = t;
}

void Meter::AddHeld(int share, int unit, std::int64_t delta) { held_[Cell(share, unit)] += delta; }

void Meter::AddWaiting(int share, int unit, std::int64_t count, int sign) {
  const std::size_t c = Cell(share, unit);
  waiting_[c] += sign * count;
  std::map<std::int64_t, std::int64_t>& needs = waiting_needs_[c];
  if (sign > 0) {
    ++needs[count];
  } else if (--needs[count] == 0) {
    needs.erase(count);
  }
}

// A reclaim episode: the share has a waiting job that fits in what is left of its own limit,
// while other shares of its queue hold capacity above theirs.
bool Meter::ShortWhileOthersBorrow(int share) const {
  const ShareInfo& info = shares_[static_cast<std::size_t>(share)];
  for (std::size_t u = 0; u < units_.size(); ++u) {
    const std::size_t c = Cell(share, static_cast<int>(u));
    const std::map<std::int64_t, std::int64_t>& needs = waiting_needs_[c];
    if (needs.empty() || needs.begin()->first > info.limit[u] - held_[c]) continue;
    for (int other : queue_shares_[static_cast<std::size_t>(info.queue_index)]) {
      if (other == share) continue;
      const std::size_t o = Cell(other, static_cast<int>(u));
      if (held_[o] > shares_[static_cast<std::size_t>(other)].limit[u]) return true;
    }
  }
  return false;
}

void Meter::Settle() {
  for (std::size_t s = 0; s < shares_.size(); ++s) {
    Accumulators& a = acc_[s];
    const bool short_now = ShortWhileOthersBorrow(static_cast<int>(s));
    if (short_now && a.episode_start < 0) a.episode_start = last_;
    if (!short_now && a.episode_start >= 0) {
      a.episodes.push_back(last_ - a.episode_start);
      a.episode_start = -1;
    }
  }
}

// ---------- Meter: per-job samples ----------

void Meter::Submitted(int share, bool accepted) {
  Accumulators& a = share < 0 ? overall_ : acc_[static_cast<std::size_t>(share)];
  ++(accepted ? a.jobs : a.rejected);
}

void Meter::FirstDispatch(int share, const std::string& group, Duration wait) {
  acc_[static_cast<std::size_t>(share)].waits.push_back(wait);
  if (!group.empty()) group_waits_[group].push_back(wait);
}

void Meter::Succeeded(int share, Duration completion, Duration work) {
  Accumulators& a = acc_[static_cast<std::size_t>(share)];
  ++a.succeeded;
  a.completions.push_back(completion);
  a.slowdowns.push_back(static_cast<double>(completion) /
                        static_cast<double>(std::max<Duration>(1, work)));
}

void Meter::Failed(int share) { ++acc_[static_cast<std::size_t>(share)].failed; }

void Meter::Preempted(int share, model::PreemptionRule rule, std::int64_t lost_instance_ms,
                      std::int64_t restart_instance_ms) {
  Accumulators& a = acc_[static_cast<std::size_t>(share)];
  ++(rule == model::PreemptionRule::kInShare ? a.in_share : a.reclaim);
  a.lost += static_cast<double>(lost_instance_ms);
  a.restart += static_cast<double>(restart_instance_ms);
}

void Meter::Restarted(int share, std::int64_t restart_instance_ms) {
  acc_[static_cast<std::size_t>(share)].restart += static_cast<double>(restart_instance_ms);
}

// ---------- Meter: results ----------

Figures Meter::Summarize(const Accumulators& a, std::int64_t limit, double span_ms) const {
  Figures f;
  f.jobs = a.jobs;
  f.rejected = a.rejected;
  f.succeeded = a.succeeded;
  f.failed = a.failed;
  f.unfinished = a.jobs - a.succeeded - a.failed;
  f.limit = limit;
  f.used_instance_hours = a.used / kMillisPerHour;
  f.utilization = limit > 0 && span_ms > 0 ? a.used / (static_cast<double>(limit) * span_ms) : 0;
  f.idle_while_waiting_instance_hours = a.iww / kMillisPerHour;
  f.wait = Distribute(a.waits, 1e-3);
  f.completion = Distribute(a.completions, 1e-3);
  f.slowdown = Distribute(a.slowdowns, 1.0);
  for (Duration w : a.waits) {
    int bin = kWaitBins - 1;
    while (bin > 0 && static_cast<double>(w) < kWaitBinEdges[bin] * 1000.0) --bin;
    ++f.wait_histogram[bin];
  }
  f.preemptions_reclaim = a.reclaim;
  f.preemptions_in_share = a.in_share;
  f.lost_instance_hours = a.lost / kMillisPerHour;
  f.restart_instance_hours = a.restart / kMillisPerHour;
  f.guarantee_shortfall_instance_hours = a.shortfall / kMillisPerHour;
  f.reclaim_latency = Distribute(a.episodes, 1e-3);
  f.borrowed_instance_hours = a.borrowed / kMillisPerHour;
  f.lent_instance_hours = a.lent / kMillisPerHour;
  return f;
}

RunResult Meter::Finish(Timestamp end) {
  Advance(end);
  Settle();
  for (Accumulators& a : acc_) {  // an episode still open at the end lasted until then
    if (a.episode_start >= 0) a.episodes.push_back(last_ - a.episode_start);
  }
  RunResult r;
  const Timestamp start = start_ < 0 ? end : start_;
  const double span = static_cast<double>(end - start);
  r.span_seconds = span / 1000.0;
  r.bucket_seconds = static_cast<double>(chart_.width()) / 1000.0;

  Accumulators all = overall_;
  double jain_sum = 0, jain_squares = 0;
  int jain_n = 0;
  for (std::size_t s = 0; s < shares_.size(); ++s) {
    const Accumulators& a = acc_[s];
    std::int64_t limit = 0;
    for (std::int64_t l : shares_[s].limit) limit += l;
    r.shares.push_back({shares_[s].queue, shares_[s].name,
                        std::string(model::ToString(shares_[s].strategy)),
                        Summarize(a, limit, span), chart_.Means(s, end - start)});
    all.used += a.used;
    all.borrowed += a.borrowed;
    all.lent += a.lent;
    all.shortfall += a.shortfall;
    all.lost += a.lost;
    all.restart += a.restart;
    all.jobs += a.jobs;
    all.rejected += a.rejected;
    all.succeeded += a.succeeded;
    all.failed += a.failed;
    all.reclaim += a.reclaim;
    all.in_share += a.in_share;
    all.waits.insert(all.waits.end(), a.waits.begin(), a.waits.end());
    all.completions.insert(all.completions.end(), a.completions.begin(), a.completions.end());
    all.slowdowns.insert(all.slowdowns.end(), a.slowdowns.begin(), a.slowdowns.end());
    all.episodes.insert(all.episodes.end(), a.episodes.begin(), a.episodes.end());
    if (a.demand > 0) {
      const double x = a.used / a.demand;
      jain_sum += x;
      jain_squares += x * x;
      ++jain_n;
    }
  }
  std::int64_t pool = 0;
  for (const auto& q : pool_) {
    for (std::int64_t p : q) pool += p;
  }
  r.overall = Summarize(all, pool, span);
  r.jain_index = jain_n > 0 && jain_squares > 0 ? jain_sum * jain_sum / (jain_n * jain_squares) : 0;
  for (const auto& [group, waits] : group_waits_)
    r.groups.push_back({group, Distribute(waits, 1e-3)});
  r.pool_usage = chart_.Means(shares_.size(), end - start);
  return r;
}

}  // namespace allot::sim::internal
