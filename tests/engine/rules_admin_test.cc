// Administrative and query rules of docs/design/engine.md: limit changes, DISABLED and deleted
// shares, jobs that can never fit, Explain and invalid events.

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

constexpr PreemptionRule kReclaim = PreemptionRule::kReclaim;
constexpr PreemptionRule kLimitLowered = PreemptionRule::kLimitLowered;

std::string Reason(Misconfiguration m) { return "\"" + MisconfigurationReason(m) + "\""; }

TEST(LoweredShareLimit, ExcessIsReclaimableNotStopped) {
  // A runs two jobs within its limit of 2; an admin lowers it to 1: nothing stops. When B (at
  // its limit) needs its instance back, A's excess is reclaimed.
  struct Case {
    std::string name;
    Event before, after;
    PreemptionRule rule;
  };
  const Case cases[] = {
      {"LEND cannot borrow: LIMIT_LOWERED", Lend("A", 2), Lend("A", 1), kLimitLowered},
      {"RESERVE: LIMIT_LOWERED", Reserve("A", 2), Reserve("A", 1), kLimitLowered},
      {"LEND_AND_BORROW beyond its cap: LIMIT_LOWERED", LendBorrow("A", 2, 0),
       LendBorrow("A", 1, 0), kLimitLowered},
      {"LEND_AND_BORROW within its cap: RECLAIM", LendBorrow("A", 2), LendBorrow("A", 1), kReclaim},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    Play(e, {Given(Env(3), 0),
             Given(Q(), 0),
             Given(c.before, 0),
             Given(Lend("B", 1), 0),
             {J(1, "A", 0, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
             {J(2, "A", 0, 1, 2000), 2000, Dispatched(2, "WITHIN_QUOTA")},
             {c.after, 3000, {}}});
    Result<QueueUsage> usage = e.Usage("q");
    ASSERT_TRUE(usage.ok());
    ASSERT_EQ(usage->shares[0].name, "A");
    EXPECT_EQ(usage->shares[0].units[0].used, 2);
    EXPECT_EQ(usage->shares[0].units[0].borrowed, 1);
    const std::string rule(ToString(c.rule));
    Play(e, {{J(3, "B", 0, 1, 4000), 4000,
              Cat(Waits(3), {"preempt by 3: 2@A/" + rule + "{prio=0,lost=2000,started=2000}",
                             StopLine(2, 1, c.rule), InProgress(2, "SCHEDULED", c.rule)})},
             {Ended(2, 1, AttemptOutcome::kFailed, "stopped"),
              5000,
              {"preempted 2 attempt=1 " + rule + " lost=3000 count=1",
               Requeued(2, "SCHEDULED", c.rule), "status 3 RUNNABLE->SCHEDULED",
               "dispatch 3 attempt=1 PREEMPTOR"}}});
  }
}

TEST(DisabledShare, RefusesSubmissionsButStillRunsAndLends) {
  Engine e;
  Play(e, {Given(Env(4), 0),
           Given(Q(), 0),
           Given(Lend("A", 2), 0),
           Given(LendBorrow("B", 1), 0),
           {J(1, "A", 0, 2, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
           {J(2, "A", 0, 1, 2000), 2000, Waits(2)},
           {Share({.name = "A",
                   .limits = {{kG5, 2}},
                   .strategy = SharingStrategy::kLend,
                   .state = State::kDisabled}),
            3000,
            {}}});
  Decisions out;
  EXPECT_FALSE(e.Apply(J(3, "A", 0, 1, 4000), 4000, &out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(e.GetJob(3).has_value());
  Play(e, {{J(4, "B", 0, 1, 5000), 5000, Dispatched(4, "WITHIN_QUOTA")},
           {J(5, "B", 0, 1, 6000), 6000, Waits(5)},
           // A's queued job runs and A's remaining idle instance is lent to B.
           {Ended(1),
            7000,
            {"status 1 SCHEDULED->SUCCEEDED", "status 2 RUNNABLE->SCHEDULED",
             "dispatch 2 attempt=1 WITHIN_QUOTA", "status 5 RUNNABLE->SCHEDULED",
             "dispatch 5 attempt=1 BORROWED"}}});
}

TEST(DeleteShare, OnlyWhenDisabledAndTerminatesItsJobs) {
  const std::string why = "Quota share A was deleted";
  Engine e;
  Play(e, {Given(Env(2), 0),
           Given(Q(), 0),
           Given(Reserve("A", 1), 0),
           Given(Reserve("B", 1), 0),
           {J(1, "A", 0, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
           {J(2, "A", 0, 1, 2000), 2000, Waits(2)}});
  Decisions out;
  EXPECT_FALSE(e.Apply(DeleteQuotaShare{"q", "A"}, 3000, &out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(e.LiveJobs(), 2u);
  Play(e, {{Share({.name = "A", .limits = {{kG5, 1}}, .state = State::kDisabled}), 4000, {}},
           {DeleteQuotaShare{"q", "A"},
            5000,
            {"stop 1 attempt=1 TERMINATION \"" + why + "\"",
             "status 2 RUNNABLE->FAILED \"" + why + "\""}},
           {Ended(1, 1, AttemptOutcome::kFailed, "killed"),
            6000,
            {"status 1 SCHEDULED->FAILED \"" + why + "\""}}});
  EXPECT_EQ(e.LiveJobs(), 0u);
  out.clear();
  EXPECT_FALSE(e.Apply(J(3, "A", 0, 1, 7000), 7000, &out).ok());
  Play(e, {{J(4, "B", 0, 1, 8000), 8000, Dispatched(4, "WITHIN_QUOTA")}});
}

TEST(LoweredEnvironmentLimit, StopsNothingAndNewDispatchesObey) {
  Engine e;
  Play(e, {Given(Env(3), 0),
           Given(Q(), 0),
           Given(Reserve("A", 3), 0),
           {J(1, "A", 0, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
           {J(2, "A", 0, 1, 1000), 1000, Dispatched(2, "WITHIN_QUOTA")},
           {J(3, "A", 0, 1, 1000), 1000, Dispatched(3, "WITHIN_QUOTA")},
           {J(4, "A", 0, 1, 2000), 2000, Waits(4)},
           {J(5, "A", 0, 2, 2000), 2000, Waits(5)},
           // Job 5 can never fit a pool of 1; nobody is stopped.
           {Env(1),
            3000,
            {"status 5 RUNNABLE->RUNNABLE " + Reason(Misconfiguration::kServiceEnvironmentMax)}},
           {Ended(1), 4000, {"status 1 SCHEDULED->SUCCEEDED"}},
           {Ended(2), 5000, {"status 2 SCHEDULED->SUCCEEDED"}},
           {Ended(3),
            6000,
            {"status 3 SCHEDULED->SUCCEEDED", "status 4 RUNNABLE->SCHEDULED",
             "dispatch 4 attempt=1 WITHIN_QUOTA"}},
           {Env(3),
            7000,
            {"status 5 RUNNABLE->RUNNABLE", "status 5 RUNNABLE->SCHEDULED",
             "dispatch 5 attempt=1 WITHIN_QUOTA"}}});
}

TEST(NeverFits, EachMisconfigurationReason) {
  struct Case {
    std::string name;
    std::vector<Event> config;
    std::int64_t need;
    Misconfiguration reason;
  };
  const Case cases[] = {
      {"more than the service environment",
       {Env(2), Q(), Reserve("A", 4)},
       3,
       Misconfiguration::kServiceEnvironmentMax},
      {"RESERVE: more than its limit",
       {Env(10), Q(), Reserve("A", 2)},
       3,
       Misconfiguration::kShareLimit},
      {"LEND: more than its limit",
       {Env(10), Q(), Lend("A", 2), Lend("B", 8)},
       3,
       Misconfiguration::kShareLimit},
      {"LEND_AND_BORROW: more than limit + borrow cap",
       {Env(10), Q(), LendBorrow("A", 2, 100), Lend("B", 8)},
       5,
       Misconfiguration::kShareAndBorrowLimit},
      {"LEND_AND_BORROW: more borrowing than all lenders' limits",
       {Env(20), Q(), LendBorrow("A", 4, 200), LendBorrow("B", 4, 200)},
       10,
       Misconfiguration::kBorrowableCapacity},
      {"RESERVE limits do not count as borrowable",
       {Env(20), Q(), LendBorrow("A", 1), Reserve("B", 5)},
       2,
       Misconfiguration::kBorrowableCapacity},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    for (const Event& ev : c.config) MustApply(e, ev, 0);
    Play(e,
         {{J(1, "A", 0, c.need, 1000), 1000, {"status 1 SUBMITTED->RUNNABLE " + Reason(c.reason)}},
          {Tick{}, 2000, {}}});
    EXPECT_EQ(e.GetJob(1)->status_reason, MisconfigurationReason(c.reason));
    Result<WaitReason> why = e.Explain(1);
    ASSERT_TRUE(why.ok());
    EXPECT_EQ(why->rule, WaitRule::kMisconfigured);
    EXPECT_EQ(why->misconfiguration, c.reason);
  }
}

TEST(NeverFits, ConfigurationChangeReleasesTheJob) {
  Engine e;
  Play(e, {Given(Env(10), 0),
           Given(Q(), 0),
           Given(Reserve("A", 2), 0),
           {J(1, "A", 0, 3, 1000),
            1000,
            {"status 1 SUBMITTED->RUNNABLE " + Reason(Misconfiguration::kShareLimit)}},
           {Reserve("A", 3),
            2000,
            {"status 1 RUNNABLE->RUNNABLE", "status 1 RUNNABLE->SCHEDULED",
             "dispatch 1 attempt=1 WITHIN_QUOTA"}}});
}

TEST(JobStateTimeLimitActions, TerminateAMisconfiguredJobAfterMaxTime) {
  const std::string quota(kReasonQuotaLimitExceeded);
  struct Case {
    std::string action_reason;
    bool fires;
  };
  const Case cases[] = {
      {quota, true},
      {"MISCONFIGURATION:", true},
      {std::string(kReasonServiceEnvironmentMax), false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.action_reason);
    Engine e;
    Play(e, {Given(Env(10), 0),
             Given(Queue("q", "se", {{c.action_reason, 600}}), 0),
             Given(Reserve("A", 2), 0),
             {J(1, "A", 0, 3, 1000),
              1000,
              {"status 1 SUBMITTED->RUNNABLE " + Reason(Misconfiguration::kShareLimit)}}});
    if (!c.fires) {
      EXPECT_EQ(e.NextDeadline(), std::nullopt);
      Play(e, {{Tick{}, 1000000, {}}});
      EXPECT_TRUE(e.GetJob(1).has_value());
      continue;
    }
    EXPECT_EQ(e.NextDeadline(), std::optional<Timestamp>(601000));
    Play(e, {{Tick{}, 600999, {}},
             {Tick{},
              601000,
              {"status 1 RUNNABLE->FAILED \"Terminated by JobStateTimeLimit action due to "
               "reason: " +
               c.action_reason + "\""}}});
    EXPECT_FALSE(e.GetJob(1).has_value());
    EXPECT_EQ(e.NextDeadline(), std::nullopt);
  }
}

TEST(Explain, RuleUnitMissingAmountHoldersAndPositions) {
  struct Case {
    std::string name;
    std::vector<Event> config;
    std::vector<Event> jobs;  // submitted in order at 1000, 2000, ...
    JobId target;
    WaitRule rule;
    std::int64_t needed, available;
    std::vector<Holder> holders;
    std::int64_t position_in_share, position_in_queue;
  };
  const Case cases[] = {
      {"share limit",
       {Env(5), Q(), Reserve("A", 3)},
       {J(1, "A", 0, 2, 1000), J(2, "A", 0, 2, 2000)},
       2,
       WaitRule::kShareLimit,
       2,
       1,
       {{"A", 2, 0}},
       0,
       0},
      {"borrow limit",
       {Env(10), Q(), LendBorrow("A", 2, 50), Lend("B", 4)},
       {J(1, "A", 0, 1, 1000), J(2, "A", 0, 1, 2000), J(3, "A", 0, 1, 3000), J(4, "A", 0, 1, 4000)},
       4,
       WaitRule::kBorrowLimit,
       1,
       0,
       {{"A", 3, 1}},
       0,
       0},
      {"no lendable capacity",
       {Env(5), Q(), LendBorrow("A", 1), Lend("B", 1)},
       {J(1, "A", 0, 1, 1000), J(2, "A", 0, 1, 2000), J(3, "A", 0, 1, 3000)},
       3,
       WaitRule::kNoLendableCapacity,
       1,
       0,
       {{"A", 2, 1}},
       0,
       0},
      {"pool full",
       {Env(2), Q(), Reserve("A", 2), Reserve("B", 2)},
       {J(1, "B", 0, 1, 1000), J(2, "B", 0, 1, 2000), J(3, "A", 0, 1, 3000)},
       3,
       WaitRule::kPoolFull,
       1,
       0,
       {{"B", 2, 0}},
       0,
       0},
      {"positions behind higher priorities",
       {Env(2), Q(), Reserve("A", 1), Reserve("B", 1)},
       {J(1, "A", 0, 1, 1000), J(2, "B", 0, 1, 2000), J(3, "A", 1, 1, 3000), J(4, "B", 7, 1, 4000),
        J(5, "A", 5, 1, 5000)},
       3,
       WaitRule::kShareLimit,
       1,
       0,
       {{"A", 1, 0}, {"B", 1, 0}},
       1,
       2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    for (const Event& ev : c.config) MustApply(e, ev, 0);
    Timestamp now = 1000;
    for (const Event& ev : c.jobs) {
      MustApply(e, ev, now);
      now += 1000;
    }
    Result<WaitReason> why = e.Explain(c.target);
    ASSERT_TRUE(why.ok()) << why.status().ToString();
    EXPECT_EQ(why->rule, c.rule) << ToString(why->rule) << ": " << why->message;
    EXPECT_EQ(why->misconfiguration, Misconfiguration::kNone);
    EXPECT_EQ(why->unit, kG5);
    EXPECT_EQ(why->needed, c.needed);
    EXPECT_EQ(why->available, c.available);
    EXPECT_EQ(why->missing, c.needed - c.available);
    ASSERT_EQ(why->holders.size(), c.holders.size());
    for (std::size_t i = 0; i < c.holders.size(); ++i) {
      EXPECT_EQ(why->holders[i].share, c.holders[i].share);
      EXPECT_EQ(why->holders[i].held, c.holders[i].held);
      EXPECT_EQ(why->holders[i].borrowed, c.holders[i].borrowed);
    }
    EXPECT_EQ(why->position_in_share, c.position_in_share);
    EXPECT_EQ(why->position_in_queue, c.position_in_queue);
    EXPECT_FALSE(why->message.empty());
  }
}

TEST(Explain, DisabledEnvironmentNotWaitingAndUnknownJob) {
  Engine e;
  Play(e, {Given(Env(1, State::kDisabled), 0),
           Given(Q(), 0),
           Given(Reserve("A", 1), 0),
           {J(1, "A", 0, 1, 1000), 1000, Waits(1)}});
  Result<WaitReason> why = e.Explain(1);
  ASSERT_TRUE(why.ok());
  EXPECT_EQ(why->rule, WaitRule::kServiceEnvironmentDisabled);
  Play(e, {{Env(1), 2000, {"status 1 RUNNABLE->SCHEDULED", "dispatch 1 attempt=1 WITHIN_QUOTA"}}});
  why = e.Explain(1);
  ASSERT_TRUE(why.ok());
  EXPECT_EQ(why->rule, WaitRule::kNotWaiting);
  EXPECT_FALSE(e.Explain(99).ok());
}

// Everything observable about queue "q" and jobs 1..3.
std::string Snapshot(const Engine& e) {
  std::string s = "live=" + std::to_string(e.LiveJobs());
  Result<QueueUsage> usage = e.Usage("q");
  if (usage.ok()) {
    for (const UnitUsage& u : usage->pool) {
      s += " pool:" + u.unit + "=" + std::to_string(u.limit) + "/" + std::to_string(u.used);
    }
    for (const ShareUsage& sh : usage->shares) {
      s += " " + sh.name + "[" + std::string(ToString(sh.strategy)) + "]";
      for (const UnitUsage& u : sh.units) {
        s += ":" + u.unit + "=" + std::to_string(u.limit) + "/" + std::to_string(u.used) + "/" +
             std::to_string(u.waiting);
      }
    }
  }
  for (JobId id = 1; id <= 3; ++id) {
    const std::optional<JobView> j = e.GetJob(id);
    if (!j) continue;
    s += " job" + Id(id) + ":" + std::string(ToString(j->status)) +
         ",prio=" + std::to_string(j->priority) + ",attempt=" + std::to_string(j->attempt);
  }
  for (JobId id : e.FrontOfQueue("q", "", 10)) s += " front:" + Id(id);
  return s;
}

TEST(InvalidEvent, ReturnsNonOkStatusAndChangesNothing) {
  std::vector<Event> twenty_shares;
  for (int i = 2; i <= 20; ++i) twenty_shares.push_back(Reserve("S" + std::to_string(i), 1));
  struct Case {
    std::string name;
    std::vector<Event> extra_config;
    Event event;
  };
  const Case cases[] = {
      {"priority of an unknown job", {}, UpdateJobPriority{99, 5}},
      {"terminate an unknown job", {}, TerminateJob{99, "user"}},
      {"priority 12000", {}, UpdateJobPriority{1, 12000}},
      {"negative priority", {}, UpdateJobPriority{2, -1}},
      {"submit at priority 12000", {}, J(3, "A", 12000, 1, 3000)},
      {"duplicate id", {}, J(2, "A", 0, 1, 3000)},
      {"unknown share", {}, J(3, "Z", 0, 1, 3000)},
      {"unknown queue",
       {},
       Job({.id = 3, .queue = "nope", .share = "A", .need = {{kG5, 1}}}, 3000)},
      {"retry attempts 0",
       {},
       Job({.id = 3, .share = "A", .need = {{kG5, 1}}, .attempts = 0}, 3000)},
      {"retry attempts 11",
       {},
       Job({.id = 3, .share = "A", .need = {{kG5, 1}}, .attempts = 11}, 3000)},
      {"21st share", twenty_shares, Reserve("S21", 1)},
      {"6 capacity limits",
       {},
       Share({.name = "B",
              .limits = {{"u1", 1}, {"u2", 1}, {"u3", 1}, {"u4", 1}, {"u5", 1}, {"u6", 1}}})},
      {"no capacity limit", {}, Share({.name = "B", .limits = {}})},
      {"maxCapacity 0", {}, Share({.name = "B", .limits = {{kG5, 0}}})},
      {"borrowLimit with RESERVE",
       {},
       Share({.name = "B",
              .limits = {{kG5, 1}},
              .strategy = SharingStrategy::kReserve,
              .borrow_limit = 50})},
      {"borrowLimit with LEND",
       {},
       Share({.name = "B",
              .limits = {{kG5, 1}},
              .strategy = SharingStrategy::kLend,
              .borrow_limit = 100})},
      {"borrowLimit -2",
       {},
       Share({.name = "B",
              .limits = {{kG5, 1}},
              .strategy = SharingStrategy::kLendAndBorrow,
              .borrow_limit = -2})},
      {"delete an ENABLED share", {}, DeleteQuotaShare{"q", "A"}},
      {"delete an ENABLED queue", {}, DeleteJobQueue{"q"}},
      {"delete an environment with a queue", {}, DeleteServiceEnvironment{"se"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    Play(e, {Given(Env(2), 0), Given(Q(), 0), Given(Reserve("A", 1), 0)});
    for (const Event& ev : c.extra_config) MustApply(e, ev, 0);
    Play(e, {{J(1, "A", 3, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
             {J(2, "A", 2, 1, 2000), 2000, Waits(2)}});
    const std::string before = Snapshot(e);
    Decisions out;
    const Status s = e.Apply(c.event, 3000, &out);
    EXPECT_FALSE(s.ok()) << EventToString(c.event);
    EXPECT_TRUE(out.empty()) << Lines(out).size() << " decisions";
    EXPECT_EQ(Snapshot(e), before);
  }
}

}  // namespace
}  // namespace allot::engine
