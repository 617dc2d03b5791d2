// The clusters the readers build (Philly, Kueue) and the policies derived from a cluster.

#include "sim/cluster.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "model/event.h"
#include "sim/trace.h"

namespace allot::sim {
namespace {

using model::CapacityLimit;
using model::kUnlimitedBorrow;
using model::QuotaShareConfig;
using model::SharingStrategy;

std::string DataDir() {
  const std::string file = __FILE__;
  return file.substr(0, file.find_last_of('/')) + "/data/";
}

// Puts the whole cluster into an engine: the engine's own checks are the ones that matter.
Status Load(const Cluster& c, engine::VictimOrder order = engine::VictimOrder::kLeastWorkLost) {
  engine::Engine e(engine::EngineOptions{.victim_order = order});
  model::Decisions out;
  for (const auto& env : c.environments) {
    ALLOT_RETURN_IF_ERROR(e.Apply(model::PutServiceEnvironment{env}, 0, &out));
  }
  for (const auto& q : c.queues) ALLOT_RETURN_IF_ERROR(e.Apply(model::PutJobQueue{q}, 0, &out));
  for (const auto& s : c.shares) ALLOT_RETURN_IF_ERROR(e.Apply(model::PutQuotaShare{s}, 0, &out));
  return Status::Ok();
}

TraceJob OnShare(const std::string& share) {
  TraceJob j;
  j.share = share;
  j.queue = "philly";
  j.unit = "gpu";
  return j;
}

Result<Cluster> Philly(const std::string& vc_csv, const Trace& trace,
                       const PhillyOptions& options = {}, std::int64_t gpus_per_node = 8) {
  std::istringstream in(vc_csv);
  return PhillyCluster(in, "vc.csv", trace, options, gpus_per_node);
}

// ---------- Philly ----------

TEST(PhillyClusterTest, OneShareLimitPerVcOfTheTrace) {
  Trace t;
  for (const char* vc : {"b", "a", "zero", "b", "unlisted"}) t.jobs.push_back(OnShare(vc));
  Result<Cluster> c = Philly("vc,node num\na,2\nb,3\nzero,0\nunused,100\n", t);
  ASSERT_TRUE(c.ok()) << c.status().ToString();

  ASSERT_EQ(c->environments.size(), 1U);
  EXPECT_EQ(c->environments[0].name, "philly-env");
  EXPECT_EQ(c->environments[0].capacity_limits, (std::vector<CapacityLimit>{{"gpu", 42}}));
  ASSERT_EQ(c->queues.size(), 1U);
  EXPECT_EQ(c->queues[0].name, "philly");
  EXPECT_EQ(c->queues[0].service_environment, "philly-env");

  // Sorted by name; "unused" is not in the trace; "zero" and "unlisted" get the smallest limit
  // the engine takes, one GPU, and live on borrowing.
  ASSERT_EQ(c->shares.size(), 4U);
  const std::vector<std::string> names = {"a", "b", "unlisted", "zero"};
  const std::vector<std::int64_t> limits = {16, 24, 1, 1};
  for (std::size_t i = 0; i < names.size(); ++i) {
    const QuotaShareConfig& s = c->shares[i];
    EXPECT_EQ(s.name, names[i]);
    EXPECT_EQ(s.queue, "philly");
    EXPECT_EQ(s.capacity_limits, (std::vector<CapacityLimit>{{"gpu", limits[i]}})) << s.name;
    EXPECT_EQ(s.strategy, SharingStrategy::kLendAndBorrow);
    EXPECT_EQ(s.borrow_limit, kUnlimitedBorrow);
    EXPECT_TRUE(s.in_share_preemption);
  }
  EXPECT_TRUE(Load(*c).ok()) << Load(*c).ToString();
}

TEST(PhillyClusterTest, OptionsAndGpusPerNode) {
  Trace t;
  t.jobs.push_back(OnShare("a"));
  Result<Cluster> c = Philly("vc,node num\r\na,2\r\n", t, {.queue = "q", .unit = "u"}, 4);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->environments[0].name, "q-env");
  EXPECT_EQ(c->environments[0].capacity_limits, (std::vector<CapacityLimit>{{"u", 8}}));
  EXPECT_EQ(c->queues[0].name, "q");
  EXPECT_EQ(c->shares[0].queue, "q");
  EXPECT_EQ(c->shares[0].capacity_limits, (std::vector<CapacityLimit>{{"u", 8}}));
}

TEST(PhillyClusterTest, Errors) {
  Trace t;
  t.jobs.push_back(OnShare("a"));
  EXPECT_EQ(Philly("vc,nodes\na,1\n", t).status().message(),
            "vc.csv: missing required column node num");
  EXPECT_EQ(Philly("vc,node num\na,-1\n", t).status().message(),
            "vc.csv:2: column node num: must be >= 0, got \"-1\"");
  EXPECT_EQ(Philly("vc,node num\na,1\na,2\n", t).status().message(),
            "vc.csv:3: column vc: VC a is listed twice");
  EXPECT_EQ(Philly("vc,node num\na,x\n", t).status().message(),
            "vc.csv:2: column node num: \"x\" is not a whole number");
  EXPECT_EQ(Philly("vc,node num\na,1\n", t, {}, 0).status().message(),
            "gpus per node must be at least 1, got 0");
}

TEST(PhillyClusterTest, FixturesGiveTheHeliosSizes) {
  std::ifstream trace_in(DataDir() + "philly-3000.csv");
  Result<Trace> t = ReadPhillyCsv(trace_in, "philly-3000.csv", {});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  std::ifstream vc_in(DataDir() + "philly_vc.csv");
  Result<Cluster> c = PhillyCluster(vc_in, "philly_vc.csv", *t, {});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  // The first 3,000 rows use all 11 VCs the Helios file sizes: 352 nodes x 8 GPUs.
  ASSERT_EQ(c->shares.size(), 11U);
  EXPECT_EQ(c->environments[0].capacity_limits, (std::vector<CapacityLimit>{{"gpu", 2816}}));
  EXPECT_EQ(c->shares[0].name, "0e4a51");
  EXPECT_EQ(c->shares[0].capacity_limits, (std::vector<CapacityLimit>{{"gpu", 256}}));
  EXPECT_EQ(c->shares[10].name, "ee9e8c");
  EXPECT_EQ(c->shares[10].capacity_limits, (std::vector<CapacityLimit>{{"gpu", 512}}));
  EXPECT_TRUE(Load(*c).ok()) << Load(*c).ToString();
}

TEST(PhillyClusterTest, FullTraceIfPresent) {
  const std::string path = "/work/shared/data/traces/philly-pollux/philly.csv";
  std::ifstream trace_in(path);
  if (!trace_in) GTEST_SKIP() << path << " is not here";
  Result<Trace> t = ReadPhillyCsv(trace_in, "philly.csv", {});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  std::ifstream vc_in(DataDir() + "philly_vc.csv");
  Result<Cluster> c = PhillyCluster(vc_in, "philly_vc.csv", *t, {});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  // 15 VCs: the 11 of the Helios file (2,816 GPUs) and 4 it does not list, at one GPU each.
  ASSERT_EQ(c->shares.size(), 15U);
  EXPECT_EQ(c->environments[0].capacity_limits, (std::vector<CapacityLimit>{{"gpu", 2820}}));
  int unlisted = 0;
  for (const QuotaShareConfig& s : c->shares) unlisted += s.capacity_limits[0].max_capacity == 1;
  EXPECT_EQ(unlisted, 4);
  EXPECT_TRUE(Load(*c).ok()) << Load(*c).ToString();
}

// ---------- Kueue ----------

TEST(KueueClusterTest, BaselineIsFiveCohortsOfSixQueues) {
  Result<Generated> g = GenerateKueue("", "baseline");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Cluster& c = g->cluster;
  ASSERT_EQ(c.environments.size(), 5U);
  ASSERT_EQ(c.queues.size(), 5U);
  ASSERT_EQ(c.shares.size(), 30U);
  for (int i = 0; i < 5; ++i) {
    const std::string queue = "cohort-" + std::to_string(i);
    const auto u = static_cast<std::size_t>(i);
    EXPECT_EQ(c.environments[u].name, queue + "-env");
    EXPECT_EQ(c.environments[u].capacity_limits, (std::vector<CapacityLimit>{{"cpu", 120}}));
    EXPECT_EQ(c.queues[u].name, queue);
    EXPECT_EQ(c.queues[u].service_environment, queue + "-env");
    for (int j = 0; j < 6; ++j) {
      const QuotaShareConfig& s = c.shares[u * 6 + static_cast<std::size_t>(j)];
      EXPECT_EQ(s.queue, queue);
      EXPECT_EQ(s.name, "cq-" + std::to_string(j));
      EXPECT_EQ(s.capacity_limits, (std::vector<CapacityLimit>{{"cpu", 20}}));
      EXPECT_EQ(s.strategy, SharingStrategy::kLendAndBorrow);
      EXPECT_EQ(s.borrow_limit, 500);  // borrowingLimit 100 of nominalQuota 20
      EXPECT_TRUE(s.in_share_preemption);
    }
  }
  EXPECT_TRUE(Load(c).ok()) << Load(c).ToString();
}

TEST(KueueClusterTest, BorrowingLimitAndPreemptionVariants) {
  Result<Generated> g = GenerateKueue(R"(
cohorts:
- className: c
  count: 1
  queuesSets:
  - {className: none, count: 1, nominalQuota: 3}
  - {className: third, count: 1, nominalQuota: 3, borrowingLimit: 1,
     withinClusterQueue: LowerOrNewerEqualPriority, reclaimWithinCohort: Never}
  - {className: zero, count: 2, nominalQuota: 7, borrowingLimit: 0, withinClusterQueue: Never}
)",
                                      "v.yaml", "gpu");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Cluster& c = g->cluster;
  EXPECT_EQ(c.environments[0].capacity_limits, (std::vector<CapacityLimit>{{"gpu", 20}}));
  ASSERT_EQ(c.shares.size(), 4U);
  EXPECT_EQ(c.shares[0].name, "none-0");
  EXPECT_EQ(c.shares[0].borrow_limit, kUnlimitedBorrow);
  EXPECT_FALSE(c.shares[0].in_share_preemption);
  EXPECT_EQ(c.shares[1].name, "third-1");
  EXPECT_EQ(c.shares[1].borrow_limit, 33);  // 1/3 rounds down to 33 %
  EXPECT_FALSE(c.shares[1].in_share_preemption);
  EXPECT_EQ(c.shares[2].name, "zero-2");
  EXPECT_EQ(c.shares[3].name, "zero-3");
  EXPECT_EQ(c.shares[3].borrow_limit, 0);
  EXPECT_TRUE(g->trace.jobs.empty());
  EXPECT_TRUE(Load(c).ok()) << Load(c).ToString();
}

