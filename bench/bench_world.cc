#include "bench/bench_world.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "model/rules.h"

namespace allot::bench {

std::string ShareName(int i) { return "team-" + std::to_string(i); }

std::string UnitName(int i) {
  static const char* const kLarger[] = {"ml.g5.2xlarge", "ml.g5.4xlarge", "ml.g5.8xlarge",
                                        "ml.g5.12xlarge"};
  return i == 0 ? kUnit : kLarger[(i - 1) % 4];
}

int UnitsFor(std::int64_t instances) {
  const std::int64_t per_unit = model::rules::kMaxCapacity;
  return static_cast<int>(std::max<std::int64_t>(1, (instances + per_unit - 1) / per_unit));
}

World::World(const WorldConfig& c) : units_(c.units) {
  Apply(model::PutServiceEnvironment{{.name = "se", .capacity_limits = PerUnit(c.pool)}});
  Apply(model::PutJobQueue{{.name = "q", .service_environment = "se"}});
  for (int i = 0; i < c.shares; ++i) {
    const std::int64_t limit = static_cast<std::size_t>(i) < c.limits.size()
                                   ? c.limits[static_cast<std::size_t>(i)]
                                   : c.share_limit;
    Apply(model::PutQuotaShare{{.queue = "q",
                                .name = ShareName(i),
                                .capacity_limits = PerUnit(limit),
                                .strategy = c.strategy,
                                .in_share_preemption = c.in_share_preemption}});
  }
}

std::vector<model::CapacityLimit> World::PerUnit(std::int64_t limit) const {
  std::vector<model::CapacityLimit> limits;
  for (int u = 0; u < units_; ++u) limits.push_back({UnitName(u), limit});
  return limits;
}

void World::Submit(int share, std::int64_t count, std::int32_t priority, int unit) {
  model::JobSpec spec;
  spec.id = next_id_++;
  spec.queue = "q";
  spec.share = ShareName(share);
  spec.priority = priority;
  spec.demand = {{UnitName(unit), count}};
  spec.created_at = now_;
  Apply(model::SubmitJob{std::move(spec)});
}

bool World::EndOldest() {
  if (running_.empty()) return false;
  const auto [id, attempt] = running_.front();
  running_.pop_front();
  Apply(model::AttemptEnded{id, attempt, model::AttemptOutcome::kSucceeded, ""});
  return true;
}

void World::End(model::JobId job, int attempt, model::AttemptOutcome outcome) {
  Apply(model::AttemptEnded{job, attempt, outcome, "killed by SIGTERM"});
}

void World::SetPool(std::int64_t pool) {
  Apply(model::PutServiceEnvironment{{.name = "se", .capacity_limits = PerUnit(pool)}});
}

void World::Apply(const model::Event& e) {
  decisions_.clear();
  Status s = engine_.Apply(e, now_, &decisions_);
  if (!s.ok()) {
    std::fprintf(stderr, "benchmark event failed: %s\n", s.ToString().c_str());
    std::abort();
  }
  Absorb();
}

std::int64_t World::TimedApply(const model::Event& e) {
  decisions_.clear();
  const auto start = std::chrono::steady_clock::now();
  Status s = engine_.Apply(e, now_, &decisions_);
  const auto end = std::chrono::steady_clock::now();
  if (!s.ok()) std::abort();
  Absorb();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count();
}

void World::Absorb() {
  for (const model::Decision& d : decisions_) {
    if (const auto* x = std::get_if<model::Dispatch>(&d)) {
      running_.emplace_back(x->job, x->attempt);
      ++dispatches_;
    }
  }
}

double Percentile(std::vector<std::int64_t>& samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const auto rank = static_cast<std::size_t>(p / 100.0 * static_cast<double>(samples.size() - 1));
  return static_cast<double>(samples[rank]);
}

}  // namespace allot::bench
