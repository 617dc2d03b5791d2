// The AWS Batch quota-management notebook scenario, end to end.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "engine/support/builders.h"
#include "model/decision.h"
#include "model/event.h"
#include "model/reason.h"

namespace allot::engine {
namespace {

using namespace model;  // NOLINT(build/namespaces)
using ::allot::testing::Environment;
using ::allot::testing::Job;
using ::allot::testing::Lines;
using ::allot::testing::MustApply;
using ::allot::testing::Only;
using ::allot::testing::Queue;
using ::allot::testing::Share;

constexpr char kG5[] = "ml.g5.xlarge";

// One event of a scenario and, when `check`, the exact decision lines it must produce.
struct Step {
  Event event;
  Timestamp now = 0;
  std::vector<std::string> expected;
  bool check = true;
};

// A step whose decisions another test asserts.
[[maybe_unused]]
Step Given(Event event, Timestamp now) { return {std::move(event), now, {}, false}; }

[[maybe_unused]]
void Play(Engine& engine, const std::vector<Step>& steps) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    SCOPED_TRACE(::testing::Message() << "step " << i << " at " << s.now << ": "
                                      << EventToString(s.event));
    const std::vector<std::string> got = Lines(MustApply(engine, s.event, s.now));
    if (s.check) {
      EXPECT_EQ(got, s.expected);
    }
  }
}

[[maybe_unused]]
Event Env(std::int64_t pool, State state = State::kEnabled) {
  return Environment("se", {{kG5, pool}}, state);
}
[[maybe_unused]]
Event Q() { return Queue("q", "se"); }

[[maybe_unused]]
Event Reserve(const std::string& name, std::int64_t limit, bool in_share = false) {
  return Share({.name = name, .limits = {{kG5, limit}}, .strategy = SharingStrategy::kReserve,
                .in_share_preemption = in_share});
}
[[maybe_unused]]
Event Lend(const std::string& name, std::int64_t limit, bool in_share = false) {
  return Share({.name = name, .limits = {{kG5, limit}}, .strategy = SharingStrategy::kLend,
                .in_share_preemption = in_share});
}
[[maybe_unused]]
Event LendBorrow(const std::string& name, std::int64_t limit, std::int64_t borrow = -1,
                 bool in_share = false) {
  return Share({.name = name, .limits = {{kG5, limit}},
                .strategy = SharingStrategy::kLendAndBorrow, .borrow_limit = borrow,
                .in_share_preemption = in_share});
}

// A job of `share` in queue "q" needing `n` x ml.g5.xlarge, created at `now`.
[[maybe_unused]]
Event J(JobId id, const std::string& share, std::int32_t priority, std::int64_t n,
        Timestamp now) {
  return Job({.id = id, .share = share, .priority = priority, .need = {{kG5, n}}}, now);
}

[[maybe_unused]]
Event Starting(JobId id, int attempt = 1) { return AttemptStarting{id, attempt}; }
[[maybe_unused]]
Event Running(JobId id, int attempt = 1) { return AttemptRunning{id, attempt}; }
[[maybe_unused]]
Event Ended(JobId id, int attempt = 1, AttemptOutcome outcome = AttemptOutcome::kSucceeded,
            std::string reason = "") {
  return AttemptEnded{id, attempt, outcome, std::move(reason)};
}

[[maybe_unused]]
std::string Id(JobId id) { return std::to_string(id); }

// The lines of a job's submission when it is dispatched at once / waits.
[[maybe_unused]]
std::vector<std::string> Dispatched(JobId id, const std::string& mode) {
  return {"status " + Id(id) + " SUBMITTED->RUNNABLE",
          "status " + Id(id) + " RUNNABLE->SCHEDULED", "dispatch " + Id(id) + " attempt=1 " + mode};
}
[[maybe_unused]]
std::vector<std::string> Waits(JobId id) {
  return {"status " + Id(id) + " SUBMITTED->RUNNABLE"};
}