// ---------- policies ----------

Cluster Mixed() {
  Cluster c;
  c.environments.push_back({"env", {{"gpu", 10}}});
  model::JobQueueConfig q;
  q.name = "q";
  q.service_environment = "env";
  c.queues.push_back(q);
  QuotaShareConfig reserve{.queue = "q", .name = "r", .capacity_limits = {{"gpu", 4}}};
  QuotaShareConfig lend = reserve;
  lend.name = "l";
  lend.strategy = SharingStrategy::kLend;
  lend.in_share_preemption = true;
  QuotaShareConfig borrow = reserve;
  borrow.name = "b";
  borrow.strategy = SharingStrategy::kLendAndBorrow;
  borrow.borrow_limit = 50;
  QuotaShareConfig unlimited = borrow;
  unlimited.name = "u";
  unlimited.borrow_limit = kUnlimitedBorrow;
  c.shares = {reserve, lend, borrow, unlimited};
  return c;
}

struct ShareShape {
  SharingStrategy strategy;
  std::int64_t borrow_limit;
  bool in_share_preemption;
};

void ExpectShapes(const Policy& p, const std::vector<ShareShape>& expected) {
  ASSERT_EQ(p.cluster.shares.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const QuotaShareConfig& s = p.cluster.shares[i];
    EXPECT_EQ(s.strategy, expected[i].strategy) << p.name << " " << s.name;
    EXPECT_EQ(s.borrow_limit, expected[i].borrow_limit) << p.name << " " << s.name;
    EXPECT_EQ(s.in_share_preemption, expected[i].in_share_preemption) << p.name << " " << s.name;
    EXPECT_EQ(s.capacity_limits, (std::vector<CapacityLimit>{{"gpu", 4}}));
  }
  EXPECT_EQ(p.cluster.environments.size(), 1U);
  EXPECT_EQ(p.cluster.queues.size(), 1U);
  EXPECT_TRUE(Load(p.cluster, p.victim_order).ok()) << p.name << ": " << Load(p.cluster).ToString();
}

