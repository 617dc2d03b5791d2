#include "bench/bench_world.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace allot::bench {

std::string ShareName(int i) { return "team-" + std::to_string(i); }

World::World(const WorldConfig& c) {
  Apply(model::PutServiceEnvironment{{.name = "se", .capacity_limits = {{kUnit, c.pool}}}});
  Apply(model::PutJobQueue{{.name = "q", .service_environment = "se"}});
  for (int i = 0; i < c.shares; ++i) {
    Apply(model::PutQuotaShare{
        {.queue = "q",
         .name = ShareName(i),
         .capacity_limits = {{kUnit, static_cast<std::size_t>(i) < c.limits.size()
                                         ? c.limits[static_cast<std::size_t>(i)]
                                         : c.share_limit}},
         .strategy = c.strategy,
         .in_share_preemption = c.in_share_preemption}});
  }
}

void World::Submit(int share, std::int64_t count, std::int32_t priority) {
  model::JobSpec spec;
  spec.id = next_id_++;
  spec.queue = "q";
  spec.share = ShareName(share);
  spec.priority = priority;
  spec.demand = {{kUnit, count}};
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
  Apply(model::PutServiceEnvironment{{.name = "se", .capacity_limits = {{kUnit, pool}}}});
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
