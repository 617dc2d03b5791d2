// Dispatch rules of docs/design/engine.md: accounting, sharing strategies, borrow limits, and
// the within-quota and borrowing steps of the pass.

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

// The usage row of `unit` for `share` ("" = the pool), or nullptr.
const UnitUsage* FindUnit(const QueueUsage& usage, const std::string& share,
                          const std::string& unit) {
  const std::vector<UnitUsage>* units = &usage.pool;
  if (!share.empty()) {
    units = nullptr;
    for (const ShareUsage& s : usage.shares) {
      if (s.name == share) units = &s.units;
    }
    if (units == nullptr) return nullptr;
  }
  for (const UnitUsage& u : *units) {
    if (u.unit == unit) return &u;
  }
  return nullptr;
}

TEST(Accounting, UsagePerUnitCountsOwnBorrowedLentAndLendableIdle) {
  // Pool: 6 g5, 2 p4. A borrows one g5 from B (the only lender with idle g5: C is RESERVE).
  Engine e;
  Play(e, {
              Given(Environment("se", {{kG5, 6}, {kP4, 2}}), 0),
              Given(Q(), 0),
              Given(LendBorrow("A", 2), 0),
              Given(Share({.name = "B",
                           .limits = {{kG5, 2}, {kP4, 2}},
                           .strategy = SharingStrategy::kLend}),
                    0),
              Given(Reserve("C", 2), 0),
              {J(1, "A", 0, 3, 1000), 1000, Dispatched(1, "BORROWED")},
              {Job({.id = 2, .share = "B", .need = {{kP4, 1}}}, 2000), 2000,
               Dispatched(2, "WITHIN_QUOTA")},
              {J(3, "C", 0, 1, 3000), 3000, Dispatched(3, "WITHIN_QUOTA")},
              {J(4, "C", 0, 2, 4000), 4000, Waits(4)},
          });
  struct Case {
    std::string share;  // "" = the pool
    std::string unit;
    std::int64_t limit, used, borrowed, lent, idle_lendable, waiting;
  };
  const Case cases[] = {
      {"", kG5, 6, 4, 0, 0, 0, 0},  {"", kP4, 2, 1, 0, 0, 0, 0},  {"A", kG5, 2, 3, 1, 0, 0, 0},
      {"B", kG5, 2, 0, 0, 1, 2, 0}, {"B", kP4, 2, 1, 0, 0, 1, 0}, {"C", kG5, 2, 1, 0, 0, 0, 2},
  };
  Result<QueueUsage> usage = e.Usage("q");
  ASSERT_TRUE(usage.ok()) << usage.status().ToString();
  for (const Case& c : cases) {
    SCOPED_TRACE("share '" + c.share + "' unit " + c.unit);
    const UnitUsage* u = FindUnit(*usage, c.share, c.unit);
    ASSERT_NE(u, nullptr);
    EXPECT_EQ(u->limit, c.limit);
    EXPECT_EQ(u->used, c.used);
    if (c.share.empty()) continue;
    EXPECT_EQ(u->borrowed, c.borrowed);
    EXPECT_EQ(u->lent, c.lent);
    EXPECT_EQ(u->idle_lendable, c.idle_lendable);
    EXPECT_EQ(u->waiting, c.waiting);
    EXPECT_EQ(u->reserved, 0);
    EXPECT_EQ(u->stopping, 0);
  }
  EXPECT_FALSE(e.Usage("no-such-queue").ok());
}