TEST(DerivePolicyTest, Configured) {
  Result<Policy> p = DerivePolicy(Mixed(), "configured");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->name, "configured");
  EXPECT_EQ(p->victim_order, engine::VictimOrder::kLeastWorkLost);
  ExpectShapes(*p, {{SharingStrategy::kReserve, kUnlimitedBorrow, false},
                    {SharingStrategy::kLend, kUnlimitedBorrow, true},
                    {SharingStrategy::kLendAndBorrow, 50, false},
                    {SharingStrategy::kLendAndBorrow, kUnlimitedBorrow, false}});
}

TEST(DerivePolicyTest, ReserveMakesStaticPartitions) {
  Result<Policy> p = DerivePolicy(Mixed(), "reserve");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->name, "reserve");
  EXPECT_EQ(p->victim_order, engine::VictimOrder::kLeastWorkLost);
  // The engine takes a borrow limit only with LEND_AND_BORROW, so it is cleared.
  ExpectShapes(*p, {{SharingStrategy::kReserve, kUnlimitedBorrow, false},
                    {SharingStrategy::kReserve, kUnlimitedBorrow, true},
                    {SharingStrategy::kReserve, kUnlimitedBorrow, false},
                    {SharingStrategy::kReserve, kUnlimitedBorrow, false}});
}

