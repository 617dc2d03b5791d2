#pragma once

// Scenario steps for table-driven engine tests: an event, its time and the exact decision lines
// it must produce, plus shorthand for the queue "q" on service environment "se" with one unit.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "engine/support/builders.h"
#include "model/decision.h"
#include "model/event.h"
#include "model/reason.h"

namespace allot::testing::steps {

using engine::Engine;
using model::AttemptEnded;
using model::AttemptOutcome;
using model::AttemptRunning;
using model::AttemptStarting;
using model::Event;
using model::EventToString;
using model::JobId;
using model::kPreemptionInProgress;
using model::PreemptionReason;
using model::PreemptionRule;
using model::SharingStrategy;
using model::State;

inline constexpr char kG5[] = "ml.g5.xlarge";

// One event of a scenario and, when `check`, the exact decision lines it must produce.
struct Step {
  Event event;
  Timestamp now = 0;
  std::vector<std::string> expected;
  bool check = true;
};

// A step whose decisions another test asserts.
inline Step Given(Event event, Timestamp now) { return {std::move(event), now, {}, false}; }

inline void Play(Engine& engine, const std::vector<Step>& steps) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    SCOPED_TRACE(::testing::Message()
                 << "step " << i << " at " << s.now << ": " << EventToString(s.event));
    const std::vector<std::string> got = Lines(MustApply(engine, s.event, s.now));
    if (s.check) {
      EXPECT_EQ(got, s.expected);
    }
  }
}

inline Event Env(std::int64_t pool, State state = State::kEnabled) {
  return Environment("se", {{kG5, pool}}, state);
}
inline Event Q() { return Queue("q", "se"); }

inline Event Reserve(const std::string& name, std::int64_t limit, bool in_share = false) {
  return Share({.name = name,
                .limits = {{kG5, limit}},
                .strategy = SharingStrategy::kReserve,
                .in_share_preemption = in_share});
}
inline Event Lend(const std::string& name, std::int64_t limit, bool in_share = false) {
  return Share({.name = name,
                .limits = {{kG5, limit}},
                .strategy = SharingStrategy::kLend,
                .in_share_preemption = in_share});
}
inline Event LendBorrow(const std::string& name, std::int64_t limit, std::int64_t borrow = -1,
                        bool in_share = false) {
  return Share({.name = name,
                .limits = {{kG5, limit}},
                .strategy = SharingStrategy::kLendAndBorrow,
                .borrow_limit = borrow,
                .in_share_preemption = in_share});
}

// A job of `share` in queue "q" needing `n` x ml.g5.xlarge, created at `now`.
inline Event J(JobId id, const std::string& share, std::int32_t priority, std::int64_t n,
               Timestamp now) {
  return Job({.id = id, .share = share, .priority = priority, .need = {{kG5, n}}}, now);
}

inline Event Starting(JobId id, int attempt = 1) { return AttemptStarting{id, attempt}; }
inline Event Running(JobId id, int attempt = 1) { return AttemptRunning{id, attempt}; }
inline Event Ended(JobId id, int attempt = 1, AttemptOutcome outcome = AttemptOutcome::kSucceeded,
                   std::string reason = "") {
  return AttemptEnded{id, attempt, outcome, std::move(reason)};
}

inline std::string Id(JobId id) { return std::to_string(id); }

// The lines of a job's submission when it is dispatched at once / waits.
inline std::vector<std::string> Dispatched(JobId id, const std::string& mode) {
  return {"status " + Id(id) + " SUBMITTED->RUNNABLE", "status " + Id(id) + " RUNNABLE->SCHEDULED",
          "dispatch " + Id(id) + " attempt=1 " + mode};
}
inline std::vector<std::string> Waits(JobId id) {
  return {"status " + Id(id) + " SUBMITTED->RUNNABLE"};
}

// The two lines that stop a preemption victim in status `status`.
inline std::string StopLine(JobId id, int attempt, PreemptionRule rule) {
  return "stop " + Id(id) + " attempt=" + std::to_string(attempt) + " PREEMPTION \"" +
         PreemptionReason(rule) + "\"";
}
inline std::string InProgress(JobId id, const std::string& status, PreemptionRule rule) {
  return "status " + Id(id) + " " + status + "->" + status + " \"" +
         std::string(kPreemptionInProgress) + PreemptionReason(rule) + "\"";
}

// The requeue of a preempted job: RUNNABLE with the preemption's reason.
inline std::string Requeued(JobId id, const std::string& status, PreemptionRule rule) {
  return "status " + Id(id) + " " + status + "->RUNNABLE \"" + PreemptionReason(rule) + "\"";
}

inline std::vector<std::string> Cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace allot::testing::steps
