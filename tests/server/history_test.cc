// The stored history's encodings (keys in time order, values read back as written) and the
// report and export computed from events and samples worked out by hand.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/history_codec.h"
#include "server/report.h"

namespace allot::server {
namespace {

constexpr Timestamp kT0 = 1'700'000'000'000;  // an instant in 2023
constexpr Duration kMin = 60'000;

JobEvent Event(JobEventType type, Timestamp at, const std::string& job, const std::string& share,
               std::int64_t count = 1) {
  JobEvent e;
  e.type = type;
  e.at = at;
  e.job = job;
  e.name = job + "-name";
  e.queue = "q";
  e.share = share;
  e.demand = {{"ml.m5.large", count}};
  return e;
}

TEST(HistoryCodec, JobEventsReadBackAsWrittenEscapesIncluded) {
  JobEvent e = Event(JobEventType::kPreempted, kT0 + 5, "j1", "team-a", 2);
  e.reason = "tab\there, newline\nthere, back\\slash";
  e.attempt = 3;
  e.preemptor = "j9";
  e.preemptor_share = "team-b";
  e.rule = "reclaim";
  e.victim_priority = 4;
  e.work_lost_when_chosen = 1234;
  e.chosen_at = kT0 + 1;
  e.work_lost = 5678;
  e.dispatched_at = kT0 - 100;
  const std::string key = JobEventKey(e.at, 42);
  Result<JobEvent> back = DecodeJobEvent(key, EncodeJobEvent(e));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, e);
  EXPECT_EQ(JobEventSequence(key), std::optional<std::uint64_t>(42));
  EXPECT_FALSE(DecodeJobEvent(key, "exploded\tjob=x").ok());
}

TEST(HistoryCodec, KeysSortByTime) {
  EXPECT_LT(JobEventKey(999, 7), JobEventKey(1000, 1));
  EXPECT_LT(JobEventKey(kT0, 1), JobEventBound(kT0 + 1));
  EXPECT_LE(JobEventBound(kT0), JobEventKey(kT0, 0));
  EXPECT_LT(UsageSampleKey(UsageResolution::kFine, 999, "zz"),
            UsageSampleKey(UsageResolution::kFine, 1000, "a"));
  EXPECT_LT(UsageSampleKey(UsageResolution::kFine, kT0 * 10, "a"),
            UsageSampleBound(UsageResolution::kFiveMinutes, 0));
}

TEST(HistoryCodec, UsageSamplesReadBackAsWritten) {
  UsageSample s{.resolution = UsageResolution::kFiveMinutes, .at = kT0, .queue = "q/with/slash"};
  s.points = {{"a", "ml.m5.large", 2, 1.5, 0, 0.25, 3}, {"b", "gpu", 1, 0, 0, 0, 0}};
  Result<UsageSample> back =
      DecodeUsageSample(UsageSampleKey(s.resolution, s.at, s.queue), EncodeUsageSample(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);
}

// Share a: one job dispatched at 1 min, preempted (chosen at 11, ended at 12 having lost 11
// instance-minutes), dispatched again at 13, RUNNING at 14, done at 23. Share b: a 2-instance
// job dispatched at 11 (submitted at 10), still running at the end (30 min).
ReportInput TwoShares() {
  ReportInput in;
  in.since = kT0;
  in.until = kT0 + 30 * kMin;
  std::vector<JobEvent>& ev = in.events;
  ev.push_back(Event(JobEventType::kSubmitted, kT0, "a1", "a"));
  JobEvent d = Event(JobEventType::kDispatched, kT0 + kMin, "a1", "a");
  d.attempt = 1;
  d.created_at = kT0;
  ev.push_back(d);
  ev.push_back(Event(JobEventType::kSubmitted, kT0 + 10 * kMin, "b1", "b", 2));
  JobEvent db = Event(JobEventType::kDispatched, kT0 + 11 * kMin, "b1", "b", 2);
  db.attempt = 1;
  db.created_at = kT0 + 10 * kMin;
  ev.push_back(db);
  JobEvent end1 = Event(JobEventType::kAttemptEnded, kT0 + 12 * kMin, "a1", "a");
  end1.attempt = 1;
  end1.dispatched_at = kT0 + kMin;
  ev.push_back(end1);
  JobEvent p = Event(JobEventType::kPreempted, kT0 + 12 * kMin, "a1", "a");
  p.attempt = 1;
  p.rule = "reclaim";
  p.chosen_at = kT0 + 11 * kMin;
  p.work_lost = 11 * kMin;
  ev.push_back(p);
  JobEvent d2 = Event(JobEventType::kDispatched, kT0 + 13 * kMin, "a1", "a");
  d2.attempt = 2;
  d2.created_at = kT0;
  ev.push_back(d2);
  JobEvent s2 = Event(JobEventType::kStarted, kT0 + 14 * kMin, "a1", "a");
  s2.attempt = 2;
  s2.dispatched_at = kT0 + 13 * kMin;
  ev.push_back(s2);
  JobEvent prio = Event(JobEventType::kPriority, kT0 + 15 * kMin, "a1", "a");
  prio.priority = 7;
  ev.push_back(prio);
  JobEvent end2 = Event(JobEventType::kAttemptEnded, kT0 + 23 * kMin, "a1", "a");
  end2.attempt = 2;
  end2.dispatched_at = kT0 + 13 * kMin;
  ev.push_back(end2);
  JobEvent done = Event(JobEventType::kEnded, kT0 + 23 * kMin, "a1", "a");
  done.status = "SUCCEEDED";
  ev.push_back(done);
  in.open.push_back({"q", "b", {{"ml.m5.large", 2}}, kT0 + 11 * kMin});
  // One fine sample every minute from 11 to 30: b borrows 1 that a lends.
  in.fine_step = kMin;
  for (Timestamp t = kT0 + 11 * kMin; t < in.until; t += kMin) {
    UsageSample s{.resolution = UsageResolution::kFine, .at = t, .queue = "q"};
    s.points = {{"a", "ml.m5.large", 1, 0, 0, 1, 0}, {"b", "ml.m5.large", 1, 2, 1, 0, 0}};
    in.samples.push_back(s);
  }
  return in;
}

const ShareReport& Find(const UsageReport& r, const std::string& share) {
  for (const ShareReport& s : r.shares) {
    if (s.share == share) return s;
  }
  ADD_FAILURE() << "no share " << share;
  static const ShareReport kNone;
  return kNone;
}

TEST(Report, FiguresFromEventsAndSamples) {
  ReportInput in = TwoShares();
  in.prices = std::map<std::string, double>{{"ml.m5.large", 0.5}};
  const UsageReport r = ComputeReport(in);
  ASSERT_EQ(r.shares.size(), 2u);
  const ShareReport& a = Find(r, "a");
  const ShareReport& b = Find(r, "b");
  EXPECT_DOUBLE_EQ(a.used_instance_hours, 21.0 / 60);      // 1-12 and 13-23
  EXPECT_DOUBLE_EQ(b.used_instance_hours, 2 * 19.0 / 60);  // open from 11 to 30
  EXPECT_DOUBLE_EQ(a.lost_instance_hours, 11.0 / 60);
  EXPECT_DOUBLE_EQ(a.restart_instance_hours, 1.0 / 60);  // 13 to 14
  EXPECT_EQ(a.preemptions.at("reclaim"), 1);
  EXPECT_EQ(a.waits, 1);  // the second dispatch is not a first start
  EXPECT_DOUBLE_EQ(a.wait_p50_seconds, 60);
  EXPECT_DOUBLE_EQ(b.wait_p99_seconds, 60);
  EXPECT_EQ(a.succeeded, 1);
  EXPECT_DOUBLE_EQ(b.borrowed_instance_hours, 19.0 / 60);
  EXPECT_DOUBLE_EQ(a.lent_instance_hours, 19.0 / 60);
  ASSERT_TRUE(a.cost.has_value());
  EXPECT_DOUBLE_EQ(*a.cost, 0.5 * 21.0 / 60);
  ASSERT_EQ(r.lending.size(), 1u);
  EXPECT_EQ(r.lending[0].borrower, "b");
  EXPECT_EQ(r.lending[0].lender, "a");
  EXPECT_DOUBLE_EQ(r.lending[0].instance_hours, 19.0 / 60);
  EXPECT_DOUBLE_EQ(*r.lending[0].cost, 0.5 * 19.0 / 60);
  EXPECT_TRUE(r.unpriced_units.empty());
}

TEST(Report, AWindowClipsAttemptsAndSamples) {
  ReportInput in = TwoShares();
  in.since = kT0 + 20 * kMin;
  const UsageReport r = ComputeReport(in);
  EXPECT_DOUBLE_EQ(Find(r, "a").used_instance_hours, 3.0 / 60);  // 20-23
  EXPECT_DOUBLE_EQ(Find(r, "b").borrowed_instance_hours, 10.0 / 60);
  EXPECT_EQ(Find(r, "a").preemptions.count("reclaim"), 0u);  // before the window
}

TEST(Report, AShareTheCallerMayNotDescribeIsLeftOutAndUnnamedInLending) {
  ReportInput in = TwoShares();
  in.visible = [](const std::string&, const std::string& share) { return share == "b"; };
  const UsageReport r = ComputeReport(in);
  ASSERT_EQ(r.shares.size(), 1u);
  EXPECT_EQ(r.shares[0].share, "b");
  ASSERT_EQ(r.lending.size(), 1u);
  EXPECT_EQ(r.lending[0].lender, kOtherShares);
}

TEST(Export, AJobsWorkStopAndPriorityChanges) {
  const ReportInput in = TwoShares();
  const Export e = ExportJobs(in.events, kT0, kT0 + 30 * kMin);
  EXPECT_EQ(e.unfinished, 1);  // b1 still runs
  ASSERT_EQ(e.jobs.size(), 1u);
  const ExportedJob& j = e.jobs[0];
  EXPECT_EQ(j.id, "a1");
  EXPECT_EQ(j.share, "a");
  EXPECT_EQ(j.unit, "ml.m5.large");
  EXPECT_EQ(j.submitted, kT0);
  // Attempts held 11 + 10 minutes; the first one's 11 minutes were lost.
  EXPECT_EQ(j.duration, 10 * kMin);
  EXPECT_EQ(j.stop, std::optional<Duration>(kMin));
  ASSERT_EQ(j.priority_changes.size(), 1u);
  EXPECT_EQ(j.priority_changes[0], (std::pair<Duration, std::int32_t>{15 * kMin, 7}));
}

}  // namespace
}  // namespace allot::server