TEST(DerivePolicyTest, KueueAndAllotBorrowEverywhere) {
  const std::vector<ShareShape> shapes = {
      {SharingStrategy::kLendAndBorrow, kUnlimitedBorrow, false},
      {SharingStrategy::kLendAndBorrow, kUnlimitedBorrow, true},
      {SharingStrategy::kLendAndBorrow, 50, false},
      {SharingStrategy::kLendAndBorrow, kUnlimitedBorrow, false}};
  Result<Policy> kueue = DerivePolicy(Mixed(), "kueue");
  ASSERT_TRUE(kueue.ok());
  EXPECT_EQ(kueue->name, "kueue");
  EXPECT_EQ(kueue->victim_order, engine::VictimOrder::kNewestFirst);
  ExpectShapes(*kueue, shapes);

  Result<Policy> allot = DerivePolicy(Mixed(), "allot");
  ASSERT_TRUE(allot.ok());
  EXPECT_EQ(allot->name, "allot");
  EXPECT_EQ(allot->victim_order, engine::VictimOrder::kLeastWorkLost);
  ExpectShapes(*allot, shapes);
}

TEST(DerivePolicyTest, UnknownKind) {
  Result<Policy> p = DerivePolicy(Mixed(), "fifo");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status().message(),
            "unknown policy \"fifo\" (allowed: configured, reserve, kueue, allot)");
  EXPECT_FALSE(DerivePolicy(Mixed(), "").ok());
  EXPECT_FALSE(DerivePolicy(Mixed(), "Kueue").ok());
}

}  // namespace
}  // namespace allot::sim
