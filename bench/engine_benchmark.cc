// Engine benchmarks for the rows of DESIGN section 6. Each prints its figure as a counter:
//   admissions/s, p50/p99 latency of a single event, victim choice latency, bytes per job.
// Run with `make bench` (release build); docs/benchmarks.md records the results.

#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <memory>

#include "bench/bench_world.h"
#include "model/rules.h"

namespace allot::bench {
namespace {

constexpr int kShares = 20;

// Fills `world` with `waiting` jobs spread over the shares (round robin), sizes 1-4, and over
// `units` instance types (round robin too).
void FillWaiting(World& world, std::int64_t waiting, int units = 1) {
  for (std::int64_t i = 0; i < waiting; ++i) {
    world.Submit(static_cast<int>(i % kShares), 1 + (i / kShares) % 4, 0,
                 static_cast<int>(i % units));
  }
}

// Admissions in one pass: `waiting` jobs queued while the pool is 0, then capacity for all of
// them appears in one event and the pass admits every job. One instance type holds at most
// model::rules::kMaxCapacity instances, so at 1M waiting (2.5M instances) the jobs use three types.
void BM_AdmitAll(benchmark::State& state) {
  const std::int64_t waiting = state.range(0);
  const std::int64_t demand = waiting * 5 / 2;  // sizes 1-4 in turn: 2.5 instances a job
  const int units = UnitsFor(demand);
  std::int64_t admitted = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto world = std::make_unique<World>(WorldConfig{
        .shares = kShares, .pool = 0, .share_limit = waiting, .strategy = {}, .units = units});
    FillWaiting(*world, waiting, units);
    state.ResumeTiming();
    world->SetPool(std::min(waiting * 4, model::rules::kMaxCapacity));  // room for every job
    admitted += world->dispatches();
    state.PauseTiming();
    world.reset();
    state.ResumeTiming();
  }
  state.counters["admissions/s"] =
      benchmark::Counter(static_cast<double>(admitted), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AdmitAll)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

// Sustained admissions at depth: the pool is full, `waiting` jobs wait, and each event ends one
// attempt, which the pass refills with one admission (capacity turnover as in production).
void BM_SteadyAdmissions(benchmark::State& state) {
  const std::int64_t waiting = state.range(0);
  World world({.shares = kShares, .pool = 10'000, .share_limit = 500});
  FillWaiting(world, 10'000 + waiting);
  const std::int64_t before = world.dispatches();
  for (auto _ : state) {
    world.Advance(1);
    world.EndOldest();
  }
  state.counters["admissions/s"] = benchmark::Counter(
      static_cast<double>(world.dispatches() - before), benchmark::Counter::kIsRate);
  state.counters["waiting_left"] = static_cast<double>(world.engine().LiveJobs() - world.running());
}
BENCHMARK(BM_SteadyAdmissions)->Arg(10'000)->Iterations(5'000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SteadyAdmissions)->Arg(100'000)->Iterations(50'000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SteadyAdmissions)->Arg(1'000'000)->Iterations(200'000)->Unit(benchmark::kMicrosecond);

// Latency of the engine's decision after one event, at 100k waiting and 10k running: a mix of
// an attempt ending (admission follows), a submission, and a priority change.
void BM_DecisionLatency(benchmark::State& state) {
  World world({.shares = kShares, .pool = 10'000, .share_limit = 500, .in_share_preemption = true});
  FillWaiting(world, 110'000);
  std::vector<std::int64_t> samples;
  std::int64_t i = 0;
  for (auto _ : state) {
    world.Advance(1);
    const auto& running = world.running_attempts();
    switch (i++ % 3) {
      case 0: {
        const auto [id, attempt] = running.front();
        samples.push_back(world.TimedApply(
            model::AttemptEnded{id, attempt, model::AttemptOutcome::kSucceeded, ""}));
        break;
      }
      case 1: {
        // A job submitted below every waiting job's priority: it queues.
        model::JobSpec spec;
        spec.id = 10'000'000 + static_cast<model::JobId>(i);
        spec.queue = "q";
        spec.share = ShareName(static_cast<int>(i % kShares));
        spec.demand = {{kUnit, 1}};
        spec.created_at = world.now();
        samples.push_back(world.TimedApply(model::SubmitJob{std::move(spec)}));
        break;
      }
      default: {
        const auto [id, attempt] = running.back();
        samples.push_back(world.TimedApply(model::UpdateJobPriority{id, 0}));
        break;
      }
    }
  }
  state.counters["p50_us"] = Percentile(samples, 50) / 1000.0;
  state.counters["p99_us"] = Percentile(samples, 99) / 1000.0;
  state.counters["max_us"] = Percentile(samples, 100) / 1000.0;
}
BENCHMARK(BM_DecisionLatency)->Iterations(30'000)->Unit(benchmark::kMicrosecond);

// Victim choice with `running` candidates: share 0 (LEND_AND_BORROW, limit 1, unlimited
// borrowing) runs `running` jobs of 1-4 instances, all but one instance on capacity lent by
// share 1 (LEND). Share 1 then submits a job of `need` instances, which reclaims. Candidates
// differ in priority (0-3), size and checkpoint time, so every key of the victim order matters.
// Timed: that submission's Apply (victim search, fill-back, nomination, stops). Untimed: the
// victims stop and borrow again, so each iteration starts from the same picture.
void BM_VictimChoice(benchmark::State& state) {
  const std::int64_t running = state.range(0);
  const std::int64_t need = state.range(1);
  const std::int64_t borrowed = running * 5 / 2;
  World world({.shares = 2, .pool = borrowed, .limits = {1, borrowed}});
  for (std::int64_t i = 0; i < running; ++i) {
    world.Submit(0, 1 + i % 4, static_cast<std::int32_t>((i / 4) % 4));
  }
  std::int64_t n = 0;
  for (const auto& [id, attempt] : world.running_attempts()) {
    world.Apply(model::CheckpointObserved{id, attempt, world.now() - (n++ * 7919) % 100'000});
  }
  std::vector<std::int64_t> samples;
  std::int64_t total_victims = 0;
  for (auto _ : state) {
    world.Advance(1000);
    model::JobSpec spec;
    spec.id = 50'000'000 + static_cast<model::JobId>(samples.size());
    spec.queue = "q";
    spec.share = ShareName(1);
    spec.demand = {{kUnit, need}};
    spec.created_at = world.now();
    samples.push_back(world.TimedApply(model::SubmitJob{spec}));
    state.PauseTiming();
    std::vector<std::pair<model::JobId, int>> victims;
    for (const model::Decision& d : world.last_decisions()) {
      if (const auto* stop = std::get_if<model::Stop>(&d)) {
        victims.emplace_back(stop->job, stop->attempt);
      }
    }
    total_victims += static_cast<std::int64_t>(victims.size());
    for (const auto& [id, attempt] : victims) {
      world.End(id, attempt, model::AttemptOutcome::kFailed);  // the preemptor starts
    }
    world.End(spec.id, 1);  // preemptor done: the victims borrow again
    state.ResumeTiming();
  }
  state.counters["p50_us"] = Percentile(samples, 50) / 1000.0;
  state.counters["p99_us"] = Percentile(samples, 99) / 1000.0;
  state.counters["victims"] =
      static_cast<double>(total_victims) / static_cast<double>(samples.size());
  state.counters["running"] = static_cast<double>(world.running());
}
BENCHMARK(BM_VictimChoice)
    ->Args({1'000, 1})
    ->Args({10'000, 1})
    ->Args({100'000, 1})
    ->Args({100'000, 8})
    ->Args({100'000, 64})
    ->Iterations(300)
    ->Unit(benchmark::kMicrosecond);

// Heap bytes per waiting job (the payload lives in the store, not here).
void BM_BytesPerWaitingJob(benchmark::State& state) {
  const std::int64_t waiting = state.range(0);
  double per_job = 0;
  for (auto _ : state) {
    const std::size_t before = mallinfo2().uordblks;
    auto world =
        std::make_unique<World>(WorldConfig{.shares = kShares, .pool = 0, .share_limit = 100});
    FillWaiting(*world, waiting);
    const std::size_t after = mallinfo2().uordblks;
    per_job = static_cast<double>(after - before) / static_cast<double>(waiting);
  }
  state.counters["bytes/job"] = per_job;
}
BENCHMARK(BM_BytesPerWaitingJob)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace allot::bench

BENCHMARK_MAIN();
