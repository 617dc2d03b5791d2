// The benchmarks' worlds at their largest sizes are worlds the engine accepts. The rules bound
// capacities (model/rules.h); a benchmark built past them aborts in `make bench`, which no other
// test runs (it did once: AdmitAll at 1M asked for 4M instances of one type).

#include <gtest/gtest.h>

#include "bench/bench_world.h"
#include "model/rules.h"

namespace allot::bench {
namespace {

TEST(BenchWorld, AdmitAllAtOneMillionWaitingFitsTheCapacityRules) {
  const std::int64_t waiting = 1'000'000;
  const int units = UnitsFor(waiting * 5 / 2);
  ASSERT_EQ(units, 3);
  World world({.shares = 20, .pool = 0, .share_limit = waiting, .strategy = {}, .units = units});
  for (int u = 0; u < units; ++u) world.Submit(u, 4, 0, u);
  world.SetPool(std::min(waiting * 4, model::rules::kMaxCapacity));
  EXPECT_EQ(world.dispatches(), units);
}

TEST(BenchWorld, UnitsForRoundsUpToWholeInstanceTypes) {
  EXPECT_EQ(UnitsFor(0), 1);
  EXPECT_EQ(UnitsFor(model::rules::kMaxCapacity), 1);
  EXPECT_EQ(UnitsFor(model::rules::kMaxCapacity + 1), 2);
  EXPECT_EQ(UnitName(0), kUnit);
  EXPECT_NE(UnitName(1), UnitName(2));
}

TEST(BenchWorld, VictimChoiceAtOneHundredThousandRunningFitsTheCapacityRules) {
  const std::int64_t borrowed = 100'000 * 5 / 2;
  World world({.shares = 2, .pool = borrowed, .limits = {1, borrowed}});
  world.Submit(0, 4);
  EXPECT_EQ(world.dispatches(), 1);
}

TEST(BenchWorld, SteadyAndDecisionWorldsAreAccepted) {
  World world({.shares = 20, .pool = 10'000, .share_limit = 500, .in_share_preemption = true});
  world.Submit(0, 1);
  EXPECT_EQ(world.dispatches(), 1);
  EXPECT_TRUE(world.EndOldest());
}

}  // namespace
}  // namespace allot::bench
