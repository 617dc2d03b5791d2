#include "sim/support/random_replay.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/rng.h"
#include "sim/simulate.h"

namespace allot::sim::testing {

namespace {

constexpr Duration kSecond = 1000;
const char* const kUnits[] = {"gpu", "trn"};

Cluster RandomCluster(Rng& rng, int units) {
  Cluster c;
  const int shares = static_cast<int>(rng.Uniform(1, 4));
  std::vector<model::CapacityLimit> pool;
  for (int u = 0; u < units; ++u) pool.push_back({kUnits[u], 0});
  for (int i = 0; i < shares; ++i) {
    model::QuotaShareConfig s;
    s.queue = "q";
    s.name = "s" + std::to_string(i);
    for (int u = 0; u < units; ++u) {
      const std::int64_t limit = rng.Uniform(1, 6);
      s.capacity_limits.push_back({kUnits[u], limit});
      pool[static_cast<std::size_t>(u)].max_capacity += limit;
    }
    s.strategy = static_cast<model::SharingStrategy>(rng.Uniform(0, 2));
    if (s.strategy == model::SharingStrategy::kLendAndBorrow && rng.Chance(50)) {
      s.borrow_limit = rng.Uniform(0, 3) * 50;
    }
    s.in_share_preemption = rng.Chance(60);
    c.shares.push_back(s);
  }
  // Sometimes the pool is smaller than the shares' limits add up to.
  for (auto& p : pool)
    p.max_capacity = std::max<std::int64_t>(1, p.max_capacity - rng.Uniform(0, 2));
  c.environments.push_back({"env", pool, model::State::kEnabled});
  c.queues.push_back({"q", "env", model::State::kEnabled, {}});
  return c;
}

Trace RandomTrace(Rng& rng, const Cluster& c, int units) {
  Trace t;
  const int jobs = static_cast<int>(rng.Uniform(5, 80));
  Duration now = 0;
  for (int i = 0; i < jobs; ++i) {
    if (!rng.Chance(30)) now += rng.Uniform(0, 600) * kSecond;  // bursts share an instant
    TraceJob j;
    j.submit = now;
    j.duration = rng.Uniform(1, 3600) * kSecond;
    j.share = c.shares[static_cast<std::size_t>(
                           rng.Uniform(0, static_cast<std::int64_t>(c.shares.size()) - 1))]
                  .name;
    j.unit = kUnits[rng.Uniform(0, units - 1)];
    j.count = rng.Uniform(1, 4);
    j.priority = static_cast<std::int32_t>(rng.Uniform(0, 3));
    if (rng.Chance(30)) j.checkpoint_interval = rng.Uniform(0, 900) * kSecond;
    t.jobs.push_back(j);
  }
  return t;
}

}  // namespace

void RunRandomReplays(std::uint64_t first, std::uint64_t count) {
  // ALLOT_SIM_SEED=N replays only seed N (to debug a failure).
  const char* only = std::getenv("ALLOT_SIM_SEED");
  const std::uint64_t from = only ? std::strtoull(only, nullptr, 10) : first;
  const std::uint64_t last = only ? from : first + count - 1;
  std::int64_t preemptions = 0;
  for (std::uint64_t seed = from; seed <= last; ++seed) {
    Rng rng(seed);
    const int units = static_cast<int>(rng.Uniform(1, 2));
    const Cluster cluster = RandomCluster(rng, units);
    const Trace trace = RandomTrace(rng, cluster, units);
    SimOptions options;
    options.check_invariants = true;
    options.checkpoint_interval = rng.Uniform(0, 1800) * kSecond;
    options.stop_grace = rng.Chance(50) ? 0 : rng.Uniform(1, 120) * kSecond;
    options.restart_overhead = rng.Uniform(0, 120) * kSecond;
    options.checkpoint_on_stop = rng.Chance(20);
    for (engine::VictimOrder order :
         {engine::VictimOrder::kLeastWorkLost, engine::VictimOrder::kNewestFirst}) {
      const Result<RunResult> r = Simulate(trace, Policy{"random", cluster, order}, options);
      ASSERT_TRUE(r.ok()) << "seed " << seed << ": " << r.status().ToString();
      const Figures& all = r->overall;
      EXPECT_EQ(all.jobs + all.rejected, static_cast<std::int64_t>(trace.jobs.size()))
          << "seed " << seed;
      EXPECT_EQ(all.succeeded + all.failed + all.unfinished, all.jobs) << "seed " << seed;
      EXPECT_GT(r->invariant_checks, 0) << "seed " << seed;
      EXPECT_GE(all.lost_instance_hours, 0) << "seed " << seed;
      EXPECT_LE(all.utilization, 1.0 + 1e-9) << "seed " << seed;
      preemptions += all.preemptions_reclaim + all.preemptions_in_share;
    }
  }
  // The suite is only worth something if it preempts.
  if (only == nullptr) {
    EXPECT_GT(preemptions, static_cast<std::int64_t>(count) * 2);
  }
  std::printf("random replays: %llu seeds x 2 victim orders, %lld preemptions\n",
              static_cast<unsigned long long>(last - from + 1),
              static_cast<long long>(preemptions));
}

}  // namespace allot::sim::testing
