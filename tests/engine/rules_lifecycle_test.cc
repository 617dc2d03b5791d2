// Lifecycle rules of docs/design/engine.md: statuses, stops, retries, timeouts and
// preemptionRetriesBeforeTermination.

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

constexpr PreemptionRule kInShare = PreemptionRule::kInShare;
constexpr char kTimeoutReason[] = "Job attempt duration exceeded timeout";

std::string Redispatched(JobId id, int attempt) {
  return "dispatch " + Id(id) + " attempt=" + std::to_string(attempt) + " WITHIN_QUOTA";
}

// One share A (limit 2) in a pool of 2.
std::vector<Step> OneShare() {
  return {Given(Env(2), 0), Given(Q(), 0), Given(Reserve("A", 2), 0)};
}

TEST(Lifecycle, SubmittedRunnableScheduledStartingRunningThenTheOutcome) {
  struct Case {
    AttemptOutcome outcome;
    std::string reason;
    std::vector<std::string> ended;
    bool live;
  };
  const Case cases[] = {
      {AttemptOutcome::kSucceeded,
       "Received status from SageMaker: Training job completed",
       {"status 1 RUNNING->SUCCEEDED \"Received status from SageMaker: Training job completed\""},
       false},
      {AttemptOutcome::kFailed,
       "Received status from SageMaker: AlgorithmError: boom",
       {"status 1 RUNNING->FAILED \"Received status from SageMaker: AlgorithmError: boom\""},
       false},
      {AttemptOutcome::kRequeue,
       "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - no capacity",
       {"status 1 RUNNING->RUNNABLE \"CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - no capacity\"",
        "status 1 RUNNABLE->SCHEDULED", Redispatched(1, 2)},
       true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reason);
    Engine e;
    Play(e, OneShare());
    Play(e, {{J(1, "A", 0, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")}});
    EXPECT_EQ(e.GetJob(1)->status, JobStatus::kScheduled);
    EXPECT_EQ(e.GetJob(1)->attempt, 1);
    Play(e, {{Starting(1), 2000, {"status 1 SCHEDULED->STARTING"}}});
    EXPECT_EQ(e.GetJob(1)->status, JobStatus::kStarting);
    Play(e, {{Running(1), 3000, {"status 1 STARTING->RUNNING"}}});
    EXPECT_EQ(e.GetJob(1)->status, JobStatus::kRunning);
    Play(e, {{Ended(1, 1, c.outcome, c.reason), 4000, c.ended}});
    EXPECT_EQ(e.GetJob(1).has_value(), c.live);
    EXPECT_EQ(e.LiveJobs(), c.live ? 1u : 0u);
    if (c.live) {
      EXPECT_EQ(e.GetJob(1)->attempt, 2);
      EXPECT_EQ(e.GetJob(1)->failed_attempts, 0);
    }
  }
}

TEST(Lifecycle, ReportsForAnotherAttemptAreIgnored) {
  // Attempt 1 was requeued; attempt 2 is SCHEDULED. Reports naming attempts 1 or 3 are OK and
  // change nothing.
  const Event stale[] = {Starting(1, 1),
                         Running(1, 1),
                         CheckpointObserved{1, 1, 2500},
                         Ended(1, 1, AttemptOutcome::kFailed, "late"),
                         Starting(1, 3),
                         Ended(1, 3)};
  for (const Event& ev : stale) {
    SCOPED_TRACE(EventToString(ev));
    Engine e;
    Play(e, OneShare());
    Play(e, {{J(1, "A", 0, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
             {Ended(1, 1, AttemptOutcome::kRequeue, "lost"),
              2000,
              {"status 1 SCHEDULED->RUNNABLE \"lost\"", "status 1 RUNNABLE->SCHEDULED",
               Redispatched(1, 2)}},
             {ev, 3000, {}}});
    const std::optional<JobView> j = e.GetJob(1);
    ASSERT_TRUE(j.has_value());
    EXPECT_EQ(j->status, JobStatus::kScheduled);
    EXPECT_EQ(j->attempt, 2);
    EXPECT_EQ(j->last_checkpoint, 0);
  }
}

TEST(RetryStrategy, AttemptsAndFirstMatchingEvaluateOnExitRule) {
  const std::string internal = "Received status from SageMaker: InternalServerError: try again";
  const std::string algorithm = "Received status from SageMaker: AlgorithmError: exit 1";
  using Rules = std::vector<EvaluateOnExit>;
  struct Case {
    std::string name;
    int attempts;
    Rules rules;
    std::string reason;
    bool retried;
  };
  const Case cases[] = {
      {"one attempt, no rule", 1, {}, algorithm, false},
      {"two attempts, no rule: retry", 2, {}, algorithm, true},
      {"EXIT on *", 2, {{RetryAction::kExit, "*"}}, algorithm, false},
      {"SDK default, internal error: retry",
       2,
       {{RetryAction::kRetry, "Received status from SageMaker: InternalServerError*"},
        {RetryAction::kExit, "*"}},
       internal,
       true},
      {"SDK default, algorithm error: exit",
       2,
       {{RetryAction::kRetry, "Received status from SageMaker: InternalServerError*"},
        {RetryAction::kExit, "*"}},
       algorithm,
       false},
      {"no rule matches: retry", 2, {{RetryAction::kExit, "*CapacityError*"}}, algorithm, true},
      {"the first match wins",
       2,
       {{RetryAction::kExit, "*AlgorithmError*"}, {RetryAction::kRetry, "*"}},
       algorithm,
       false},
      {"RETRY cannot exceed attempts", 1, {{RetryAction::kRetry, "*"}}, algorithm, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    Play(e, OneShare());
    Play(e, {{Job({.id = 1,
                   .share = "A",
                   .need = {{kG5, 1}},
                   .attempts = c.attempts,
                   .evaluate_on_exit = c.rules},
                  1000),
              1000, Dispatched(1, "WITHIN_QUOTA")}});
    const std::vector<std::string> expected =
        c.retried ? std::vector<std::string>{"status 1 SCHEDULED->RUNNABLE \"" + c.reason + "\"",
                                             "status 1 RUNNABLE->SCHEDULED", Redispatched(1, 2)}
                  : std::vector<std::string>{"status 1 SCHEDULED->FAILED \"" + c.reason + "\""};
    Play(e, {{Ended(1, 1, AttemptOutcome::kFailed, c.reason), 2000, expected}});
    if (c.retried) {
      EXPECT_EQ(e.GetJob(1)->failed_attempts, 1);
    }
  }
}

// onStatusReason is up to 512 characters, as the wire counts them: 300 two-byte characters (600
// bytes) are accepted, 513 characters are not.
TEST(RetryStrategy, OnStatusReasonIsCountedInCharacters) {
  std::string accented;
  for (int i = 0; i < 300; ++i) accented += "\xC3\xA9";
  Engine e;
  Play(e, OneShare());
  Decisions out;
  EXPECT_TRUE(e.Apply(Job({.id = 1,
                           .share = "A",
                           .need = {{kG5, 1}},
                           .attempts = 2,
                           .evaluate_on_exit = {{RetryAction::kRetry, accented}}},
                          1000),
                      1000, &out)
                  .ok());
  const Status refused =
      e.Apply(Job({.id = 2,
                   .share = "A",
                   .need = {{kG5, 1}},
                   .attempts = 2,
                   .evaluate_on_exit = {{RetryAction::kRetry, std::string(513, 'x')}}},
                  2000),
              2000, &out);
  EXPECT_EQ(refused.message(),
            "evaluateOnExit.onStatusReason must be at most 512 characters, got 513");
}

TEST(RetryStrategy, AttemptsCountsEveryFailedAttemptButNoRequeue) {
  // attempts = 3: failures, interleaved with free requeues, until the third failure.
  Engine e;
  Play(e, OneShare());
  Play(
      e,
      {
          {Job({.id = 1, .share = "A", .need = {{kG5, 1}}, .attempts = 3}, 1000), 1000,
           Dispatched(1, "WITHIN_QUOTA")},
          {Ended(1, 1, AttemptOutcome::kFailed, "f1"),
           2000,
           {"status 1 SCHEDULED->RUNNABLE \"f1\"", "status 1 RUNNABLE->SCHEDULED",
            Redispatched(1, 2)}},
          {Ended(1, 2, AttemptOutcome::kRequeue, "r"),
           3000,
           {"status 1 SCHEDULED->RUNNABLE \"r\"", "status 1 RUNNABLE->SCHEDULED",
            Redispatched(1, 3)}},
          {Ended(1, 3, AttemptOutcome::kFailed, "f2"),
           4000,
           {"status 1 SCHEDULED->RUNNABLE \"f2\"", "status 1 RUNNABLE->SCHEDULED",
            Redispatched(1, 4)}},
          {Ended(1, 4, AttemptOutcome::kFailed, "f3"), 5000, {"status 1 SCHEDULED->FAILED \"f3\""}},
      });
  EXPECT_EQ(e.LiveJobs(), 0u);
}

TEST(Stop, TerminationFailsWaitingJobsAtOnceAndDispatchedOnesWhenGone) {
  struct Case {
    std::string name;
    JobId target;  // 1 is dispatched, 2 waits
    std::vector<std::string> on_terminate;
    AttemptOutcome outcome;
    std::vector<std::string> on_end;
  };
  const Case cases[] = {
      {"waiting: FAILED at once",
       2,
       {"status 2 RUNNABLE->FAILED \"user\""},
       AttemptOutcome::kSucceeded,
       {"status 1 RUNNING->SUCCEEDED"}},
      {"dispatched: stopped, FAILED when its processes are gone",
       1,
       {"stop 1 attempt=1 TERMINATION \"user\""},
       AttemptOutcome::kFailed,
       {"status 1 RUNNING->FAILED \"user\"", "status 2 RUNNABLE->SCHEDULED",
        "dispatch 2 attempt=1 WITHIN_QUOTA"}},
      // A stopped attempt ends as its stop says, even when the job exits 0 on SIGTERM.
      {"dispatched, and the attempt exits 0 on SIGTERM",
       1,
       {"stop 1 attempt=1 TERMINATION \"user\""},
       AttemptOutcome::kSucceeded,
       {"status 1 RUNNING->FAILED \"user\"", "status 2 RUNNABLE->SCHEDULED",
        "dispatch 2 attempt=1 WITHIN_QUOTA"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    Play(e, {Given(Env(1), 0),
             Given(Q(), 0),
             Given(Reserve("A", 1), 0),
             {J(1, "A", 0, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
             {Starting(1), 1000, {"status 1 SCHEDULED->STARTING"}},
             {Running(1), 1000, {"status 1 STARTING->RUNNING"}},
             {J(2, "A", 0, 1, 2000), 2000, Waits(2)},
             {TerminateJob{c.target, "user"}, 3000, c.on_terminate}});
    if (c.target == 1) {
      EXPECT_TRUE(e.GetJob(1)->stopping);
      EXPECT_EQ(e.GetJob(1)->status, JobStatus::kRunning);
    }
    Play(e, {{Ended(1, 1, c.outcome), 4000, c.on_end}});
  }
}

// An attempt whose checkpoints were not saved after it says so after whatever reason its end
// gives the job: its success, its stop, its retry. The retry rules read the attempt's own reason
// alone: an exact onStatusReason still matches.
TEST(CheckpointError, IsSaidAfterTheReasonAndNotReadByTheRetryRules) {
  const std::string algorithm = "Received status from SageMaker: AlgorithmError: exit 1";
  const std::string lost = "saving the checkpoints to '/ck' failed (exit 1: no space)";
  const std::string said = "; its checkpoints were not saved: " + lost;
  auto ended = [&](AttemptOutcome outcome, const std::string& reason) {
    return AttemptEnded{1, 1, outcome, reason, lost};
  };
  auto started = [](Engine& e, const std::vector<EvaluateOnExit>& rules) {
    Play(e, OneShare());
    Play(
        e,
        {{Job({.id = 1, .share = "A", .need = {{kG5, 1}}, .attempts = 2, .evaluate_on_exit = rules},
              1000),
          1000, Dispatched(1, "WITHIN_QUOTA")}});
  };
  {
    SCOPED_TRACE("an exact EXIT rule still matches");
    Engine e;
    started(e, {{RetryAction::kExit, algorithm}});
    Play(e, {{ended(AttemptOutcome::kFailed, algorithm),
              2000,
              {"status 1 SCHEDULED->FAILED \"" + algorithm + said + "\""}}});
  }
  {
    SCOPED_TRACE("a retry says it too");
    Engine e;
    started(e, {});
    Play(e, {{ended(AttemptOutcome::kFailed, algorithm),
              2000,
              {"status 1 SCHEDULED->RUNNABLE \"" + algorithm + said + "\"",
               "status 1 RUNNABLE->SCHEDULED", Redispatched(1, 2)}}});
  }
  {
    SCOPED_TRACE("a success");
    Engine e;
    started(e, {});
    Play(e, {{ended(AttemptOutcome::kSucceeded, "done"),
              2000,
              {"status 1 SCHEDULED->SUCCEEDED \"done" + said + "\""}}});
  }
  {
    SCOPED_TRACE("a preemption: the requeued job says it, before its next attempt restores");
    Engine e;
    Play(e, {Given(Env(1), 0),
             Given(Q(), 0),
             Given(Reserve("A", 1, true), 0),
             {J(1, "A", 0, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
             {J(2, "A", 5, 1, 5000), 5000,
              Cat(Waits(2), {"preempt by 2: 1@A/IN_SHARE{prio=0,lost=4000,started=1000}",
                             StopLine(1, 1, kInShare), InProgress(1, "SCHEDULED", kInShare)})},
             {ended(AttemptOutcome::kFailed, "stopped"),
              5100,
              {"preempted 1 attempt=1 IN_SHARE lost=4100 count=1",
               "status 1 SCHEDULED->RUNNABLE \"" + PreemptionReason(kInShare) + said + "\"",
               "status 2 RUNNABLE->SCHEDULED", "dispatch 2 attempt=1 PREEMPTOR"}}});
  }
  {
    SCOPED_TRACE("a termination, which ends as its stop says");
    Engine e;
    started(e, {});
    Play(e, {{TerminateJob{1, "user"}, 3000, {"stop 1 attempt=1 TERMINATION \"user\""}},
             {ended(AttemptOutcome::kSucceeded, "done"),
              4000,
              {"status 1 SCHEDULED->FAILED \"user" + said + "\""}}});
  }
}

TEST(AttemptTimeout, RunsFromAttemptRunningViaTickAndNextDeadline) {
  // A 10 s timeout; the attempt is RUNNING from 5000, so it times out at 15000. A timed-out
  // attempt is never retried, whatever retryStrategy says.
  struct Case {
    std::string name;
    Step at_deadline;
    AttemptOutcome outcome;
    std::vector<std::string> on_end;
  };
  const std::string stop = "stop 1 attempt=1 TIMEOUT \"" + std::string(kTimeoutReason) + "\"";
  const Case cases[] = {
      {"a Tick fires it",
       {Tick{}, 15000, {stop}},
       AttemptOutcome::kFailed,
       {"status 1 RUNNING->FAILED \"" + std::string(kTimeoutReason) + "\""}},
      {"any event fires it first",
       {J(2, "A", 0, 1, 20000), 20000, Cat({stop}, Dispatched(2, "WITHIN_QUOTA"))},
       AttemptOutcome::kFailed,
       {"status 1 RUNNING->FAILED \"" + std::string(kTimeoutReason) + "\""}},
      {"the attempt exits 0 on SIGTERM: still a timeout",
       {Tick{}, 16000, {stop}},
       AttemptOutcome::kSucceeded,
       {"status 1 RUNNING->FAILED \"" + std::string(kTimeoutReason) + "\""}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    Play(e, OneShare());
    Play(e, {{Job({.id = 1, .share = "A", .need = {{kG5, 1}}, .attempts = 3, .timeout_seconds = 10},
                  1000),
              1000, Dispatched(1, "WITHIN_QUOTA")}});
    EXPECT_EQ(e.NextDeadline(), std::nullopt);
    Play(e, {{Starting(1), 2000, {"status 1 SCHEDULED->STARTING"}}});
    EXPECT_EQ(e.NextDeadline(), std::nullopt);
    Play(e, {{Running(1), 5000, {"status 1 STARTING->RUNNING"}}});
    EXPECT_EQ(e.NextDeadline(), std::optional<Timestamp>(15000));
    Play(e, {{Tick{}, 14999, {}}, c.at_deadline});
    EXPECT_EQ(e.NextDeadline(), std::nullopt);
    const std::string reason = c.outcome == AttemptOutcome::kSucceeded ? "" : "killed";
    Play(e, {{Ended(1, 1, c.outcome, reason), 21000, c.on_end}});
  }
}

TEST(PreemptionRetries, UnsetZeroOrN) {
  // Job 1 (priority 0, retryStrategy attempts 1) is preempted in-share by a priority-5 job in
  // every round; each preemptor succeeds and job 1 is dispatched again.
  struct Case {
    std::optional<std::int32_t> retries;
    int failing_round;  // 0 = never within 3 rounds
  };
  const Case cases[] = {{std::nullopt, 0}, {0, 1}, {1, 2}, {2, 3}};
  for (const Case& c : cases) {
    SCOPED_TRACE("retries " + (c.retries ? std::to_string(*c.retries) : std::string("unset")));
    Engine e;
    Play(e,
         {Given(Env(1), 0),
          Given(Q(), 0),
          Given(Reserve("A", 1, true), 0),
          {Job({.id = 1, .share = "A", .need = {{kG5, 1}}, .preemption_retries = c.retries}, 1000),
           1000, Dispatched(1, "WITHIN_QUOTA")}});
    Timestamp started = 1000;
    for (int round = 1; round <= 3; ++round) {
      SCOPED_TRACE("round " + std::to_string(round));
      const JobId p = 10 + static_cast<JobId>(round);
      const Timestamp t = 10000 * round;
      const std::string lost = std::to_string(t - started);  // the estimate when chosen, at t
      // Measured when the attempt has ended, at t + 100.
      const std::string lost_at_end = std::to_string(t + 100 - started);
      const bool fails = round == c.failing_round;
      Play(e,
           {{J(p, "A", 5, 1, t), t,
             Cat(Waits(p), {"preempt by " + Id(p) + ": 1@A/IN_SHARE{prio=0,lost=" + lost +
                                ",started=" + std::to_string(started) + "}",
                            StopLine(1, round, kInShare), InProgress(1, "SCHEDULED", kInShare)})},
            {Ended(1, round, AttemptOutcome::kFailed, "stopped"),
             t + 100,
             {"preempted 1 attempt=" + std::to_string(round) + " IN_SHARE lost=" + lost_at_end +
                  " count=" + std::to_string(round),
              fails ? "status 1 SCHEDULED->FAILED \"Preemption retries exhausted "
                      "(preemptionRetriesBeforeTermination=" +
                          std::to_string(c.retries.value_or(-1)) +
                          "): " + PreemptionReason(kInShare) + "\""
                    : Requeued(1, "SCHEDULED", kInShare),
              "status " + Id(p) + " RUNNABLE->SCHEDULED",
              "dispatch " + Id(p) + " attempt=1 PREEMPTOR"}}});
      if (fails) {
        EXPECT_FALSE(e.GetJob(1).has_value());
        break;
      }
      EXPECT_EQ(e.GetJob(1)->preemptions, round);
      EXPECT_EQ(e.GetJob(1)->failed_attempts, 0);
      Play(e, {{Ended(p, 1),
                t + 200,
                {"status " + Id(p) + " SCHEDULED->SUCCEEDED", "status 1 RUNNABLE->SCHEDULED",
                 Redispatched(1, round + 1)}}});
      started = t + 200;
    }
    EXPECT_EQ(e.GetJob(1).has_value(), c.failing_round == 0);
  }
}

// A victim whose launch the server held back and never began (AttemptEnded.began false) is
// requeued without using a preemption and without lost work: with
// preemptionRetriesBeforeTermination 0 it is not failed for a preemption of a run it never had.
TEST(PreemptionRetries, AnAttemptThatNeverBeganUsesNoneAndLosesNoWork) {
  Engine e;
  Play(e, {Given(Env(1), 0),
           Given(Q(), 0),
           Given(Reserve("A", 1, true), 0),
           {Job({.id = 1, .share = "A", .need = {{kG5, 1}}, .preemption_retries = 0}, 1000), 1000,
            Dispatched(1, "WITHIN_QUOTA")}});
  AttemptEnded never_began{1, 1, AttemptOutcome::kFailed, "Stopped before the attempt started"};
  never_began.began = false;
  Play(e, {{J(11, "A", 5, 1, 5000), 5000,
            Cat(Waits(11), {"preempt by 11: 1@A/IN_SHARE{prio=0,lost=4000,started=1000}",
                            StopLine(1, 1, kInShare), InProgress(1, "SCHEDULED", kInShare)})},
           {never_began,
            5100,
            {"preempted 1 attempt=1 IN_SHARE lost=0 count=0", Requeued(1, "SCHEDULED", kInShare),
             "status 11 RUNNABLE->SCHEDULED", "dispatch 11 attempt=1 PREEMPTOR"}}});
  ASSERT_TRUE(e.GetJob(1).has_value());
  EXPECT_EQ(e.GetJob(1)->preemptions, 0);
  EXPECT_EQ(e.GetJob(1)->failed_attempts, 0);
  EXPECT_EQ(e.GetJob(1)->status, JobStatus::kRunnable);
}

// After a restart the server re-adopts attempts that still run: RestoreJob with `running`
// brings the job back RUNNING, holding its capacity, and a stop asked before the restart ends
// the attempt the way that stop would have.
TEST(RestoreJob, RunningAttemptsHoldTheirCapacityAndStopsCarryOver) {
  struct Case {
    std::string name;
    bool stopping;
    model::StopKind kind;
    std::vector<std::string> on_end;  // job 1's attempt 3 ends (failed, as a killed job does)
  };
  const std::vector<Case> cases = {
      {"running: a failure uses a retry",
       false,
       model::StopKind::kTermination,
       {"status 1 RUNNING->FAILED \"killed\"", "status 2 RUNNABLE->SCHEDULED",
        "dispatch 2 attempt=1 WITHIN_QUOTA"}},
      {"stopping for preemption: requeued as preempted",
       true,
       model::StopKind::kPreemption,
       {"preempted 1 attempt=3 RECLAIM lost=9000 count=2",
        "status 1 RUNNING->RUNNABLE \"" + PreemptionReason(model::PreemptionRule::kReclaim) + "\"",
        "status 2 RUNNABLE->SCHEDULED", "dispatch 2 attempt=1 WITHIN_QUOTA"}},
      {"stopping for termination: fails with its reason",
       true,
       model::StopKind::kTermination,
       {"status 1 RUNNING->FAILED \"cancelled by alice\"", "status 2 RUNNABLE->SCHEDULED",
        "dispatch 2 attempt=1 WITHIN_QUOTA"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    Play(e, {Given(Env(1), 0), Given(Q(), 0), Given(Reserve("A", 1), 0)});
    model::JobSpec spec;
    spec.id = 1;
    spec.queue = "q";
    spec.share = "A";
    spec.demand = {{kG5, 1}};
    spec.created_at = 100;
    model::RestoreJob r{
        spec, 3, 0,
        1,    0, c.kind == model::StopKind::kTermination && c.stopping ? "cancelled by alice" : "",
        {}};
    r.running = model::RestoreJob::Running{.attempt_started = 1000,
                                           .running_since = 1000,
                                           .stopping = c.stopping,
                                           .stop_kind = c.kind};
    const std::string reason = r.reason.empty() ? "" : " \"" + r.reason + "\"";
    Play(e, {{r, 10000, {"status 1 SUBMITTED->RUNNING" + reason}},
             // The restored attempt holds the only instance: job 2 waits.
             {J(2, "A", 9, 1, 10000), 10000, Waits(2)},
             {Ended(1, 3, AttemptOutcome::kFailed, "killed"), 10000, c.on_end}});
  }
}

}  // namespace
}  // namespace allot::engine
