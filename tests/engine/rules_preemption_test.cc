// Preemption rules of docs/design/engine.md: reclaim, in-share preemption, nomination, the
// victim order, the minimal victim set and priority updates.

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

constexpr char kP4[] = "ml.p4d.24xlarge";
constexpr PreemptionRule kReclaim = PreemptionRule::kReclaim;
constexpr PreemptionRule kInShare = PreemptionRule::kInShare;

TEST(Reclaim, VictimsOnlyFromSharesAboveTheirLimit) {
  // A borrows B's idle instance; C sits at its own limit with the lowest priority. A job of B
  // takes back its instance: the victim comes from A (whatever the priorities), never from C.
  struct Case {
    std::string name;
    std::int32_t prio1, prio3;
    std::string preemption;
  };
  const Case cases[] = {
      {"equal priorities: least work lost", 5, 5,
       "preempt by 4: 3@A/RECLAIM{prio=5,lost=2000,started=2000}"},
      {"the lower priority of A, though it was not the borrowing dispatch", 4, 5,
       "preempt by 4: 1@A/RECLAIM{prio=4,lost=3000,started=1000}"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const JobId victim = c.prio1 < c.prio3 ? 1 : 3;
    const Timestamp started = victim == 1 ? 1000 : 2000;
    Engine e;
    Play(e, {
                Given(Env(3), 0),
                Given(Q(), 0),
                Given(LendBorrow("A", 1), 0),
                Given(Lend("B", 1), 0),
                Given(Reserve("C", 1), 0),
                {J(1, "A", c.prio1, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
                {J(2, "C", 0, 1, 1000), 1000, Dispatched(2, "WITHIN_QUOTA")},
                {J(3, "A", c.prio3, 1, 2000), 2000, Dispatched(3, "BORROWED")},
                {J(4, "B", 0, 1, 4000), 4000,
                 Cat(Waits(4), {c.preemption, StopLine(victim, 1, kReclaim),
                                InProgress(victim, "SCHEDULED", kReclaim)})},
                {Ended(victim, 1, AttemptOutcome::kFailed, "stopped"),
                 5000,
                 {"preempted " + Id(victim) +
                      " attempt=1 RECLAIM lost=" + std::to_string(5000 - started) + " count=1",
                  Requeued(victim, "SCHEDULED", kReclaim), "status 4 RUNNABLE->SCHEDULED",
                  "dispatch 4 attempt=1 PREEMPTOR"}},
            });
    const std::optional<JobView> v = e.GetJob(victim);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->status, JobStatus::kRunnable);
    EXPECT_EQ(v->preemptions, 1);
    EXPECT_EQ(v->attempt, 1);
    EXPECT_EQ(e.GetJob(2)->status, JobStatus::kScheduled);
  }
}

TEST(Reclaim, NeverTakesShareBelowItsLimit) {
  // A (limit 2) holds a 2-instance job within its limit and borrows one more; B lends 1.
  struct Case {
    std::string name;
    std::vector<Step> holders;
    std::vector<std::string> b_job;
  };
  const Case cases[] = {
      {"the lower-priority job would take A below its limit: the borrower goes",
       {{J(1, "A", 0, 2, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
        {J(2, "A", 9, 1, 2000), 2000, Dispatched(2, "BORROWED")}},
       Cat(Waits(3), {"preempt by 3: 2@A/RECLAIM{prio=9,lost=1000,started=2000}",
                      StopLine(2, 1, kReclaim), InProgress(2, "SCHEDULED", kReclaim)})},
      {"one job holds A's limit and the borrowed instance: no victim",
       {{J(1, "A", 0, 3, 1000), 1000, Dispatched(1, "BORROWED")}},
       Waits(3)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    Play(e,
         {Given(Env(3), 0), Given(Q(), 0), Given(LendBorrow("A", 2), 0), Given(Lend("B", 1), 0)});
    Play(e, c.holders);
    Play(e, {{J(3, "B", 0, 1, 3000), 3000, c.b_job}});
  }
}

TEST(HoldDispatches, NothingStartsAndNothingIsPreemptedUntilTheRelease) {
  // A borrows B's idle instance; C's own instance is free. While the driver holds dispatches,
  // B's job takes nothing back and C's does not start, and both say why; the release runs the
  // pass, and both happen then as they would have.
  Engine e;
  Play(e, {
              Given(Env(3), 0),
              Given(Q(), 0),
              Given(LendBorrow("A", 1), 0),
              Given(Lend("B", 1), 0),
              Given(Reserve("C", 1), 0),
              {J(1, "A", 5, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
              {J(3, "A", 5, 1, 2000), 2000, Dispatched(3, "BORROWED")},
              {HoldDispatches{.held = true, .reason = "its disk is full"}, 3000, {}},
              {J(4, "B", 0, 1, 4000), 4000, Waits(4)},
              {J(5, "C", 0, 1, 4000), 4000, Waits(5)},
              {Tick{}, 5000, {}},
          });
  for (const JobId id : {JobId{4}, JobId{5}}) {
    const Result<WaitReason> why = e.Explain(id);
    ASSERT_TRUE(why.ok()) << why.status().ToString();
    EXPECT_EQ(why->rule, WaitRule::kDispatchesHeld);
    EXPECT_EQ(why->message, "The server holds every dispatch: its disk is full.");
    EXPECT_EQ(why->would_start, "The server taking dispatches again.");
    EXPECT_EQ(e.WaitSentence(id).value(), why->message);
  }
  Engine refused;
  model::Decisions out;
  EXPECT_FALSE(refused.Apply(HoldDispatches{.held = true}, 0, &out).ok());  // no reason

  const std::vector<std::string> released =
      Lines(MustApply(e, HoldDispatches{.held = false}, 6000));
  EXPECT_EQ(released, std::vector<std::string>(
                          {"status 5 RUNNABLE->SCHEDULED", "dispatch 5 attempt=1 WITHIN_QUOTA",
                           "preempt by 4: 3@A/RECLAIM{prio=5,lost=4000,started=2000}",
                           StopLine(3, 1, kReclaim), InProgress(3, "SCHEDULED", kReclaim)}))
      << ::testing::PrintToString(released);
  EXPECT_TRUE(Lines(MustApply(e, HoldDispatches{.held = false}, 6000)).empty());
}

TEST(InSharePreemption, OnlyStrictlyLowerPriorityAndOnlyWhenEnabled) {
  struct Case {
    bool enabled;
    std::int32_t running, waiting;
    std::vector<std::string> expected;
  };
  const Case cases[] = {
      {true, 1, 2,
       Cat(Waits(2), {"preempt by 2: 1@A/IN_SHARE{prio=1,lost=1000,started=1000}",
                      StopLine(1, 1, kInShare), InProgress(1, "SCHEDULED", kInShare)})},
      {true, 1, 1, Waits(2)},
      {true, 2, 1, Waits(2)},
      {false, 1, 2, Waits(2)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "enabled=" << c.enabled << " running=" << c.running
                                      << " waiting=" << c.waiting);
    Engine e;
    Play(e, {
                Given(Env(1), 0),
                Given(Q(), 0),
                Given(Reserve("A", 1, c.enabled), 0),
                {J(1, "A", c.running, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
                {J(2, "A", c.waiting, 1, 2000), 2000, c.expected},
            });
  }
}

TEST(InSharePreemption, ReclaimsFromOtherSharesWhenThePoolIsStillShort) {
  // A (LEND, limit 2, in-share) runs a priority-0 job; B borrows A's other instance. A
  // priority-5 job of A needing 2 takes its own lower-priority job, then reclaims from B.
  Engine e;
  Play(e,
       {
           Given(Env(3), 0),
           Given(Q(), 0),
           Given(Lend("A", 2, /*in_share=*/true), 0),
           Given(LendBorrow("B", 1), 0),
           {J(1, "A", 0, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
           {J(2, "B", 3, 1, 1000), 1000, Dispatched(2, "WITHIN_QUOTA")},
           {J(3, "B", 1, 1, 2000), 2000, Dispatched(3, "BORROWED")},
           {J(4, "A", 5, 2, 4000), 4000,
            Cat(Waits(4), {"preempt by 4: 1@A/IN_SHARE{prio=0,lost=3000,started=1000} "
                           "3@B/RECLAIM{prio=1,lost=2000,started=2000}",
                           StopLine(1, 1, kInShare), InProgress(1, "SCHEDULED", kInShare),
                           StopLine(3, 1, kReclaim), InProgress(3, "SCHEDULED", kReclaim)})},
           {Ended(1, 1, AttemptOutcome::kFailed, "stopped"),
            5000,
            {"preempted 1 attempt=1 IN_SHARE lost=4000 count=1",
             Requeued(1, "SCHEDULED", kInShare)}},
           {Ended(3, 1, AttemptOutcome::kFailed, "stopped"),
            6000,
            {"preempted 3 attempt=1 RECLAIM lost=4000 count=1", Requeued(3, "SCHEDULED", kReclaim),
             "status 4 RUNNABLE->SCHEDULED", "dispatch 4 attempt=1 PREEMPTOR"}},
       });
}

TEST(Nomination, ReservedCapacityIsGivenToNoOneElse) {
  // Pool 2. A (limit 2, in-share) runs two priority-0 jobs; a priority-5 job needing 2 preempts
  // both. When the first victim has ended, the free instance stays reserved for the preemptor:
  // neither the requeued victim nor B's job takes it. The preemptor is dispatched (PREEMPTOR)
  // when the last victim reports AttemptEnded.
  Engine e;
  Play(e, {
              Given(Env(2), 0),
              Given(Q(), 0),
              Given(Reserve("A", 2, /*in_share=*/true), 0),
              Given(Reserve("B", 1), 0),
              {J(1, "A", 0, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
              {J(2, "A", 0, 1, 1000), 1000, Dispatched(2, "WITHIN_QUOTA")},
              {J(3, "A", 5, 2, 2000), 2000,
               Cat(Waits(3), {"preempt by 3: 1@A/IN_SHARE{prio=0,lost=1000,started=1000} "
                              "2@A/IN_SHARE{prio=0,lost=1000,started=1000}",
                              StopLine(1, 1, kInShare), InProgress(1, "SCHEDULED", kInShare),
                              StopLine(2, 1, kInShare), InProgress(2, "SCHEDULED", kInShare)})},
              {Ended(1, 1, AttemptOutcome::kFailed, "stopped"),
               3000,
               {"preempted 1 attempt=1 IN_SHARE lost=2000 count=1",
                Requeued(1, "SCHEDULED", kInShare)}},
              {J(4, "B", 9, 1, 3000), 3000, Waits(4)},
          });
  const std::optional<JobView> preemptor = e.GetJob(3);
  ASSERT_TRUE(preemptor.has_value());
  EXPECT_TRUE(preemptor->nominated);
  EXPECT_EQ(preemptor->status, JobStatus::kRunnable);
  Result<QueueUsage> usage = e.Usage("q");
  ASSERT_TRUE(usage.ok());
  ASSERT_EQ(usage->shares.size(), 2u);
  ASSERT_EQ(usage->shares[0].name, "A");
  ASSERT_EQ(usage->shares[0].units.size(), 1u);
  const UnitUsage& a = usage->shares[0].units[0];
  EXPECT_EQ(a.used, 1);
  EXPECT_EQ(a.stopping, 1);
  EXPECT_EQ(a.reserved, 2);
  EXPECT_EQ(e.FrontOfQueue("q", "", 10), (std::vector<JobId>{3, 4, 1}));
  Result<WaitReason> why = e.Explain(3);
  ASSERT_TRUE(why.ok());
  EXPECT_EQ(why->rule, WaitRule::kNominated);
  EXPECT_EQ(why->waiting_for, (std::vector<JobId>{2}));
  Play(e, {{Ended(2, 1, AttemptOutcome::kFailed, "stopped"),
            4000,
            {"preempted 2 attempt=1 IN_SHARE lost=3000 count=1", Requeued(2, "SCHEDULED", kInShare),
             "status 3 RUNNABLE->SCHEDULED", "dispatch 3 attempt=1 PREEMPTOR"}}});
}

TEST(Nomination, AYoungerNomineeDoesNotTakeAnOlderOnesReservation) {
  // Pool 4; A owns 2, B and C one each, all lend and borrow. B runs three jobs, two of them on
  // A's and C's idle instances; one instance is free. A's job 4 needs 2: it reserves the free
  // instance and reclaims one of B's. Then C's job 5 needs its one instance back and reclaims
  // B's other borrowed job. The free instance is 4's: 5 must wait for its own victim rather
  // than start at once on it (found by `allot sim` on a Pollux workload, where 4 then could not
  // start when its victim ended).
  Engine e;
  Play(e, {Given(Env(4), 0), Given(Q(), 0), Given(LendBorrow("A", 2), 0),
           Given(LendBorrow("B", 1), 0), Given(LendBorrow("C", 1), 0)});
  for (JobId id = 1; id <= 3; ++id) MustApply(e, J(id, "B", 0, 1, 1000), 1000);
  const Decisions first = MustApply(e, J(4, "A", 0, 2, 2000), 2000);
  ASSERT_EQ(Only<Preemption>(first).size(), 1u);
  const JobId victim_of_4 = Only<Preemption>(first)[0].victims.at(0).victim;
  const Decisions second = MustApply(e, J(5, "C", 0, 1, 3000), 3000);
  ASSERT_EQ(Only<Preemption>(second).size(), 1u);
  const JobId victim_of_5 = Only<Preemption>(second)[0].victims.at(0).victim;
  EXPECT_NE(victim_of_4, victim_of_5);
  EXPECT_TRUE(Only<Dispatch>(second).empty()) << "5 started on 4's reserved instance";

  const Decisions ended_4 =
      MustApply(e, Ended(victim_of_4, 1, AttemptOutcome::kFailed, "stopped"), 4000);
  ASSERT_EQ(Only<Dispatch>(ended_4).size(), 1u);
  EXPECT_EQ(Only<Dispatch>(ended_4)[0].job, 4u);
  EXPECT_EQ(Only<Dispatch>(ended_4)[0].mode, DispatchMode::kPreemptor);
  const Decisions ended_5 =
      MustApply(e, Ended(victim_of_5, 1, AttemptOutcome::kFailed, "stopped"), 5000);
  ASSERT_EQ(Only<Dispatch>(ended_5).size(), 1u);
  EXPECT_EQ(Only<Dispatch>(ended_5)[0].job, 5u);
}

TEST(Nomination, ANormalDispatchDoesNotTakeWhatAVictimFreedForItsNominee) {
  // Pool 6; A, B and C own 2 each, all lend and borrow. B runs 1-4 (two of them on A's idle
  // instances), C runs 5 (2 instances). A's 6 (needs 2) reclaims two of B's. C's 7 (priority 5,
  // needs 1) preempts 5 in-share, which frees one instance more than 7 needs. When the first of
  // 6's victims has ended, the instance it freed is 6's: the victim may not borrow it back on the
  // strength of the instance 5 will free later (found by the simulator's random replays; 6 then
  // could not start when its second victim ended).
  Engine e;
  Play(e, {Given(Env(6), 0), Given(Q(), 0), Given(LendBorrow("A", 2), 0),
           Given(LendBorrow("B", 2), 0), Given(LendBorrow("C", 2, -1, /*in_share=*/true), 0)});
  for (JobId id = 1; id <= 4; ++id) MustApply(e, J(id, "B", 0, 1, 1000), 1000);
  MustApply(e, J(5, "C", 0, 2, 1000), 1000);
  const Decisions reclaim = MustApply(e, J(6, "A", 0, 2, 2000), 2000);
  ASSERT_EQ(Only<Preemption>(reclaim).size(), 1u);
  ASSERT_EQ(Only<Preemption>(reclaim)[0].victims.size(), 2u);
  const JobId first = Only<Preemption>(reclaim)[0].victims[0].victim;
  const JobId second = Only<Preemption>(reclaim)[0].victims[1].victim;
  const Decisions in_share = MustApply(e, J(7, "C", 5, 1, 3000), 3000);
  ASSERT_EQ(Only<Preemption>(in_share).size(), 1u);
  EXPECT_EQ(Only<Preemption>(in_share)[0].victims.at(0).victim, 5u);

  const Decisions first_ended =
      MustApply(e, Ended(first, 1, AttemptOutcome::kFailed, "stopped"), 4000);
  EXPECT_TRUE(Only<Dispatch>(first_ended).empty()) << Lines(first_ended).back();
  const Decisions second_ended =
      MustApply(e, Ended(second, 1, AttemptOutcome::kFailed, "stopped"), 5000);
  ASSERT_FALSE(Only<Dispatch>(second_ended).empty());
  EXPECT_EQ(Only<Dispatch>(second_ended)[0].job, 6u);
  EXPECT_EQ(Only<Dispatch>(second_ended)[0].mode, DispatchMode::kPreemptor);
}

TEST(Nomination, AVictimThatWouldReclaimItsNomineeAtOnceTakesItsCapacityBack) {
  // Pool 6; A owns 2, B owns 4, both lend and borrow. B runs 1 and 2 within its limit and 3 on
  // A's idle instances; A's 4 reclaims 3. While 3 stops, 1 ends and A's 5 borrows the instances
  // 1 freed. When 3 has ended it is within B's limit again, and 4 would only borrow: started, it
  // would be the cheapest victim of 3's reclaim at once (work lost: none), so 3 would have lost
  // its work for nothing. 4 goes back to waiting and 3 takes its capacity back; 4 starts when
  // A's borrowing ends (found by the slow property test, seeds 8245 and 17393). With 4 at a
  // higher priority than 5, 3 would reclaim 5 instead: 4 starts.
  struct Case {
    std::string name;
    std::int32_t nominee_priority;
    std::vector<std::string> after_victim_ended;
    std::vector<std::string> after_borrower_ended;  // none: not played
  };
  const std::string requeued[] = {"preempted 3 attempt=1 RECLAIM lost=8000 count=1",
                                  Requeued(3, "SCHEDULED", kReclaim)};
  const Case cases[] = {
      {"equal priorities: 4 waits, 3 runs again",
       0,
       {requeued[0], requeued[1], "status 3 RUNNABLE->SCHEDULED",
        "dispatch 3 attempt=2 WITHIN_QUOTA"},
       {"status 5 SCHEDULED->SUCCEEDED", "status 4 RUNNABLE->SCHEDULED",
        "dispatch 4 attempt=1 WITHIN_QUOTA"}},
      {"4 above A's borrower: 4 starts, 3 reclaims the borrower",
       5,
       {requeued[0], requeued[1], "status 4 RUNNABLE->SCHEDULED", "dispatch 4 attempt=1 PREEMPTOR",
        "preempt by 3: 5@A/RECLAIM{prio=0,lost=2000,started=6000}", StopLine(5, 1, kReclaim),
        InProgress(5, "SCHEDULED", kReclaim)},
       {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    Play(e, {Given(Env(6), 0),
             Given(Q(), 0),
             Given(LendBorrow("A", 2), 0),
             Given(LendBorrow("B", 4), 0),
             Given(J(1, "B", 0, 2, 1000), 1000),
             Given(J(2, "B", 0, 2, 2000), 2000),
             {J(3, "B", 0, 2, 3000), 3000, Dispatched(3, "BORROWED")},
             {J(4, "A", c.nominee_priority, 2, 4000), 4000,
              Cat(Waits(4), {"preempt by 4: 3@B/RECLAIM{prio=0,lost=2000,started=3000}",
                             StopLine(3, 1, kReclaim), InProgress(3, "SCHEDULED", kReclaim)})},
             {Ended(1), 5000, {"status 1 SCHEDULED->SUCCEEDED"}},
             {J(5, "A", 0, 2, 6000), 6000, Dispatched(5, "BORROWED")},
             {Ended(3, 1, AttemptOutcome::kFailed, "stopped"), 7000, c.after_victim_ended}});
    if (c.after_borrower_ended.empty()) continue;
    EXPECT_EQ(e.GetJob(4)->status, JobStatus::kRunnable);
    EXPECT_EQ(e.GetJob(4)->attempt, 0);
    Play(e, {{Ended(5), 8000, c.after_borrower_ended}});
  }
}

TEST(VictimOrder, LowerPriorityThenLeastWorkLostThenMostRecentThenId) {
  // A (in-share) is full; a priority-9 job needing one instance at 10000 takes one victim.
  struct Running {
    JobId id;
    std::int32_t priority;
    std::int64_t need;
    Timestamp started;
    Timestamp checkpoint;  // 0 = none
  };
  struct Case {
    std::string name;
    std::vector<Running> running;
    std::string preemption;
  };
  const Case cases[] = {
      {"lower priority first, whatever the work lost",
       {{1, 0, 1, 1000, 0}, {2, 1, 1, 5000, 0}},
       "preempt by 9: 1@A/IN_SHARE{prio=0,lost=9000,started=1000}"},
      {"least work lost since the last checkpoint",
       {{1, 0, 1, 1000, 8000}, {2, 0, 1, 2000, 0}},
       "preempt by 9: 1@A/IN_SHARE{prio=0,lost=2000,started=1000}"},
      {"work lost counts instances: 1 x 9000 < 2 x 6000",
       {{1, 0, 1, 1000, 0}, {2, 0, 2, 4000, 0}},
       "preempt by 9: 1@A/IN_SHARE{prio=0,lost=9000,started=1000}"},
      {"work lost counts instances: 2 x 3000 < 1 x 9000",
       {{1, 0, 1, 1000, 0}, {2, 0, 2, 7000, 0}},
       "preempt by 9: 2@A/IN_SHARE{prio=0,lost=6000,started=7000}"},
      {"equal work lost: the most recently started",
       {{1, 0, 1, 1000, 5000}, {2, 0, 1, 5000, 0}},
       "preempt by 9: 2@A/IN_SHARE{prio=0,lost=5000,started=5000}"},
      {"all equal: by id",
       {{1, 0, 1, 1000, 0}, {2, 0, 1, 1000, 0}},
       "preempt by 9: 1@A/IN_SHARE{prio=0,lost=9000,started=1000}"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::int64_t total = 0;
    for (const Running& r : c.running) total += r.need;
    Engine e;
    Play(e, {Given(Env(total), 0), Given(Q(), 0), Given(Reserve("A", total, true), 0)});
    for (const Running& r : c.running) {
      Play(e, {{J(r.id, "A", r.priority, r.need, r.started), r.started,
                Dispatched(r.id, "WITHIN_QUOTA")}});
    }
    for (const Running& r : c.running) {
      if (r.checkpoint != 0) {
        Play(e, {{CheckpointObserved{r.id, 1, r.checkpoint}, r.checkpoint, {}}});
        EXPECT_EQ(e.GetJob(r.id)->last_checkpoint, r.checkpoint);
      }
    }
    const Decisions d = MustApply(e, J(9, "A", 9, 1, 10000), 10000);
    const std::vector<Preemption> p = Only<Preemption>(d);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(DecisionToString(p[0]), c.preemption);
    ASSERT_EQ(p[0].victims.size(), 1u);
    EXPECT_EQ(p[0].victims[0].key.id, p[0].victims[0].victim);
    EXPECT_EQ(Only<Stop>(d).size(), 1u);
  }
}

TEST(VictimOrder, NewestFirstIgnoresCheckpointsAndInstances) {
  // The checkpoint-blind order the simulator compares against (Kueue's): lower priority, then
  // the most recently started, then id; checkpoints and instance counts do not matter.
  struct Running {
    JobId id;
    std::int32_t priority;
    std::int64_t need;
    Timestamp started;
    Timestamp checkpoint;  // 0 = none
  };
  struct Case {
    std::string name;
    std::vector<Running> running;
    JobId victim;
  };
  const Case cases[] = {
      {"lower priority first", {{1, 0, 1, 1000, 0}, {2, 1, 1, 5000, 0}}, 1},
      {"a fresh checkpoint does not protect the older job",
       {{1, 0, 1, 1000, 0}, {2, 0, 1, 2000, 9500}},
       2},
      {"more instances do not protect the newer job", {{1, 0, 1, 1000, 0}, {2, 0, 4, 7000, 0}}, 2},
      {"all equal: by id", {{1, 0, 1, 1000, 0}, {2, 0, 1, 1000, 0}}, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::int64_t total = 0;
    for (const Running& r : c.running) total += r.need;
    Engine e(EngineOptions{VictimOrder::kNewestFirst});
    Play(e, {Given(Env(total), 0), Given(Q(), 0), Given(Reserve("A", total, true), 0)});
    for (const Running& r : c.running) {
      Play(e, {{J(r.id, "A", r.priority, r.need, r.started), r.started,
                Dispatched(r.id, "WITHIN_QUOTA")}});
    }
    for (const Running& r : c.running) {
      if (r.checkpoint != 0)
        Play(e, {{CheckpointObserved{r.id, 1, r.checkpoint}, r.checkpoint, {}}});
    }
    const Decisions d = MustApply(e, J(9, "A", 9, 1, 10000), 10000);
    const std::vector<Preemption> p = Only<Preemption>(d);
    ASSERT_EQ(p.size(), 1u);
    ASSERT_EQ(p[0].victims.size(), 1u);
    EXPECT_EQ(p[0].victims[0].victim, c.victim);
  }
}

TEST(VictimOrder, AlreadyStoppingJobsCountFirst) {
  // A (limit 2, in-share) runs two priority-0 jobs; job 1 is being terminated. Its instance
  // counts as free in the projected view, so a 1-instance preemptor takes no victim and a
  // 2-instance one takes only job 2.
  struct Case {
    std::int64_t need;
    std::vector<std::string> submit, end2, end1;
  };
  const Case cases[] = {
      {1,
       Waits(3),
       {},
       {"status 1 SCHEDULED->FAILED \"user\"", "status 3 RUNNABLE->SCHEDULED",
        "dispatch 3 attempt=1 WITHIN_QUOTA"}},
      {2,
       Cat(Waits(3), {"preempt by 3: 2@A/IN_SHARE{prio=0,lost=2000,started=1000}",
                      StopLine(2, 1, kInShare), InProgress(2, "SCHEDULED", kInShare)}),
       {"preempted 2 attempt=1 IN_SHARE lost=3000 count=1", Requeued(2, "SCHEDULED", kInShare)},
       {"status 1 SCHEDULED->FAILED \"user\"", "status 3 RUNNABLE->SCHEDULED",
        "dispatch 3 attempt=1 PREEMPTOR"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("preemptor needs " + std::to_string(c.need));
    Engine e;
    Play(e, {
                Given(Env(2), 0),
                Given(Q(), 0),
                Given(Reserve("A", 2, true), 0),
                {J(1, "A", 0, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
                {J(2, "A", 0, 1, 1000), 1000, Dispatched(2, "WITHIN_QUOTA")},
                {TerminateJob{1, "user"}, 2000, {"stop 1 attempt=1 TERMINATION \"user\""}},
                {J(3, "A", 5, c.need, 3000), 3000, c.submit},
            });
    if (c.need == 1) {
      Play(e, {{Ended(1, 1, AttemptOutcome::kFailed, "killed"), 5000, c.end1}});
    } else {
      Play(e, {{Ended(2, 1, AttemptOutcome::kFailed, "killed"), 4000, c.end2},
               {Ended(1, 1, AttemptOutcome::kFailed, "killed"), 5000, c.end1}});
    }
  }
}

TEST(VictimSet, ReverseFillBackMakesItMinimal) {
  struct Case {
    std::string name;
    std::vector<Event> config;
    std::vector<Event> running;  // submitted at 1000, dispatched at once
    Event preemptor;             // submitted at 2000
    std::string preemption;
  };
  const Case cases[] = {
      {"greedy takes 1 then 2; 1 is given back",
       {Env(3), Q(), Reserve("A", 3, true)},
       {J(1, "A", 0, 1, 1000), J(2, "A", 1, 2, 1000)},
       J(3, "A", 5, 2, 2000),
       "preempt by 3: 2@A/IN_SHARE{prio=1,lost=2000,started=1000}"},
      {"both are needed",
       {Env(2), Q(), Reserve("A", 2, true)},
       {J(1, "A", 0, 1, 1000), J(2, "A", 1, 1, 1000)},
       J(3, "A", 5, 2, 2000),
       "preempt by 3: 1@A/IN_SHARE{prio=0,lost=1000,started=1000} "
       "2@A/IN_SHARE{prio=1,lost=1000,started=1000}"},
      {"a job holding no unit the preemptor is blocked on is never taken",
       {Environment("se", {{kG5, 1}, {kP4, 1}}), Q(),
        Share({.name = "A", .limits = {{kG5, 1}, {kP4, 1}}, .in_share_preemption = true})},
       {Job({.id = 1, .share = "A", .need = {{kP4, 1}}}, 1000),
        Job({.id = 2, .share = "A", .priority = 1, .need = {{kG5, 1}}}, 1000)},
       J(3, "A", 5, 1, 2000),
       "preempt by 3: 2@A/IN_SHARE{prio=1,lost=1000,started=1000}"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    for (const Event& ev : c.config) MustApply(e, ev, 0);
    for (const Event& ev : c.running) {
      EXPECT_EQ(Only<Dispatch>(MustApply(e, ev, 1000)).size(), 1u);
    }
    const Decisions d = MustApply(e, c.preemptor, 2000);
    const std::vector<Preemption> p = Only<Preemption>(d);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(DecisionToString(p[0]), c.preemption);
    EXPECT_EQ(Only<Stop>(d).size(), p[0].victims.size());
  }
}

TEST(UpdateJobPriority, RaisedWaitingJobPreemptsInShare) {
  struct Case {
    bool in_share;
    std::int32_t raised_to;
    std::vector<std::string> expected;
  };
  const Case cases[] = {
      {true,
       4,
       {"preempt by 2: 1@A/IN_SHARE{prio=3,lost=2000,started=1000}", StopLine(1, 1, kInShare),
        InProgress(1, "SCHEDULED", kInShare)}},
      {true, 3, {}},
      {false, 4, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "in_share=" << c.in_share << " to " << c.raised_to);
    Engine e;
    Play(e, {Given(Env(1), 0),
             Given(Q(), 0),
             Given(Reserve("A", 1, c.in_share), 0),
             {J(1, "A", 3, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
             {J(2, "A", 1, 1, 2000), 2000, Waits(2)},
             {UpdateJobPriority{2, c.raised_to}, 3000, c.expected}});
    EXPECT_EQ(e.GetJob(2)->priority, c.raised_to);
    EXPECT_EQ(e.GetJob(2)->nominated, !c.expected.empty());
  }
}

TEST(UpdateJobPriority, LoweredRunningJobBecomesTheLikelierVictim) {
  // Jobs 1 (started 1000) and 2 (started 2000) run at priority 5; job 2 has lost less work.
  struct Case {
    std::optional<std::int32_t> lower_job1_to;
    std::string preemption;
  };
  const Case cases[] = {
      {std::nullopt, "preempt by 3: 2@A/IN_SHARE{prio=5,lost=2000,started=2000}"},
      {1, "preempt by 3: 1@A/IN_SHARE{prio=1,lost=3000,started=1000}"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.lower_job1_to ? "lowered" : "not lowered");
    Engine e;
    Play(e, {Given(Env(2), 0),
             Given(Q(), 0),
             Given(Reserve("A", 2, true), 0),
             {J(1, "A", 5, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
             {J(2, "A", 5, 1, 2000), 2000, Dispatched(2, "WITHIN_QUOTA")}});
    if (c.lower_job1_to) Play(e, {{UpdateJobPriority{1, *c.lower_job1_to}, 3000, {}}});
    const Decisions d = MustApply(e, J(3, "A", 9, 1, 4000), 4000);
    const std::vector<Preemption> p = Only<Preemption>(d);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(DecisionToString(p[0]), c.preemption);
  }
}

TEST(WorkLost, CheckpointDuringGracePeriodKeepsTheWork) {
  // A (limit 2, in-share) runs a 2-instance priority-0 job dispatched at 1000. A priority-5 job
  // needing 2 stops it at T = 10000: the victim key holds the estimate then, 2 x (10000 - 1000).
  // Within the grace period the victim checkpoints (T + 5000) and then ends (T + 6000): the
  // preempted attempt has lost only the work since that checkpoint, 2 x 1000.
  constexpr Timestamp kT = 10000;
  Engine e;
  Play(e, {
              Given(Env(2), 0),
              Given(Q(), 0),
              Given(Reserve("A", 2, /*in_share=*/true), 0),
              {J(1, "A", 0, 2, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
          });

  const Decisions stop = MustApply(e, J(2, "A", 5, 2, kT), kT);
  EXPECT_EQ(Lines(stop),
            Cat(Waits(2), {"preempt by 2: 1@A/IN_SHARE{prio=0,lost=18000,started=1000}",
                           StopLine(1, 1, kInShare), InProgress(1, "SCHEDULED", kInShare)}));
  const std::vector<Preemption> p = Only<Preemption>(stop);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].preemptor, 2u);
  ASSERT_EQ(p[0].victims.size(), 1u);
  EXPECT_EQ(p[0].victims[0].victim, 1u);
  EXPECT_EQ(p[0].victims[0].share, "A");
  EXPECT_EQ(p[0].victims[0].rule, kInShare);
  EXPECT_EQ(p[0].victims[0].key.priority, 0);
  EXPECT_EQ(p[0].victims[0].key.work_lost, 18000);
  EXPECT_EQ(p[0].victims[0].key.started_at, 1000);
  EXPECT_EQ(p[0].victims[0].key.id, 1u);

  Play(e, {{CheckpointObserved{1, 1, kT + 5000}, kT + 5000, {}}});
  ASSERT_TRUE(e.GetJob(1).has_value());
  EXPECT_EQ(e.GetJob(1)->last_checkpoint, kT + 5000);
  EXPECT_TRUE(e.GetJob(1)->stopping);

  const Decisions end = MustApply(e, Ended(1, 1, AttemptOutcome::kFailed, "stopped"), kT + 6000);
  EXPECT_EQ(Lines(end), (std::vector<std::string>{
                            "preempted 1 attempt=1 IN_SHARE lost=2000 count=1",
                            Requeued(1, "SCHEDULED", kInShare), "status 2 RUNNABLE->SCHEDULED",
                            "dispatch 2 attempt=1 PREEMPTOR"}));
  const std::vector<PreemptedAttempt> pa = Only<PreemptedAttempt>(end);
  ASSERT_EQ(pa.size(), 1u);
  EXPECT_EQ(pa[0].job, 1u);
  EXPECT_EQ(pa[0].attempt, 1);
  EXPECT_EQ(pa[0].rule, kInShare);
  EXPECT_EQ(pa[0].work_lost, 2 * 1000);
  EXPECT_EQ(pa[0].preempted_count, 1);
  EXPECT_EQ(pa[0].reason, PreemptionReason(kInShare));
  EXPECT_EQ(e.GetJob(1)->status, JobStatus::kRunnable);
  EXPECT_EQ(e.GetJob(1)->preemptions, 1);
}

// ---------------------------------------------------------------- issue 9, item 14

// Ends, in `order`, the attempt of every job that is stopping when its turn comes (a job that is
// not stopping has no process exiting) and returns every Dispatch these ends produced.
std::vector<Dispatch> ExitInOrder(Engine& e, const std::vector<JobId>& order, Timestamp* now) {
  std::vector<Dispatch> dispatched;
  for (JobId id : order) {
    const std::optional<JobView> v = e.GetJob(id);
    if (!v.has_value() || !v->stopping) continue;
    *now += 1000;
    const Decisions d =
        MustApply(e, Ended(id, v->attempt, AttemptOutcome::kFailed, "stopped"), *now);
    for (const Dispatch& x : Only<Dispatch>(d)) dispatched.push_back(x);
  }
  return dispatched;
}

TEST(InShareInABorrowingShare, IssueReproducerOneVictimAndNoRestart) {
  // Pool 3. p (LEND_AND_BORROW, limit 2, borrowLimit 50 so it may borrow 1, in-share) runs x1,
  // x2 and x3 at priority 1, x3 on l's idle instance; l (LEND, limit 1) is idle. hi (priority
  // 9) arrives in p. It may borrow l's instance as x3 did, so it needs one victim, not two (which
  // would bring it within p's limit, and the second victim would borrow its instance back at
  // once). Whatever order the processes exit in, only x3 is stopped, hi starts when x3 has
  // ended, and no victim is dispatched again meanwhile.
  struct Case {
    std::string name;
    std::vector<JobId> exit_order;
  };
  const Case cases[] = {
      {"x3 exits first", {3, 2}},
      {"x2 exits first", {2, 3}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    Play(e, {
                Given(Env(3), 0),
                Given(Q(), 0),
                Given(LendBorrow("p", 2, 50, /*in_share=*/true), 0),
                Given(Lend("l", 1), 0),
                {J(1, "p", 1, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
                {J(2, "p", 1, 1, 2000), 2000, Dispatched(2, "WITHIN_QUOTA")},
                {J(3, "p", 1, 1, 3000), 3000, Dispatched(3, "BORROWED")},
                {J(9, "p", 9, 1, 10000), 10000,
                 Cat(Waits(9), {"preempt by 9: 3@p/IN_SHARE{prio=1,lost=7000,started=3000}",
                                StopLine(3, 1, kInShare), InProgress(3, "SCHEDULED", kInShare)})},
            });
    Timestamp now = 10000;
    const std::vector<Dispatch> dispatched = ExitInOrder(e, c.exit_order, &now);
    ASSERT_EQ(dispatched.size(), 1u);
    EXPECT_EQ(dispatched[0].job, 9u);
    EXPECT_EQ(dispatched[0].mode, DispatchMode::kPreemptor);
    EXPECT_EQ(e.GetJob(3)->status, JobStatus::kRunnable);
    EXPECT_EQ(e.GetJob(3)->preemptions, 1);
    for (JobId id : {JobId{1}, JobId{2}}) {
      EXPECT_EQ(e.GetJob(id)->status, JobStatus::kScheduled) << "job " << id;
      EXPECT_EQ(e.GetJob(id)->preemptions, 0) << "job " << id;
    }
  }
}

TEST(InShareInABorrowingShare, VictimsOnlyUntilThePreemptorFitsByBorrowing) {
  // p (LEND_AND_BORROW, in-share) runs jobs 1..n at priority 0, started 1000 apart, some on l's
  // idle capacity; a priority-9 job of p takes victims only until it fits within p's limit plus
  // what p may still borrow (its cap and the lendable idle capacity), never down to p's limit.
  struct Case {
    std::string name;
    std::int64_t pool, p_limit, borrow_limit, l_limit, l_running, p_running, need;
    std::vector<JobId> victims;  // in victim order
  };
  const Case cases[] = {
      {"the borrow cap binds: 2 victims (4 would bring p to its limit)",
       6,
       4,
       50,
       2,
       0,
       6,
       2,
       {6, 5}},
      {"the lendable idle capacity binds, not the pool: 1 victim (3 would)",
       6,
       2,
       200,
       2,
       0,
       4,
       1,
       {4}},
      {"l runs a job of its own: its idle capacity and the pool bind: 1 victim (3 would)",
       5,
       2,
       200,
       3,
       1,
       4,
       1,
       {4}},
      {"borrowLimit 0: nothing to borrow, down to p's limit as before",
       4,
       2,
       0,
       2,
       0,
       2,
       2,
       {2, 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    Play(e, {Given(Env(c.pool), 0), Given(Q(), 0),
             Given(LendBorrow("p", c.p_limit, c.borrow_limit, /*in_share=*/true), 0),
             Given(Lend("l", c.l_limit), 0)});
    for (std::int64_t k = 0; k < c.l_running; ++k) {
      const JobId id = 100 + static_cast<JobId>(k);
      ASSERT_EQ(Only<Dispatch>(MustApply(e, J(id, "l", 0, 1, 500), 500)).size(), 1u);
    }
    for (JobId id = 1; id <= static_cast<JobId>(c.p_running); ++id) {
      const Timestamp t = 1000 * static_cast<Timestamp>(id);
      ASSERT_EQ(Only<Dispatch>(MustApply(e, J(id, "p", 0, 1, t), t)).size(), 1u) << id;
    }
    const Decisions d = MustApply(e, J(9, "p", 9, c.need, 10000), 10000);
    const std::vector<Preemption> p = Only<Preemption>(d);
    ASSERT_EQ(p.size(), 1u);
    std::vector<JobId> victims;
    for (const VictimRecord& v : p[0].victims) {
      EXPECT_EQ(v.rule, kInShare);
      victims.push_back(v.victim);
    }
    EXPECT_EQ(victims, c.victims);
    // Once the victims have ended the preemptor starts, and no victim could start beside it.
    Timestamp now = 10000;
    const std::vector<Dispatch> dispatched = ExitInOrder(e, victims, &now);
    ASSERT_EQ(dispatched.size(), 1u);
    EXPECT_EQ(dispatched[0].job, 9u);
    for (JobId id : victims) EXPECT_EQ(e.GetJob(id)->status, JobStatus::kRunnable) << id;
  }
}

TEST(InShareInABorrowingShare, NoVictimThatWouldBorrowItsCapacityBack) {
  // Pool 4. p (LEND_AND_BORROW, limit 2, in-share) runs x1 (priority 1); q (LEND_AND_BORROW,
  // limit 1) runs y1 and y2, y2 (2 instances) on p's and l's idle instances. hi (priority 9, needs
  // 2) cannot fit by borrowing whatever p's own jobs it stops (the pool is full of q's borrowing),
  // and reclaim serves only a job within its share's limit. Stopping x1 would bring hi within
  // p's limit and let it reclaim y2, but then x1 would borrow l's instance back at once: that
  // set is refused and hi waits. (Before, x1 and y2 were stopped and x1 restarted at once.)
  Engine e;
  Play(e, {
              Given(Env(4), 0),
              Given(Q(), 0),
              Given(LendBorrow("p", 2, 100, /*in_share=*/true), 0),
              Given(LendBorrow("q", 1), 0),
              Given(Lend("l", 1), 0),
              {J(1, "p", 1, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
              {J(11, "q", 0, 1, 1000), 1000, Dispatched(11, "WITHIN_QUOTA")},
              {J(12, "q", 0, 2, 2000), 2000, Dispatched(12, "BORROWED")},
              {J(9, "p", 9, 2, 3000), 3000, Waits(9)},
              {Ended(12),
               4000,
               {"status 12 SCHEDULED->SUCCEEDED", "status 9 RUNNABLE->SCHEDULED",
                "dispatch 9 attempt=1 BORROWED"}},
          });
}

TEST(InShareInABorrowingShare, BorrowsNothingAnotherSharesWaitingJobIsOwed) {
  // p (LEND_AND_BORROW, limit 2, borrowLimit 50 so it may borrow 1, in-share) runs y1 and y2
  // (priority 1); l (LEND) runs a on its whole limit, and w waits in l behind it. a is
  // terminated: while it stops, w fits l's quota in the projected view and waits only for a to
  // go. hi (priority 5, needs 2) arrives in p meanwhile.
  // - Where the pool and l's idle capacity leave room for hi beside w, hi stops y2 and borrows.
  // - Where they do not, hi may not count on what w is owed. Stopping y2 and borrowing l's
  //   instance would leave w short, and w, within l's limit, would at once reclaim from p, now
  //   above its limit: y1 would be stopped by w, not by hi. hi stops y1 and y2 itself, within
  //   p's limit, and nobody reclaims. (Before, hi stopped y2, then w reclaimed y1.)
  struct Case {
    std::string name;
    std::int64_t l_limit;
    std::vector<JobId> victims;  // in victim order
  };
  const Case cases[] = {
      {"room for both: hi stops y2 and borrows beside w", 2, {2}},
      {"no room for both: hi stops y1 and y2, w starts", 1, {2, 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    Play(e, {
                Given(Env(2 + c.l_limit), 0),
                Given(Q(), 0),
                Given(LendBorrow("p", 2, 50, /*in_share=*/true), 0),
                Given(Lend("l", c.l_limit), 0),
                {J(1, "p", 1, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
                {J(2, "p", 1, 1, 2000), 2000, Dispatched(2, "WITHIN_QUOTA")},
                {J(3, "l", 0, c.l_limit, 3000), 3000, Dispatched(3, "WITHIN_QUOTA")},
                {J(4, "l", 0, 1, 4000), 4000, Waits(4)},
            });
    ASSERT_TRUE(Only<Preemption>(MustApply(e, TerminateJob{3, "user"}, 5000)).empty());
    const Decisions d = MustApply(e, J(9, "p", 5, 2, 6000), 6000);
    const std::vector<Preemption> p = Only<Preemption>(d);
    ASSERT_EQ(p.size(), 1u) << ::testing::PrintToString(Lines(d));
    EXPECT_EQ(p[0].preemptor, 9u);
    std::vector<JobId> victims;
    for (const VictimRecord& v : p[0].victims) {
      EXPECT_EQ(v.rule, kInShare);
      victims.push_back(v.victim);
    }
    EXPECT_EQ(victims, c.victims);
    // a ends: w starts within l's quota, and nobody reclaims. The victims end: hi starts.
    const Decisions on_end = MustApply(e, Ended(3), 7000);
    EXPECT_TRUE(Only<Preemption>(on_end).empty()) << ::testing::PrintToString(Lines(on_end));
    const std::vector<Dispatch> first = Only<Dispatch>(on_end);
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0].job, 4u);
    EXPECT_EQ(first[0].mode, DispatchMode::kWithinQuota);
    Timestamp now = 7000;
    const std::vector<Dispatch> then = ExitInOrder(e, victims, &now);
    ASSERT_EQ(then.size(), 1u);
    EXPECT_EQ(then[0].job, 9u);
    EXPECT_EQ(then[0].mode, DispatchMode::kPreemptor);
  }
}

TEST(Requeue, VictimsKeepTheirPlaceWhateverOrderTheyExitIn) {
  // Pool 3; A (RESERVE, limit 3, in-share) runs x1, x2, x3 at priority 1, created in that order.
  // hi (priority 9, needs 2) stops x3 and x2. While both are stopping one of them exits and x1
  // ends, which frees an instance beside hi's reservation. It goes to x2, the older victim,
  // whichever victim exited first: a younger one that is already requeued waits until the older
  // one is back (unless the older one will not be requeued: its preemption retries are spent).
  struct Case {
    std::string name;
    std::vector<JobId> first_exit;
    std::optional<std::int32_t> x2_retries;
    JobId restarts;  // the victim dispatched again
    JobStatus x2_end, x3_end;
    bool x3_kept_out;  // once x1 has ended, Explain(3) names x2
  };
  const Case cases[] = {
      {"x3 exits first: it waits for x2",
       {3},
       std::nullopt,
       2,
       JobStatus::kScheduled,
       JobStatus::kRunnable,
       true},
      {"x2 exits first", {2}, std::nullopt, 2, JobStatus::kScheduled, JobStatus::kRunnable, false},
      {"x3 exits first, x2 will fail (no preemption retry left): x3 goes",
       {3},
       0,
       3,
       JobStatus::kFailed,
       JobStatus::kScheduled,
       false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    Play(e, {Given(Env(3), 0), Given(Q(), 0), Given(Reserve("A", 3, /*in_share=*/true), 0)});
    for (JobId id = 1; id <= 3; ++id) {
      const Timestamp t = 1000 * static_cast<Timestamp>(id);
      const std::optional<std::int32_t> retries = id == 2 ? c.x2_retries : std::nullopt;
      MustApply(e,
                Job({.id = id,
                     .share = "A",
                     .priority = 1,
                     .need = {{kG5, 1}},
                     .preemption_retries = retries},
                    t),
                t);
    }
    const Decisions d = MustApply(e, J(9, "A", 9, 2, 10000), 10000);
    ASSERT_EQ(Only<Preemption>(d).size(), 1u);
    EXPECT_EQ(DecisionToString(Only<Preemption>(d)[0]),
              "preempt by 9: 3@A/IN_SHARE{prio=1,lost=7000,started=3000} "
              "2@A/IN_SHARE{prio=1,lost=8000,started=2000}");
    Timestamp now = 10000;
    std::vector<Dispatch> dispatched = ExitInOrder(e, c.first_exit, &now);
    EXPECT_TRUE(dispatched.empty());
    now += 1000;
    for (const Dispatch& x : Only<Dispatch>(MustApply(e, Ended(1), now))) dispatched.push_back(x);
    if (c.x3_kept_out) {
      Result<WaitReason> why = e.Explain(3);
      ASSERT_TRUE(why.ok());
      EXPECT_EQ(why->rule, WaitRule::kCapacityStopping);
      EXPECT_EQ(why->waiting_for, (std::vector<JobId>{2}));
      EXPECT_EQ(why->message,
                "The capacity is kept for preempted job 2 of quota share A, which comes first and "
                "is still stopping.");
    }
    for (const Dispatch& x : ExitInOrder(e, {2, 3}, &now)) dispatched.push_back(x);
    std::vector<JobId> victims_dispatched;
    int preemptor_dispatched = 0;
    for (const Dispatch& x : dispatched) {
      if (x.job == 9) {
        ++preemptor_dispatched;
      } else {
        victims_dispatched.push_back(x.job);
      }
    }
    EXPECT_EQ(victims_dispatched, (std::vector<JobId>{c.restarts}));
    EXPECT_EQ(preemptor_dispatched, 1);
    EXPECT_EQ(e.GetJob(9)->status, JobStatus::kScheduled);
    EXPECT_EQ(e.GetJob(2) ? e.GetJob(2)->status : JobStatus::kFailed, c.x2_end);
    EXPECT_EQ(e.GetJob(3)->status, c.x3_end);
  }
}

}  // namespace
}  // namespace allot::engine