// The two lines that stop a preemption victim in status `status`.
[[maybe_unused]]
std::string StopLine(JobId id, int attempt, PreemptionRule rule) {
  return "stop " + Id(id) + " attempt=" + std::to_string(attempt) + " PREEMPTION \"" +
         PreemptionReason(rule) + "\"";
}
[[maybe_unused]]
std::string InProgress(JobId id, const std::string& status, PreemptionRule rule) {
  return "status " + Id(id) + " " + status + "->" + status + " \"" +
         std::string(kPreemptionInProgress) + PreemptionReason(rule) + "\"";
}

// The requeue of a preempted job: RUNNABLE with the preemption's reason.
[[maybe_unused]]
std::string Requeued(JobId id, const std::string& status, PreemptionRule rule) {
  return "status " + Id(id) + " " + status + "->RUNNABLE \"" + PreemptionReason(rule) + "\"";
}

[[maybe_unused]]
std::vector<std::string> Cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}


// The usage of one share's ml.g5.xlarge (or of the pool, share "").
struct Figures {
  std::string share;
  std::int64_t used, borrowed, lent;
};

void ExpectUsage(const Engine& e, const std::vector<Figures>& expected) {
  Result<QueueUsage> usage = e.Usage("q");
  ASSERT_TRUE(usage.ok()) << usage.status().ToString();
  for (const Figures& f : expected) {
    SCOPED_TRACE("share '" + f.share + "'");
    const std::vector<UnitUsage>* units = f.share.empty() ? &usage->pool : nullptr;
    for (const ShareUsage& s : usage->shares) {
      if (s.name == f.share) units = &s.units;
    }
    ASSERT_NE(units, nullptr);
    ASSERT_EQ(units->size(), 1u);
    const UnitUsage& u = units->front();
    EXPECT_EQ(u.unit, kG5);
    EXPECT_EQ(u.limit, f.share.empty() ? 3 : 1);
    EXPECT_EQ(u.used, f.used);
    if (f.share.empty()) continue;
    EXPECT_EQ(u.borrowed, f.borrowed);
    EXPECT_EQ(u.lent, f.lent);
  }
}

