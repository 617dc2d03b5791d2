// Engine::WhatIf at 100k waiting and 10k running jobs (issue 12, section 3: p99 <= 50 ms): the
// what-if of a submission that preempts in-share, of one that waits, of a priority change and of
// a quota-share limit change. Each is computed on a copy of the engine's state (whatif.cc), so
// its cost is mostly the copy. Run: build/<release>/bench/whatif_benchmark; docs/benchmarks.md.

#include <benchmark/benchmark.h>
#include <time.h>

#include <chrono>

#include "bench/bench_world.h"

namespace allot::bench {
namespace {

constexpr int kShares = 20;

std::int64_t ThreadCpuNanos() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

model::Event Submission(model::JobId id, int share, std::int32_t priority, Timestamp now) {
  model::JobSpec spec;
  spec.id = id;
  spec.queue = "q";
  spec.share = ShareName(share);
  spec.priority = priority;
  spec.demand = {{kUnit, 1}};
  spec.created_at = now;
  return model::SubmitJob{std::move(spec)};
}

void BM_WhatIf(benchmark::State& state) {
  // 20 LEND_AND_BORROW shares of 500 with in-share preemption, a pool of 10,000: 110,000
  // one-instance jobs leave 10,000 running and 100,000 waiting.
  World world({.shares = kShares, .pool = 10'000, .share_limit = 500, .in_share_preemption = true});
  for (int i = 0; i < 110'000; ++i) world.Submit(i % kShares, 1);
  const engine::Engine& engine = world.engine();
  std::vector<std::int64_t> samples;  // wall time
  std::vector<std::int64_t> cpu;      // this thread's CPU time: what a loaded machine does not add
  std::vector<std::int64_t> by_kind[4];
  std::int64_t preempting = 0;
  std::int64_t i = 0;
  for (auto _ : state) {
    const int share = static_cast<int>(i % kShares);
    model::Event event;
    model::JobId subject = 0;
    switch (i % 4) {
      case 0:  // priority 9 against running priority 0: in-share preemption
        subject = 90'000'000 + i;
        event = Submission(subject, share, 9, world.now());
        break;
      case 1:  // priority 0 behind 5,000 others of its share: it waits
        subject = 90'000'000 + i;
        event = Submission(subject, share, 0, world.now());
        break;
      case 2:  // a waiting job raised above the running ones
        subject = world.running_attempts().back().first + 1 + static_cast<model::JobId>(i % 1000);
        event = model::UpdateJobPriority{subject, 9};
        break;
      default: {  // a share's limit lowered by 10
        model::QuotaShareConfig c;
        c.queue = "q";
        c.name = ShareName(share);
        c.capacity_limits = {{kUnit, 490}};
        c.strategy = model::SharingStrategy::kLendAndBorrow;
        c.borrow_limit = -1;
        c.in_share_preemption = true;
        event = model::PutQuotaShare{c};
        break;
      }
    }
    const auto began = std::chrono::steady_clock::now();
    const std::int64_t cpu_began = ThreadCpuNanos();
    Result<engine::WhatIfAnswer> answer = engine.WhatIf(event, world.now(), subject);
    cpu.push_back(ThreadCpuNanos() - cpu_began);
    samples.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now() - began)
                          .count());
    by_kind[i % 4].push_back(samples.back());
    if (!answer.ok()) state.SkipWithError(answer.status().ToString().c_str());
    for (const model::Decision& d : answer->decisions) {
      preempting += std::holds_alternative<model::Preemption>(d) ? 1 : 0;
    }
    benchmark::DoNotOptimize(answer);
    ++i;
  }
  state.counters["p50_ms"] = Percentile(samples, 50) / 1e6;
  state.counters["p99_ms"] = Percentile(samples, 99) / 1e6;
  state.counters["max_ms"] = Percentile(samples, 100) / 1e6;
  state.counters["cpu_p50_ms"] = Percentile(cpu, 50) / 1e6;
  state.counters["cpu_p99_ms"] = Percentile(cpu, 99) / 1e6;
  const char* kinds[] = {"p50_ms_preempting_submit", "p50_ms_waiting_submit", "p50_ms_priority",
                         "p50_ms_share_limit"};
  for (int k = 0; k < 4; ++k) state.counters[kinds[k]] = Percentile(by_kind[k], 50) / 1e6;
  state.counters["running"] = static_cast<double>(world.running());
  state.counters["live"] = static_cast<double>(engine.LiveJobs());
  state.counters["preemptions/whatif"] =
      static_cast<double>(preempting) / static_cast<double>(samples.size());
}
BENCHMARK(BM_WhatIf)->Iterations(200)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace allot::bench

BENCHMARK_MAIN();
