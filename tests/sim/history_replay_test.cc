// What an exported production history needs of the simulator (issue 12): each job's own stop
// time, its priority changes over time, one row per job (`allot sim --jobs`), and the trace CSV
// written and read back unchanged.

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "sim/cluster.h"
#include "sim/report.h"
#include "sim/simulate.h"
#include "sim/trace.h"

namespace allot::sim {
namespace {

constexpr Duration kMinute = 60 * 1000;

Cluster MakeCluster(std::int64_t pool,
                    const std::vector<std::pair<std::string, std::int64_t>>& shares) {
  Cluster c;
  c.environments.push_back({"env", {{"gpu", pool}}, model::State::kEnabled});
  c.queues.push_back({"q", "env", model::State::kEnabled, {}});
  for (const auto& [name, limit] : shares) {
    model::QuotaShareConfig q;
    q.queue = "q";
    q.name = name;
    q.capacity_limits = {{"gpu", limit}};
    q.strategy = model::SharingStrategy::kLendAndBorrow;
    c.shares.push_back(q);
  }
  return c;
}

TraceJob MakeJob(std::string name, Duration submit, Duration duration, const std::string& share,
                 std::int32_t priority = 0) {
  TraceJob j;
  j.name = std::move(name);
  j.submit = submit;
  j.duration = duration;
  j.share = share;
  j.unit = "gpu";
  j.priority = priority;
  return j;
}

SimOptions Options() {
  SimOptions o;
  o.checkpoint_interval = 0;
  o.restart_overhead = 0;
  o.stop_grace = kMinute / 2;
  o.check_invariants = true;
  return o;
}

RunResult Replay(const Trace& t, const Cluster& c) {
  Result<RunResult> r = Simulate(t, Policy{"test", c}, Options());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r.value() : RunResult{};
}

TEST(HistoryReplay, APriorityChangeReordersTheWaitingJobs) {
  // One GPU. "a" runs 0-10 min; "b" (1 min) and "c" (2 min) wait at priority 0. Without the
  // change b starts first at 10 min; c's priority becomes 5 at 3 min, so c starts at 10 and b
  // at 20.
  Trace t{{MakeJob("a", 0, 10 * kMinute, "s"), MakeJob("b", kMinute, 10 * kMinute, "s"),
           MakeJob("c", 2 * kMinute, 10 * kMinute, "s")}};
  const Cluster c = MakeCluster(1, {{"s", 1}});
  RunResult plain = Replay(t, c);
  ASSERT_EQ(plain.jobs.size(), 3u);
  EXPECT_DOUBLE_EQ(plain.jobs[1].first_start, 600);
  EXPECT_DOUBLE_EQ(plain.jobs[2].first_start, 1200);
  t.jobs[2].priority_changes = {{kMinute, 5}};
  RunResult changed = Replay(t, c);
  EXPECT_DOUBLE_EQ(changed.jobs[2].first_start, 600);
  EXPECT_DOUBLE_EQ(changed.jobs[1].first_start, 1200);
  EXPECT_EQ(changed.jobs[1].status, "SUCCEEDED");
}

TEST(HistoryReplay, AJobsOwnStopTimeDecidesWhenItsPreemptorStarts) {
  // Pool 2; "b" borrows a's GPU from 0; a's job at 5 min reclaims it. A job that exits at
  // SIGTERM frees it at once; one that uses the 30 s grace frees it at 5.5 min.
  Trace t{{MakeJob("b1", 0, 60 * kMinute, "b"), MakeJob("b2", 0, 60 * kMinute, "b"),
           MakeJob("a1", 5 * kMinute, 10 * kMinute, "a")}};
  const Cluster c = MakeCluster(2, {{"a", 1}, {"b", 1}});
  RunResult slow = Replay(t, c);
  EXPECT_DOUBLE_EQ(slow.jobs[2].first_start, 330);
  t.jobs[0].stop = 0;
  t.jobs[1].stop = 0;
  RunResult fast = Replay(t, c);
  EXPECT_DOUBLE_EQ(fast.jobs[2].first_start, 300);
  // The victim's row: two attempts, one preemption, five minutes of work lost.
  int victims = 0;
  for (const JobResult& j : fast.jobs) {
    if (j.preemptions == 0) continue;
    ++victims;
    EXPECT_EQ(j.attempts, 2);
    EXPECT_NEAR(j.lost_instance_hours, 5.0 / 60, 1e-9);
  }
  EXPECT_EQ(victims, 1);
}

TEST(HistoryReplay, JobRowsNameUnfinishedJobsAndTheTextEndsWithTheTradeOff) {
  // "big" needs 2 GPUs of a pool of 1: it never starts.
  Trace t{{MakeJob("small", 0, kMinute, "s"), MakeJob("big", 0, kMinute, "s")}};
  t.jobs[1].count = 2;
  const Cluster c = MakeCluster(1, {{"s", 1}});
  ReportInput in;
  in.trace = "t";
  in.runs.push_back(Replay(t, c));
  in.runs.push_back(Replay(t, c));
  in.runs[1].policy = "other";
  ASSERT_EQ(in.runs[0].jobs.size(), 2u);
  EXPECT_EQ(in.runs[0].jobs[1].status, "UNFINISHED");
  std::ostringstream csv;
  WriteJobsCsv(in, csv);
  EXPECT_NE(csv.str().find("test,2,big,,s,0.000,,,UNFINISHED,0,0,"), std::string::npos)
      << csv.str();
  std::ostringstream text;
  WriteText(in, text);
  EXPECT_NE(text.str().find("Unfinished under test (1): big"), std::string::npos) << text.str();
  std::string last = text.str();
  last.pop_back();
  last = last.substr(last.rfind('\n') + 1);
  EXPECT_EQ(last.rfind("Trade-off vs test: other util +0.0 pts, p99 wait", 0), 0u) << last;
}

TEST(HistoryReplay, TraceCsvWritesAndReadsBackTheNewColumns) {
  Trace t{{MakeJob("a", 0, 1500, "s", 3), MakeJob("b", 2001, 60 * kMinute, "s")}};
  t.jobs[0].stop = 250;
  t.jobs[0].priority_changes = {{1000, 7}, {2500, 1}};
  std::ostringstream out;
  WriteAllotCsv(t, out);
  std::istringstream in(out.str());
  Result<Trace> back = ReadAllotCsv(in, "written");
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << out.str();
  ASSERT_EQ(back->jobs.size(), 2u);
  EXPECT_EQ(back->jobs[0].stop, std::optional<Duration>(250));
  EXPECT_EQ(back->jobs[0].priority_changes, t.jobs[0].priority_changes);
  EXPECT_EQ(back->jobs[0].duration, 1500);
  EXPECT_EQ(back->jobs[1].submit, 2001);
  EXPECT_FALSE(back->jobs[1].stop.has_value());
  EXPECT_EQ(back->jobs[0].name, "a");
}

TEST(HistoryReplay, BadPriorityChangesAreRefusedNamingTheColumn) {
  for (const char* bad : {"5", "1:10000", "2:1;1:2", "x:1"}) {
    std::istringstream in(
        std::string("submit_s,duration_s,instance_type,instance_count,share,priority,"
                    "priority_changes\n0,1,gpu,1,s,0,") +
        bad + "\n");
    Result<Trace> t = ReadAllotCsv(in, "bad.csv");
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_NE(t.status().message().find("priority_changes"), std::string::npos)
        << t.status().message();
  }
}

}  // namespace
}  // namespace allot::sim