// aws-batch-quota-management.md section 4.5: QS1 (LEND_AND_BORROW 200%, in-share preemption),
// QS2 (LEND) and QS3 (RESERVE), one ml.g5.xlarge each, in a service environment of 3.
TEST(Notebook, QuotaManagementScenarioEndToEnd) {
  constexpr PreemptionRule kReclaim = PreemptionRule::kReclaim;
  constexpr PreemptionRule kInShare = PreemptionRule::kInShare;
  Engine e;
  Play(e, {
      {Env(3), 0, {}},
      {Q(), 0, {}},
      {LendBorrow("QS1", 1, 200, /*in_share=*/true), 0, {}},
      {Lend("QS2", 1), 0, {}},
      {Reserve("QS3", 1), 0, {}},
  });
  ExpectUsage(e, {{"", 0, 0, 0}, {"QS1", 0, 0, 0}, {"QS2", 0, 0, 0}, {"QS3", 0, 0, 0}});

  // Priority 3 runs on QS1's own instance, priority 2 borrows QS2's, priority 1 waits (QS3 is
  // RESERVE and lends nothing).
  Play(e, {
      {J(1, "QS1", 3, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
      {Starting(1), 1000, {"status 1 SCHEDULED->STARTING"}},
      {Running(1), 1000, {"status 1 STARTING->RUNNING"}},
      {J(2, "QS1", 2, 1, 2000), 2000, Dispatched(2, "BORROWED")},
      {Starting(2), 2000, {"status 2 SCHEDULED->STARTING"}},
      {Running(2), 2000, {"status 2 STARTING->RUNNING"}},
      {J(3, "QS1", 1, 1, 3000), 3000, Waits(3)},
  });
  ExpectUsage(e, {{"", 2, 0, 0}, {"QS1", 2, 1, 0}, {"QS2", 0, 0, 1}, {"QS3", 0, 0, 0}});
  EXPECT_EQ(e.FrontOfQueue("q", "QS1", 10), (std::vector<JobId>{3}));

  // A QS2 job arrives: the borrowing priority-2 job is preempted to give QS2 its instance back.
  Play(e, {{J(4, "QS2", 0, 1, 4000), 4000,
            Cat(Waits(4), {"preempt by 4: 2@QS1/RECLAIM{prio=2,lost=2000,started=2000}",
                           StopLine(2, 1, kReclaim), InProgress(2, "RUNNING", kReclaim)})}});
  ExpectUsage(e, {{"", 2, 0, 0}, {"QS1", 2, 1, 0}, {"QS2", 0, 0, 1}, {"QS3", 0, 0, 0}});
  ASSERT_TRUE(e.GetJob(4).has_value());
  EXPECT_TRUE(e.GetJob(4)->nominated);
  EXPECT_TRUE(e.GetJob(2)->stopping);
  EXPECT_EQ(e.GetJob(2)->status, JobStatus::kRunning);
  EXPECT_EQ(e.GetJob(2)->status_reason,
            std::string(kPreemptionInProgress) + PreemptionReason(kReclaim));

  // Its processes are gone: the victim is RUNNABLE again and the QS2 job is dispatched.
  Play(e, {{Ended(2, 1, AttemptOutcome::kFailed, "Received status from SageMaker: Stopped"), 5000,
            {"preempted 2 attempt=1 RECLAIM lost=3000 count=1", Requeued(2, "RUNNING", kReclaim),
             "status 4 RUNNABLE->SCHEDULED", "dispatch 4 attempt=1 PREEMPTOR"}},
           {Starting(4), 5000, {"status 4 SCHEDULED->STARTING"}},
           {Running(4), 5000, {"status 4 STARTING->RUNNING"}}});
  ExpectUsage(e, {{"", 2, 0, 0}, {"QS1", 1, 0, 0}, {"QS2", 1, 0, 0}, {"QS3", 0, 0, 0}});
  ASSERT_TRUE(e.GetJob(2).has_value());
  EXPECT_EQ(e.GetJob(2)->status, JobStatus::kRunnable);
  EXPECT_EQ(e.GetJob(2)->preemptions, 1);
  // The requeued job keeps its place: priority 2 before priority 1.
  EXPECT_EQ(e.FrontOfQueue("q", "QS1", 10), (std::vector<JobId>{2, 3}));

  // UpdateJobPriority raises the waiting priority-1 job to 4: it preempts the running
  // priority-3 job of its own share.
  Play(e, {{UpdateJobPriority{3, 4}, 6000,
            {"preempt by 3: 1@QS1/IN_SHARE{prio=3,lost=5000,started=1000}",
             StopLine(1, 1, kInShare), InProgress(1, "RUNNING", kInShare)}},
           {Ended(1, 1, AttemptOutcome::kFailed, "Received status from SageMaker: Stopped"), 7000,
            {"preempted 1 attempt=1 IN_SHARE lost=6000 count=1",
             Requeued(1, "RUNNING", kInShare), "status 3 RUNNABLE->SCHEDULED",
             "dispatch 3 attempt=1 PREEMPTOR"}}});
  ExpectUsage(e, {{"", 2, 0, 0}, {"QS1", 1, 0, 0}, {"QS2", 1, 0, 0}, {"QS3", 0, 0, 0}});
  EXPECT_EQ(e.FrontOfQueue("q", "QS1", 10), (std::vector<JobId>{1, 2}));
  EXPECT_EQ(e.GetJob(3)->priority, 4);
  EXPECT_EQ(e.LiveJobs(), 4u);
}

}  // namespace
}  // namespace allot::engine