TEST(Strategy, OnlyLendAndBorrowBorrowsAndOnlyLendersLend) {
  struct Case {
    SharingStrategy borrower, lender;
    std::vector<std::string> second_job;
    std::int64_t lender_lent;
  };
  const Case cases[] = {
      {SharingStrategy::kLendAndBorrow, SharingStrategy::kLend, Dispatched(2, "BORROWED"), 1},
      {SharingStrategy::kLendAndBorrow, SharingStrategy::kLendAndBorrow, Dispatched(2, "BORROWED"),
       1},
      {SharingStrategy::kLendAndBorrow, SharingStrategy::kReserve, Waits(2), 0},
      {SharingStrategy::kLend, SharingStrategy::kLend, Waits(2), 0},
      {SharingStrategy::kReserve, SharingStrategy::kLend, Waits(2), 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("borrower " + std::string(ToString(c.borrower)) + ", lender " +
                 std::string(ToString(c.lender)));
    Engine e;
    Play(e, {
                Given(Env(4), 0),
                Given(Q(), 0),
                Given(Share({.name = "A", .limits = {{kG5, 1}}, .strategy = c.borrower}), 0),
                Given(Share({.name = "B", .limits = {{kG5, 2}}, .strategy = c.lender}), 0),
                {J(1, "A", 0, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
                {J(2, "A", 0, 1, 2000), 2000, c.second_job},
            });
    Result<QueueUsage> usage = e.Usage("q");
    ASSERT_TRUE(usage.ok());
    const UnitUsage* b = FindUnit(*usage, "B", kG5);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->lent, c.lender_lent);
    EXPECT_EQ(b->idle_lendable, c.lender == SharingStrategy::kReserve ? 0 : 2);
  }
}

TEST(BorrowLimit, PercentOfOwnLimitFlooredAndMinusOneUnlimited) {
  // A (limit 2) submits six 1-instance jobs; B lends 10 idle instances; the pool has 20.
  struct Case {
    std::int64_t borrow_limit;
    int borrowed;  // jobs 3 .. 2 + borrowed are dispatched BORROWED, the rest wait
  };
  const Case cases[] = {{0, 0}, {50, 1}, {75, 1}, {100, 2}, {150, 3}, {-1, 4}};
  for (const Case& c : cases) {
    SCOPED_TRACE("borrowLimit " + std::to_string(c.borrow_limit));
    Engine e;
    Play(e, {Given(Env(20), 0), Given(Q(), 0), Given(LendBorrow("A", 2, c.borrow_limit), 0),
             Given(Lend("B", 10), 0)});
    for (JobId id = 1; id <= 6; ++id) {
      SCOPED_TRACE("job " + Id(id));
      const Timestamp now = static_cast<Timestamp>(id) * 1000;
      const Decisions d = MustApply(e, J(id, "A", 0, 1, now), now);
      if (id <= 2) {
        EXPECT_EQ(Lines(d), Dispatched(id, "WITHIN_QUOTA"));
      } else if (id <= 2 + static_cast<JobId>(c.borrowed)) {
        EXPECT_EQ(Lines(d), Dispatched(id, "BORROWED"));
      } else {
        EXPECT_EQ(Lines(d), Waits(id));
      }
    }
    Result<QueueUsage> usage = e.Usage("q");
    ASSERT_TRUE(usage.ok());
    const UnitUsage* a = FindUnit(*usage, "A", kG5);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->used, 2 + c.borrowed);
    EXPECT_EQ(a->borrowed, c.borrowed);
    EXPECT_EQ(a->waiting, 4 - c.borrowed);
  }
}

TEST(BorrowLimit, OnlyUnlimitedBorrowingMayBorrowAUnitWithoutALimit) {
  // A has a limit for g5 only; the job needs one p4, which B lends.
  struct Case {
    std::int64_t borrow_limit;
    std::vector<std::string> expected;
  };
  const Case cases[] = {
      {-1, Dispatched(1, "BORROWED")},
      {100,
       {"status 1 SUBMITTED->RUNNABLE \"" +
        MisconfigurationReason(Misconfiguration::kShareAndBorrowLimit) + "\""}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("borrowLimit " + std::to_string(c.borrow_limit));
    Engine e;
    Play(e,
         {
             Given(Environment("se", {{kG5, 1}, {kP4, 2}}), 0),
             Given(Q(), 0),
             Given(LendBorrow("A", 1, c.borrow_limit), 0),
             Given(Share({.name = "B", .limits = {{kP4, 2}}, .strategy = SharingStrategy::kLend}),
                   0),
             {Job({.id = 1, .share = "A", .need = {{kP4, 1}}}, 1000), 1000, c.expected},
         });
  }
}

TEST(WithinQuota, MostStarvedShareFirst) {
  // Jobs are submitted while the service environment is DISABLED; enabling it runs one pass.
  struct Case {
    std::string name;
    std::int64_t pool;
    std::int64_t limit_a, limit_b;
    std::vector<std::pair<JobId, std::string>> jobs;  // (id, share), submitted in order
    std::vector<std::string> on_enable;
  };
  const Case cases[] = {
      {"equal ratios: by name, then the emptier share",
       2,
       2,
       2,
       {{1, "A"}, {2, "A"}, {3, "B"}},
       {"status 1 RUNNABLE->SCHEDULED", "dispatch 1 attempt=1 WITHIN_QUOTA",
        "status 3 RUNNABLE->SCHEDULED", "dispatch 3 attempt=1 WITHIN_QUOTA"}},
      {"the ratio is used / limit",
       3,
       4,
       2,
       {{1, "A"}, {2, "A"}, {3, "B"}, {4, "B"}},
       {"status 1 RUNNABLE->SCHEDULED", "dispatch 1 attempt=1 WITHIN_QUOTA",
        "status 3 RUNNABLE->SCHEDULED", "dispatch 3 attempt=1 WITHIN_QUOTA",
        "status 2 RUNNABLE->SCHEDULED", "dispatch 2 attempt=1 WITHIN_QUOTA"}},
      {"ties by name, not by submission",
       1,
       2,
       2,
       {{1, "B"}, {2, "A"}},
       {"status 2 RUNNABLE->SCHEDULED", "dispatch 2 attempt=1 WITHIN_QUOTA"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    std::vector<Step> steps = {Given(Env(c.pool, State::kDisabled), 0), Given(Q(), 0),
                               Given(Reserve("A", c.limit_a), 0),
                               Given(Reserve("B", c.limit_b), 0)};
    Timestamp now = 1000;
    for (const auto& [id, share] : c.jobs) {
      steps.push_back({J(id, share, 0, 1, now), now, Waits(id)});
      now += 1000;
    }
    steps.push_back({Env(c.pool), now, c.on_enable});
    Play(e, steps);
  }
}

TEST(WithinQuota, MostStarvedUsesTheMostUsedUnit) {
  // A uses 3 of 4 p4 (ratio 0.75, its g5 ratio is 0); B uses 1 of 2 g5 (0.5): B goes first.
  Engine e;
  Play(e, {
              Given(Environment("se", {{kG5, 2}, {kP4, 4}}), 0),
              Given(Q(), 0),
              Given(Share({.name = "A", .limits = {{kG5, 2}, {kP4, 4}}}), 0),
              Given(Reserve("B", 2), 0),
              {Job({.id = 1, .share = "A", .need = {{kP4, 3}}}, 1000), 1000,
               Dispatched(1, "WITHIN_QUOTA")},
              {J(2, "B", 0, 1, 2000), 2000, Dispatched(2, "WITHIN_QUOTA")},
              {Environment("se", {{kG5, 2}, {kP4, 4}}, State::kDisabled), 3000, {}},
              {J(3, "A", 0, 1, 4000), 4000, Waits(3)},
              {J(4, "B", 0, 1, 5000), 5000, Waits(4)},
              {Environment("se", {{kG5, 2}, {kP4, 4}}),
               6000,
               {"status 4 RUNNABLE->SCHEDULED", "dispatch 4 attempt=1 WITHIN_QUOTA"}},
          });
}

TEST(WithinQuota, ShareOrderIsPriorityThenCreationThenId) {
  Engine e;
  Play(e, {
              Given(Env(3, State::kDisabled), 0),
              Given(Q(), 0),
              Given(Reserve("A", 5), 0),
              {J(1, "A", 1, 1, 1000), 1000, Waits(1)},
              {J(2, "A", 5, 1, 2000), 2000, Waits(2)},
              {J(3, "A", 5, 1, 3000), 3000, Waits(3)},
              {Job({.id = 4, .share = "A", .priority = 5, .need = {{kG5, 1}}, .created_at = 2000},
                   4000),
               4000, Waits(4)},
              {J(5, "A", 0, 1, 5000), 5000, Waits(5)},
          });
  EXPECT_EQ(e.FrontOfQueue("q", "A", 10), (std::vector<JobId>{2, 4, 3, 1, 5}));
  EXPECT_EQ(e.FrontOfQueue("q", "", 2), (std::vector<JobId>{2, 4}));
  Play(e, {{Env(3),
            6000,
            {"status 2 RUNNABLE->SCHEDULED", "dispatch 2 attempt=1 WITHIN_QUOTA",
             "status 4 RUNNABLE->SCHEDULED", "dispatch 4 attempt=1 WITHIN_QUOTA",
             "status 3 RUNNABLE->SCHEDULED", "dispatch 3 attempt=1 WITHIN_QUOTA"}}});
  EXPECT_EQ(e.FrontOfQueue("q", "A", 10), (std::vector<JobId>{1, 5}));
}

TEST(WithinQuota, NonFittingJobDoesNotBlockSmallerOnes) {
  // A (limit 3, pool 3) runs a 2-instance job; one instance is free.
  struct Case {
    std::string name;
    std::vector<std::pair<std::int32_t, std::int64_t>> waiting;  // (priority, need) of jobs 2..
    std::vector<std::string> last_submission;
  };
  const Case cases[] = {
      {"a smaller lower-priority job passes a bigger one",
       {{9, 2}, {0, 1}},
       Dispatched(3, "WITHIN_QUOTA")},
      {"jobs of the blocked need stay blocked", {{9, 2}, {0, 2}}, Waits(3)},
      {"behind two blocked needs", {{9, 2}, {8, 2}, {0, 1}}, Dispatched(4, "WITHIN_QUOTA")},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    std::vector<Step> steps = {Given(Env(3), 0),
                               Given(Q(), 0),
                               Given(Reserve("A", 3), 0),
                               {J(1, "A", 0, 2, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")}};
    JobId id = 2;
    for (std::size_t i = 0; i < c.waiting.size(); ++i, ++id) {
      const Timestamp now = static_cast<Timestamp>(id) * 1000;
      const bool last = i + 1 == c.waiting.size();
      steps.push_back({J(id, "A", c.waiting[i].first, c.waiting[i].second, now), now,
                       last ? c.last_submission : Waits(id)});
    }
    Play(e, steps);
  }
}

TEST(Borrowing, FifoAcrossShares) {
  // A and B borrow, C lends; every share is full. When C's job ends, its idle instance goes to
  // the earliest-created among each borrowing share's best waiting job.
  struct Case {
    std::string name;
    std::vector<Step> waiting;  // submitted at 4000..
    std::vector<std::string> on_free;
  };
  const Case cases[] = {
      {"the older share head wins over name order and priority",
       {{J(4, "B", 0, 1, 4000), 4000, Waits(4)}, {J(5, "A", 9, 1, 5000), 5000, Waits(5)}},
       {"status 3 SCHEDULED->SUCCEEDED", "status 4 RUNNABLE->SCHEDULED",
        "dispatch 4 attempt=1 BORROWED"}},
      {"each share offers its best job, then FIFO among them",
       {{J(4, "B", 0, 1, 4000), 4000, Waits(4)},
        {J(5, "A", 9, 1, 5000), 5000, Waits(5)},
        {J(6, "B", 5, 1, 6000), 6000, Waits(6)}},
       {"status 3 SCHEDULED->SUCCEEDED", "status 5 RUNNABLE->SCHEDULED",
        "dispatch 5 attempt=1 BORROWED"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    Play(e, {
                Given(Env(3), 0),
                Given(Q(), 0),
                Given(LendBorrow("A", 1), 0),
                Given(LendBorrow("B", 1), 0),
                Given(Lend("C", 1), 0),
                {J(1, "A", 0, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")},
                {J(2, "B", 0, 1, 2000), 2000, Dispatched(2, "WITHIN_QUOTA")},
                {J(3, "C", 0, 1, 3000), 3000, Dispatched(3, "WITHIN_QUOTA")},
            });
    Play(e, c.waiting);
    Play(e, {{Ended(3), 7000, c.on_free}});
  }
}

TEST(Borrowing, OnlyLendersIdleCapacityBacksBorrowing) {
  // The pool has room to spare, but only a lender's idle capacity may be borrowed.
  struct Case {
    std::string name;
    std::vector<Event> lenders;
    std::vector<std::string> second, third;
  };
  const Case cases[] = {
      {"capacity no share owns is not lent", {Lend("B", 1)}, Dispatched(2, "BORROWED"), Waits(3)},
      {"RESERVE idle is not lent", {Reserve("B", 2)}, Waits(2), Waits(3)},
      {"two lenders",
       {Lend("B", 1), LendBorrow("C", 1)},
       Dispatched(2, "BORROWED"),
       Dispatched(3, "BORROWED")},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine e;
    std::vector<Step> steps = {Given(Env(10), 0), Given(Q(), 0), Given(LendBorrow("A", 1), 0)};
    for (const Event& l : c.lenders) steps.push_back(Given(l, 0));
    steps.push_back({J(1, "A", 0, 1, 1000), 1000, Dispatched(1, "WITHIN_QUOTA")});
    steps.push_back({J(2, "A", 0, 1, 2000), 2000, c.second});
    steps.push_back({J(3, "A", 0, 1, 3000), 3000, c.third});
    Play(e, steps);
  }
}

}  // namespace
}  // namespace allot::engine
