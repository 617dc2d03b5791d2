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
#include "engine/support/steps.h"
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
using namespace ::allot::testing::steps;  // NOLINT(build/namespaces)

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
  Play(e, {{Ended(2, 1, AttemptOutcome::kFailed, "Received status from SageMaker: Stopped"),
            5000,
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
  Play(e, {{UpdateJobPriority{3, 4},
            6000,
            {"preempt by 3: 1@QS1/IN_SHARE{prio=3,lost=5000,started=1000}",
             StopLine(1, 1, kInShare), InProgress(1, "RUNNING", kInShare)}},
           {Ended(1, 1, AttemptOutcome::kFailed, "Received status from SageMaker: Stopped"),
            7000,
            {"preempted 1 attempt=1 IN_SHARE lost=6000 count=1", Requeued(1, "RUNNING", kInShare),
             "status 3 RUNNABLE->SCHEDULED", "dispatch 3 attempt=1 PREEMPTOR"}}});
  ExpectUsage(e, {{"", 2, 0, 0}, {"QS1", 1, 0, 0}, {"QS2", 1, 0, 0}, {"QS3", 0, 0, 0}});
  EXPECT_EQ(e.FrontOfQueue("q", "QS1", 10), (std::vector<JobId>{1, 2}));
  EXPECT_EQ(e.GetJob(3)->priority, 4);
  EXPECT_EQ(e.LiveJobs(), 4u);
}

}  // namespace
}  // namespace allot::engine
