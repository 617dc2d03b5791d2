#include "engine/support/property_suite.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>

namespace allot::testing {

namespace {

constexpr int kMaxReportedFailures = 3;

unsigned long long Ull(std::uint64_t v) { return static_cast<unsigned long long>(v); }
long long Ll(std::int64_t v) { return static_cast<long long>(v); }

}  // namespace

void CheckEverySeed(const PropertySuite& suite) {
  std::uint64_t first = suite.first_seed;
  std::uint64_t last = suite.last_seed;
  if (const char* one = std::getenv("ALLOT_PROPERTY_SEED")) {
    first = last = std::strtoull(one, nullptr, 10);
  }
  std::printf("%s: seeds %llu..%llu\n", suite.name, Ull(first), Ull(last));
  int failures = 0;
  std::int64_t events = 0;
  std::int64_t preemptions = 0;
  std::array<std::int64_t, 3> victims = {};
  for (std::uint64_t seed = first; seed <= last && failures < kMaxReportedFailures; ++seed) {
    const ScenarioResult r = RunScenario(seed, suite.options);
    events += r.events;
    preemptions += r.preemptions;
    for (std::size_t i = 0; i < victims.size(); ++i) victims[i] += r.victims[i];
    if (first == last) std::printf("%s", r.log.c_str());
    if (suite.progress_every != 0 && seed % suite.progress_every == 0) {
      std::printf("  ... seed %llu\n", Ull(seed));
    }
    if (r.error.empty()) continue;
    ++failures;
    ADD_FAILURE() << "seed " << seed << ": " << r.error << "\nevent/decision log:\n" << r.log;
  }
  std::printf(
      "%lld events, %lld preemptions; victims: %lld reclaim, %lld in-share, %lld "
      "limit-lowered\n",
      Ll(events), Ll(preemptions), Ll(victims[0]), Ll(victims[1]), Ll(victims[2]));
  if (first != last) {
    EXPECT_GT(preemptions, suite.min_preemptions) << "the scenarios hardly ever preempt";
  }
}

void CheckReplay(const PropertySuite& suite) {
  ScenarioOptions options = suite.options;
  options.check = false;
  std::int64_t decisions = 0;
  for (std::uint64_t seed = 1; seed <= suite.replay_seeds; ++seed) {
    const ScenarioResult a = RunScenario(seed, options);
    const ScenarioResult b = RunScenario(seed, options);
    ASSERT_EQ(a.transcript, b.transcript) << "seed " << seed << " replayed differently";
    decisions += a.decisions;
  }
  EXPECT_GT(decisions, 0);
}

}  // namespace allot::testing
