// Explanations beyond the rule (holders' jobs, the start bound, in-share's why-not, whose the
// free capacity is), the runner-up of a preemption, and Engine::WhatIf: the decisions an event
// would produce, without changing the engine (docs/observability.md, Explain and what-if).

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
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
using ::allot::testing::Job;
using ::allot::testing::Lines;
using ::allot::testing::MustApply;
using ::allot::testing::Only;
using namespace ::allot::testing::steps;  // NOLINT(build/namespaces)

// A job of share `share` needing `n` instances, with an attempt time limit.
Event Timed(JobId id, const std::string& share, std::int32_t prio, std::int64_t n,
            std::int64_t timeout_seconds, Timestamp now) {
  return Job({.id = id,
              .share = share,
              .priority = prio,
              .need = {{kG5, n}},
              .timeout_seconds = timeout_seconds},
             now);
}

TEST(ExplainStartBound, FromTheTimeLimitsOfTheJobsHoldingTheCapacity) {
  // A (RESERVE, 2) runs two jobs with limits of 100 s and 50 s; a third waits for one instance:
  // the one ending first frees it, at 50 s after it started running.
  Engine e;
  Play(e, {Given(Env(2), 0), Given(Q(), 0), Given(Reserve("A", 2), 0),
           Given(Timed(1, "A", 0, 1, 100, 1000), 1000), Given(Timed(2, "A", 0, 1, 50, 1000), 1000),
           Given(Running(1), 2000), Given(Running(2), 3000), Given(J(3, "A", 0, 1, 4000), 4000)});
  Result<WaitReason> why = e.Explain(3);
  ASSERT_TRUE(why.ok());
  EXPECT_EQ(why->rule, WaitRule::kShareLimit);
  ASSERT_TRUE(why->start_bound.has_value()) << why->start_unknown;
  EXPECT_EQ(*why->start_bound, 3000 + 50'000);
  ASSERT_EQ(why->holders.size(), 1u);
  ASSERT_EQ(why->holders[0].jobs.size(), 2u);
  EXPECT_EQ(why->holders[0].jobs[0].id, 1);
  EXPECT_EQ(why->holders[0].jobs[0].ends_by, 2000 + 100'000);
  EXPECT_EQ(why->holders[0].jobs[1].ends_by, 3000 + 50'000);
  EXPECT_FALSE(why->would_start.empty());
}

TEST(ExplainStartBound, UnknownWhenAHolderHasNoTimeLimit) {
  Engine e;
  Play(e, {Given(Env(1), 0), Given(Q(), 0), Given(Reserve("A", 1), 0),
           Given(J(1, "A", 0, 1, 1000), 1000), Given(Running(1), 2000),
           Given(J(2, "A", 0, 1, 3000), 3000)});
  Result<WaitReason> why = e.Explain(2);
  ASSERT_TRUE(why.ok());
  EXPECT_FALSE(why->start_bound.has_value());
  EXPECT_NE(why->start_unknown.find("no time limit"), std::string::npos) << why->start_unknown;
}

TEST(ExplainInShare, SaysWhyInSharePreemptionDoesNotApply) {
  struct Case {
    std::string name;
    bool in_share;
    std::int32_t running_prio, waiting_prio;
    std::string expected;  // a part of the reason
  };
  const Case cases[] = {
      {"off in the share", false, 0, 5, "in-share preemption is off in quota share A"},
      {"no lower-priority job", true, 5, 5, "no running job of quota share A has a priority below"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    Play(e, {Given(Env(2), 0), Given(Q(), 0), Given(Reserve("A", 1, c.in_share), 0),
             Given(J(1, "A", c.running_prio, 1, 1000), 1000),
             Given(J(2, "A", c.waiting_prio, 1, 2000), 2000)});
    Result<WaitReason> why = e.Explain(2);
    ASSERT_TRUE(why.ok());
    EXPECT_EQ(why->rule, WaitRule::kShareLimit);
    EXPECT_NE(why->in_share_why_not.find(c.expected), std::string::npos) << why->in_share_why_not;
  }
}

TEST(ExplainInShare, LowerPriorityJobsHoldTooFew) {
  // A (limit 3) runs a 1-instance job at priority 1 and a 2-instance job at priority 9; a
  // 3-instance job at priority 5 could only take the first: too few.
  Engine e;
  Play(e, {Given(Env(3), 0), Given(Q(), 0), Given(Reserve("A", 3, true), 0),
           Given(J(1, "A", 1, 1, 1000), 1000), Given(J(2, "A", 9, 2, 1000), 1000),
           Given(J(3, "A", 5, 3, 2000), 2000)});
  Result<WaitReason> why = e.Explain(3);
  ASSERT_TRUE(why.ok());
  EXPECT_NE(why->in_share_why_not.find("hold 1 " + std::string(kG5) + ", too few"),
            std::string::npos)
      << why->in_share_why_not;
}

TEST(ExplainFreeElsewhere, NamesWhoseTheFreeCapacityIs) {
  // B reserves 2 and uses none; A (RESERVE, 1) is full: "0 available", the 2 free are B's.
  Engine e;
  Play(e, {Given(Env(3), 0), Given(Q(), 0), Given(Reserve("A", 1), 0), Given(Reserve("B", 2), 0),
           Given(J(1, "A", 0, 1, 1000), 1000), Given(J(2, "A", 0, 1, 2000), 2000)});
  Result<WaitReason> why = e.Explain(2);
  ASSERT_TRUE(why.ok());
  EXPECT_EQ(why->available, 0);
  EXPECT_EQ(why->free_elsewhere, "2 free in share B's RESERVE");
  EXPECT_NE(why->message.find("2 free in share B's RESERVE"), std::string::npos) << why->message;
  Result<std::string> sentence = e.WaitSentence(2);
  ASSERT_TRUE(sentence.ok());
  EXPECT_EQ(*sentence, why->message);
}

TEST(RunnerUp, TheNextCandidateInVictimOrder) {
  // A borrows two of B's instances (jobs 1 and 2, job 2 started later: less work lost); B's job
  // takes one back: job 2 goes, job 1 is the runner-up.
  Engine e;
  Play(e, {Given(Env(3), 0), Given(Q(), 0), Given(LendBorrow("A", 1), 0), Given(Lend("B", 2), 0),
           Given(J(10, "A", 0, 1, 500), 500), Given(J(1, "A", 0, 1, 1000), 1000),
           Given(J(2, "A", 0, 1, 2000), 2000)});
  const model::Decisions d = MustApply(e, J(3, "B", 0, 1, 4000), 4000);
  const std::vector<Preemption> p = Only<Preemption>(d);
  ASSERT_EQ(p.size(), 1u);
  ASSERT_EQ(p[0].victims.size(), 1u);
  EXPECT_EQ(p[0].victims[0].victim, 2);
  ASSERT_TRUE(p[0].runner_up.has_value());
  EXPECT_FALSE(p[0].runner_up->put_back);
  EXPECT_EQ(p[0].runner_up->candidate.victim, 1);
  EXPECT_EQ(p[0].runner_up->candidate.share, "A");
  EXPECT_EQ(p[0].runner_up->candidate.rule, PreemptionRule::kReclaim);
  EXPECT_GT(p[0].runner_up->candidate.key.work_lost, p[0].victims[0].key.work_lost);
}

TEST(RunnerUp, AVictimPutBackByTheMinimalSet) {
  // In-share: a 2-instance job at priority 9 needs 2 of A's 2. Job 1 (1 instance, least work
  // lost) comes first but alone is not enough; job 2 (2 instances) is then taken, and job 1 put
  // back: it is the runner-up, put back.
  Engine e;
  Play(e, {Given(Env(3), 0), Given(Q(), 0), Given(Reserve("A", 3, true), 0),
           Given(J(2, "A", 0, 2, 1000), 1000), Given(J(1, "A", 0, 1, 3000), 3000)});
  const model::Decisions d = MustApply(e, J(3, "A", 9, 2, 4000), 4000);
  const std::vector<Preemption> p = Only<Preemption>(d);
  ASSERT_EQ(p.size(), 1u) << ::testing::PrintToString(Lines(d));
  ASSERT_EQ(p[0].victims.size(), 1u);
  EXPECT_EQ(p[0].victims[0].victim, 2);
  ASSERT_TRUE(p[0].runner_up.has_value());
  EXPECT_TRUE(p[0].runner_up->put_back);
  EXPECT_EQ(p[0].runner_up->candidate.victim, 1);
}

// Everything observable about queue "q" and jobs 1..kMaxId.
constexpr JobId kMaxId = 40;
std::string Snapshot(const Engine& e) {
  std::string s = "live=" + std::to_string(e.LiveJobs());
  Result<QueueUsage> usage = e.Usage("q");
  if (usage.ok()) {
    for (const ShareUsage& sh : usage->shares) {
      for (const UnitUsage& u : sh.units) {
        s += " " + sh.name + ":" + std::to_string(u.used) + "/" + std::to_string(u.borrowed) + "/" +
             std::to_string(u.reserved) + "/" + std::to_string(u.waiting);
      }
    }
  }
  for (JobId id = 1; id <= kMaxId; ++id) {
    const std::optional<JobView> j = e.GetJob(id);
    if (!j) continue;
    s += " " + Id(id) + ":" + std::string(ToString(j->status)) + "," + j->status_reason + "," +
         std::to_string(j->priority) + "," + std::to_string(j->attempt) + "," +
         std::to_string(j->stopping) + std::to_string(j->nominated);
  }
  for (JobId id : e.FrontOfQueue("q", "", 100)) s += " front:" + Id(id);
  const std::optional<Timestamp> next = e.NextDeadline();
  s += " next=" + (next ? std::to_string(*next) : std::string("-"));
  return s;
}

TEST(WhatIf, SameDecisionsAsApplyingAndNoChange) {
  // A seeded random walk over a small queue of three shares: at each step the what-if of the
  // next event equals what applying it decides, and the engine is unchanged by the what-if.
  const unsigned seed = std::random_device{}();
  std::printf("seed %u\n", seed);
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  Engine e;
  Play(e, {Given(Env(6), 0), Given(Q(), 0), Given(LendBorrow("A", 2, -1, true), 0),
           Given(Lend("B", 2, true), 0), Given(Reserve("C", 2), 0)});
  const char* shares[] = {"A", "B", "C"};
  Timestamp now = 1000;
  JobId next_id = 1;
  int predicted_preemptions = 0;
  for (int step = 0; step < 200; ++step) {
    now += 1000;
    Event event = Tick{};
    const int kind = static_cast<int>(rng() % 4);
    std::vector<JobId> live;
    for (JobId id = 1; id < next_id; ++id) {
      if (e.GetJob(id)) live.push_back(id);
    }
    JobId subject = 0;
    if ((kind == 0 || live.empty()) && next_id <= kMaxId) {
      subject = next_id++;
      event = J(subject, shares[rng() % 3], static_cast<std::int32_t>(rng() % 4),
                1 + static_cast<std::int64_t>(rng() % 2), now);
    } else if (!live.empty()) {
      const JobId id = live[rng() % live.size()];
      const std::optional<JobView> v = e.GetJob(id);
      if (kind == 1) {
        subject = id;
        event = UpdateJobPriority{id, static_cast<std::int32_t>(rng() % 6)};
      } else if (v->status == JobStatus::kScheduled) {
        event = Running(id, v->attempt);
      } else if (v->status == JobStatus::kRunning || v->stopping) {
        event = Ended(id, v->attempt);
      } else {
        event = LendBorrow("A", 1 + static_cast<std::int64_t>(rng() % 3), -1, true);
      }
    }
    const std::string before = Snapshot(e);
    Result<WhatIfAnswer> answer = e.WhatIf(event, now, subject);
    ASSERT_TRUE(answer.ok()) << answer.status().ToString();
    EXPECT_EQ(Snapshot(e), before) << "step " << step << ": the what-if changed the engine";
    model::Decisions applied;
    ASSERT_TRUE(e.Apply(event, now, &applied).ok());
    ASSERT_EQ(Lines(answer->decisions), Lines(applied))
        << "step " << step << ": " << EventToString(event);
    predicted_preemptions += static_cast<int>(Only<Preemption>(applied).size());
    if (subject != 0 && answer->subject && answer->subject->status == JobStatus::kRunnable &&
        !answer->subject->nominated) {
      ASSERT_TRUE(answer->wait.has_value());
      Result<WaitReason> real = e.Explain(subject);
      ASSERT_TRUE(real.ok());
      EXPECT_EQ(answer->wait->message, real->message);
    }
  }
  std::printf("preemptions predicted and made: %d\n", predicted_preemptions);
}

TEST(WhatIf, RefusedEventIsRefusedAndChangesNothing) {
  Engine e;
  Play(e, {Given(Env(1), 0), Given(Q(), 0), Given(Reserve("A", 1), 0),
           Given(J(1, "A", 0, 1, 1000), 1000)});
  const std::string before = Snapshot(e);
  EXPECT_FALSE(e.WhatIf(UpdateJobPriority{99, 1}, 2000, 99).ok());
  EXPECT_FALSE(e.WhatIf(J(2, "nope", 0, 1, 2000), 2000, 2).ok());
  EXPECT_EQ(Snapshot(e), before);
}

}  // namespace
}  // namespace allot::engine
