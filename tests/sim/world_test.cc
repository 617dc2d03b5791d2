// The simulated executor and the meter on small worlds whose figures can be worked out by hand:
// checkpoints and lost work, restart overhead, reclaim latency, shortfall, idle-while-waiting,
// the two victim orders, rejected submissions and the invariant checks.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/cluster.h"
#include "sim/invariants.h"
#include "sim/metrics.h"
#include "sim/simulate.h"

namespace allot::sim {
namespace {

constexpr Duration kMinute = 60 * 1000;

struct ShareDef {
  std::string name;
  std::int64_t limit;
  model::SharingStrategy strategy = model::SharingStrategy::kLendAndBorrow;
  bool in_share = false;
};

Cluster MakeCluster(std::int64_t pool, const std::vector<ShareDef>& shares) {
  Cluster c;
  c.environments.push_back({"env", {{"gpu", pool}}, model::State::kEnabled});
  c.queues.push_back({"q", "env", model::State::kEnabled, {}});
  for (const ShareDef& s : shares) {
    model::QuotaShareConfig q;
    q.queue = "q";
    q.name = s.name;
    q.capacity_limits = {{"gpu", s.limit}};
    q.strategy = s.strategy;
    q.in_share_preemption = s.in_share;
    c.shares.push_back(q);
  }
  return c;
}

TraceJob MakeJob(Duration submit, Duration duration, const std::string& share,
                 std::int64_t count = 1, std::int32_t priority = 0) {
  TraceJob j;
  j.submit = submit;
  j.duration = duration;
  j.share = share;
  j.unit = "gpu";
  j.count = count;
  j.priority = priority;
  return j;
}

SimOptions Quiet() {
  SimOptions o;
  o.checkpoint_interval = 30 * kMinute;
  o.restart_overhead = kMinute;
  o.stop_grace = kMinute / 2;
  o.check_invariants = true;  // in every build type
  return o;
}

RunResult MustSimulate(const Trace& t, const Cluster& c, const SimOptions& o,
                       engine::VictimOrder order = engine::VictimOrder::kLeastWorkLost) {
  Result<RunResult> r = Simulate(t, Policy{"test", c, order}, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r.value() : RunResult{};
}

const Figures& Share(const RunResult& r, const std::string& name) {
  for (const ShareResult& s : r.shares) {
    if (s.share == name) return s.figures;
  }
  ADD_FAILURE() << "no share " << name;
  static const Figures kNone;
  return kNone;
}

TEST(World, OneJobRunsForItsDurationAndFillsItsShare) {
  const Trace t{{MakeJob(0, 90 * kMinute, "a", 2)}};
  const RunResult r = MustSimulate(t, MakeCluster(2, {{"a", 2}}), Quiet());
  EXPECT_EQ(r.overall.succeeded, 1);
  EXPECT_DOUBLE_EQ(r.span_seconds, 90 * 60);
  EXPECT_DOUBLE_EQ(r.overall.used_instance_hours, 3.0);
  EXPECT_DOUBLE_EQ(r.overall.utilization, 1.0);
  EXPECT_DOUBLE_EQ(r.overall.wait.max, 0);
  EXPECT_DOUBLE_EQ(r.overall.completion.mean, 90 * 60);
  EXPECT_DOUBLE_EQ(r.overall.slowdown.mean, 1.0);
  EXPECT_GT(r.invariant_checks, 0);
}

TEST(World, ReclaimLosesTheWorkSinceTheLastCheckpointAndPaysTheRestart) {
  // Pool 2; a and b own one GPU each. b runs two 100-minute jobs from 0, the second on a's
  // idle GPU. Both checkpoint at 30 and 60. a submits at 70: one of b's jobs is reclaimed (equal
  // keys: the lower id, b1). It ends at 70.5 (30 s grace) having lost 10.5 minutes. a runs
  // 70.5-90.5; b1 resumes at 90.5 on a's GPU again, reloads for a minute and redoes its last 40
  // minutes: it ends at 131.5.
  const Trace t{{MakeJob(0, 100 * kMinute, "b"), MakeJob(0, 100 * kMinute, "b"),
                 MakeJob(70 * kMinute, 20 * kMinute, "a")}};
  const RunResult r = MustSimulate(t, MakeCluster(2, {{"a", 1}, {"b", 1}}), Quiet());
  const Figures& a = Share(r, "a");
  const Figures& b = Share(r, "b");
  EXPECT_EQ(r.overall.succeeded, 3);
  EXPECT_EQ(b.preemptions_reclaim, 1);
  EXPECT_EQ(b.preemptions_in_share, 0);
  EXPECT_DOUBLE_EQ(b.lost_instance_hours, 10.5 / 60);
  EXPECT_DOUBLE_EQ(b.restart_instance_hours, 1.0 / 60);
  EXPECT_DOUBLE_EQ(r.span_seconds, 131.5 * 60);
  EXPECT_DOUBLE_EQ(b.completion.max, 131.5 * 60);
  EXPECT_DOUBLE_EQ(a.wait.max, 30);
  // a was short of its own GPU while b borrowed it: from 70 to 70.5, one episode.
  EXPECT_EQ(a.reclaim_latency.count, 1);
  EXPECT_DOUBLE_EQ(a.reclaim_latency.max, 30);
  EXPECT_DOUBLE_EQ(a.guarantee_shortfall_instance_hours, 0.5 / 60);
  EXPECT_DOUBLE_EQ(r.overall.used_instance_hours, (111.5 + 100 + 20) / 60);
  // b borrowed a's GPU over [0, 70.5) and [90.5, 100); a lent it the same time.
  EXPECT_DOUBLE_EQ(b.borrowed_instance_hours, 80.0 / 60);
  EXPECT_DOUBLE_EQ(a.lent_instance_hours, 80.0 / 60);
  EXPECT_DOUBLE_EQ(b.lent_instance_hours, 0);
}

TEST(World, CheckpointAwareOrderLosesLessThanNewestFirst) {
  // b1 starts at 0 and checkpoints at 30 and 60; b2 starts at 20 (on a's GPU) and checkpoints
  // at 50. At 70 a reclaims one: least work lost takes b1 (10 minutes since its checkpoint),
  // newest-first takes b2 (20 minutes). Both end after the 30 s grace.
  const Trace t{{MakeJob(0, 100 * kMinute, "b"), MakeJob(20 * kMinute, 100 * kMinute, "b"),
                 MakeJob(70 * kMinute, 20 * kMinute, "a")}};
  const Cluster c = MakeCluster(2, {{"a", 1}, {"b", 1}});
  const RunResult aware = MustSimulate(t, c, Quiet(), engine::VictimOrder::kLeastWorkLost);
  const RunResult blind = MustSimulate(t, c, Quiet(), engine::VictimOrder::kNewestFirst);
  EXPECT_EQ(aware.victim_order, "least-work-lost");
  EXPECT_EQ(blind.victim_order, "newest-first");
  EXPECT_DOUBLE_EQ(Share(aware, "b").lost_instance_hours, 10.5 / 60);
  EXPECT_DOUBLE_EQ(Share(blind, "b").lost_instance_hours, 20.5 / 60);
}

TEST(World, CheckpointOnStopKeepsTheWork) {
  const Trace t{{MakeJob(0, 100 * kMinute, "b"), MakeJob(0, 100 * kMinute, "b"),
                 MakeJob(70 * kMinute, 20 * kMinute, "a")}};
  SimOptions o = Quiet();
  o.checkpoint_on_stop = true;
  const RunResult r = MustSimulate(t, MakeCluster(2, {{"a", 1}, {"b", 1}}), o);
  EXPECT_EQ(Share(r, "b").preemptions_reclaim, 1);
  EXPECT_DOUBLE_EQ(Share(r, "b").lost_instance_hours, 0);
  // Saved at 70.5 with 70.5 minutes done: resumes at 90.5, reloads, 29.5 left: ends at 121.
  EXPECT_DOUBLE_EQ(r.span_seconds, 121 * 60);
}

TEST(World, ReserveLeavesCapacityIdleWhileOthersWait) {
  // Static partitions: b's second job waits an hour while a's GPU sits idle.
  const Trace t{{MakeJob(0, 60 * kMinute, "b"), MakeJob(0, 60 * kMinute, "b")}};
  const Cluster c = MakeCluster(
      2, {{"a", 1, model::SharingStrategy::kReserve}, {"b", 1, model::SharingStrategy::kReserve}});
  const RunResult r = MustSimulate(t, c, Quiet());
  const Figures& b = Share(r, "b");
  EXPECT_DOUBLE_EQ(b.wait.p50, 0);
  EXPECT_DOUBLE_EQ(b.wait.max, 3600);
  EXPECT_EQ(b.wait_histogram[0], 1);  // < 1 s
  EXPECT_EQ(b.wait_histogram[5], 1);  // [1 h, 10 h)
  EXPECT_DOUBLE_EQ(b.idle_while_waiting_instance_hours, 1.0);
  EXPECT_DOUBLE_EQ(r.overall.idle_while_waiting_instance_hours, 1.0);
  EXPECT_DOUBLE_EQ(r.overall.utilization, 0.5);
  EXPECT_DOUBLE_EQ(b.utilization, 1.0);
  EXPECT_DOUBLE_EQ(b.guarantee_shortfall_instance_hours, 0);  // nobody borrowed
  EXPECT_DOUBLE_EQ(r.jain_index, 1.0);  // only b had demand, and got all it was entitled to

  // Lending removes the wait: the second job borrows a's idle GPU at once.
  const RunResult lend = MustSimulate(t, MakeCluster(2, {{"a", 1}, {"b", 1}}), Quiet());
  EXPECT_DOUBLE_EQ(Share(lend, "b").wait.max, 0);
  EXPECT_DOUBLE_EQ(lend.overall.idle_while_waiting_instance_hours, 0);
  EXPECT_DOUBLE_EQ(Share(lend, "b").borrowed_instance_hours, 1.0);
}

TEST(World, JainsIndexComparesTheServedFractionOfDemand) {
  // Static partitions: a's one job runs at once (served 1 of its demand); b's second job waits an
  // hour, so b is served 120 of 180 instance-minutes of demand (2/3). (1 + 2/3)^2 / (2 (1 + 4/9)).
  const Trace t{{MakeJob(0, 60 * kMinute, "a"), MakeJob(0, 60 * kMinute, "b"),
                 MakeJob(0, 60 * kMinute, "b")}};
  const Cluster c = MakeCluster(
      2, {{"a", 1, model::SharingStrategy::kReserve}, {"b", 1, model::SharingStrategy::kReserve}});
  const RunResult r = MustSimulate(t, c, Quiet());
  EXPECT_NEAR(r.jain_index, (25.0 / 9) / (2 * 13.0 / 9), 1e-12);
}

TEST(World, InSharePreemptionCountsSeparatelyFromReclaim) {
  const Trace t{{MakeJob(0, 60 * kMinute, "a"), MakeJob(10 * kMinute, 10 * kMinute, "a", 1, 9)}};
  const Cluster c = MakeCluster(1, {{"a", 1, model::SharingStrategy::kReserve, true}});
  const RunResult r = MustSimulate(t, c, Quiet());
  EXPECT_EQ(Share(r, "a").preemptions_in_share, 1);
  EXPECT_EQ(Share(r, "a").preemptions_reclaim, 0);
  EXPECT_EQ(r.overall.preemptions_in_share, 1);
  // Never checkpointed: the first attempt loses its 10.5 minutes of work.
  EXPECT_DOUBLE_EQ(r.overall.lost_instance_hours, 10.5 / 60);
}

TEST(World, GroupsGetTheirOwnWaits) {
  Trace t{{MakeJob(0, kMinute, "a"), MakeJob(0, kMinute, "a", 1, 0)}};
  t.jobs[0].group = "small";
  t.jobs[1].group = "large";
  const RunResult r = MustSimulate(t, MakeCluster(1, {{"a", 1}}), Quiet());
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups[0].group, "large");  // by name
  EXPECT_DOUBLE_EQ(r.groups[0].wait.max, 60);
  EXPECT_DOUBLE_EQ(r.groups[1].wait.max, 0);
}

TEST(World, SubmissionsTheEngineRefusesAreCountedNotRun) {
  const Trace t{{MakeJob(0, kMinute, "a"), MakeJob(0, kMinute, "nobody")}};
  const RunResult r = MustSimulate(t, MakeCluster(1, {{"a", 1}}), Quiet());
  EXPECT_EQ(r.overall.jobs, 1);
  EXPECT_EQ(r.overall.rejected, 1);
  EXPECT_EQ(r.overall.succeeded, 1);
}

TEST(World, AJobThatCanNeverFitStaysUnfinished) {
  const Trace t{{MakeJob(0, kMinute, "a", 5)}};
  const RunResult r = MustSimulate(t, MakeCluster(2, {{"a", 2}}), Quiet());
  EXPECT_EQ(r.overall.jobs, 1);
  EXPECT_EQ(r.overall.unfinished, 1);
  EXPECT_EQ(r.overall.wait.count, 0);
}

TEST(World, SameInputSameResult) {
  Trace t;
  for (int i = 0; i < 200; ++i) {
    t.jobs.push_back(MakeJob(i * kMinute / 3, (10 + (i * 37) % 90) * kMinute,
                             i % 3 == 0 ? "a" : "b", 1 + i % 2, (i * 7) % 3));
  }
  const Cluster c = MakeCluster(6, {{"a", 3, model::SharingStrategy::kLendAndBorrow, true},
                                    {"b", 3, model::SharingStrategy::kLendAndBorrow, true}});
  const RunResult x = MustSimulate(t, c, Quiet());
  const RunResult y = MustSimulate(t, c, Quiet());
  EXPECT_EQ(x.decisions, y.decisions);
  EXPECT_EQ(x.overall.lost_instance_hours, y.overall.lost_instance_hours);
  EXPECT_EQ(x.pool_usage, y.pool_usage);
  EXPECT_GT(x.overall.preemptions_reclaim + x.overall.preemptions_in_share, 0);
}

TEST(BucketSeries, WidensSoThatTheRunFitsAndKeepsTheMeans) {
  internal::BucketSeries s(1, 4);
  s.Add(0, 10'000, {2.0});  // 2 instances for 10 s: widths 1, 2, 4 s are too small
  EXPECT_EQ(s.width(), 4000);
  const std::vector<double> means = s.Means(0, 10'000);
  ASSERT_EQ(means.size(), 3u);  // [0,4) [4,8) [8,10)
  for (double m : means) EXPECT_DOUBLE_EQ(m, 2.0);
}

// ---------- the invariant checks themselves ----------

Status CheckWithHeld(const Cluster& c, const std::string& share, std::int64_t held) {
  const Trace none;
  internal::Meter meter(c, none, 10);
  engine::Engine engine;
  model::Decisions out;
  for (const auto& e : c.environments) (void)engine.Apply(model::PutServiceEnvironment{e}, 1, &out);
  for (const auto& q : c.queues) (void)engine.Apply(model::PutJobQueue{q}, 1, &out);
  for (const auto& s : c.shares) (void)engine.Apply(model::PutQuotaShare{s}, 1, &out);
  meter.AddHeld(meter.ShareIndex("q", share), meter.UnitIndex("gpu"), held);
  internal::InvariantChecker checker(c, meter, true, 0);
  return checker.Check(engine, 1);
}

TEST(InvariantChecker, CatchesEachBrokenInvariant) {
  const Status pool = CheckWithHeld(MakeCluster(1, {{"a", 1}}), "a", 2);
  EXPECT_NE(pool.message().find("invariant 1"), std::string::npos) << pool.ToString();

  Cluster capped = MakeCluster(10, {{"a", 1}});
  capped.shares[0].borrow_limit = 100;  // may borrow 1
  const Status cap = CheckWithHeld(capped, "a", 3);
  EXPECT_NE(cap.message().find("invariant 2"), std::string::npos) << cap.ToString();

  const Status lenders =
      CheckWithHeld(MakeCluster(4, {{"a", 1, model::SharingStrategy::kReserve}, {"b", 1}}), "b", 2);
  EXPECT_NE(lenders.message().find("invariant 3"), std::string::npos) << lenders.ToString();

  const Status books = CheckWithHeld(MakeCluster(4, {{"a", 2}}), "a", 1);
  EXPECT_NE(books.message().find("the engine says"), std::string::npos) << books.ToString();
}

}  // namespace
}  // namespace allot::sim
