// Durable (server/durable.h): a commit's outcome, set once on the store's writer thread and
// awaited by the calls whose changes the commit holds.

#include "server/durable.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace allot::server {
namespace {

TEST(Durable, ADefaultOneHasNoCommitToWaitFor) { EXPECT_FALSE(Durable().valid()); }

TEST(Durable, AReadyOneAnswersAtOnce) {
  const Durable d = Durable::Ready(Status(StatusCode::kUnavailable, "rolling back"));
  ASSERT_TRUE(d.valid());
  EXPECT_TRUE(d.ready());
  EXPECT_EQ(d.get().code(), StatusCode::kUnavailable);
  EXPECT_EQ(d.get().message(), "rolling back");
}

TEST(Durable, EveryCopySeesTheOneSet) {
  const Durable d = Durable::Unset();
  const std::vector<Durable> copies(2, d);  // as the reply and the controller's last batch hold it
  for (const Durable& copy : copies) {
    EXPECT_TRUE(copy.valid());
    EXPECT_FALSE(copy.ready());
  }
  d.Set(Status::Ok());
  for (const Durable& copy : copies) {
    EXPECT_TRUE(copy.ready());
    EXPECT_TRUE(copy.get().ok());
  }
}

// A thread waits on one call's commit while the writer sets it from its own thread; every
// thread waiting on the same commit wakes, with the status set.
TEST(Durable, EveryWaiterWakesWithTheStatusSetOnAnotherThread) {
  const Durable d = Durable::Unset();
  std::atomic<int> woke{0};
  std::vector<std::thread> waiters;
  waiters.reserve(4);
  for (int i = 0; i < 4; ++i) {
    waiters.emplace_back([d, &woke] {
      if (d.get().code() == StatusCode::kInternal) woke.fetch_add(1);
    });
  }
  std::thread writer([d] { d.Set(Status(StatusCode::kInternal, "disk full")); });
  writer.join();
  for (std::thread& t : waiters) t.join();
  EXPECT_EQ(woke.load(), 4);
}

// A group commit settles its calls in order while another thread waits on them in the same order:
// each call is answered with its own commit's status, whichever thread gets there first.
TEST(Durable, CallsSettledInTurnAreEachAnsweredWithTheirOwnStatus) {
  constexpr int kCalls = 2000;
  std::vector<Durable> calls;
  calls.reserve(kCalls);
  for (int i = 0; i < kCalls; ++i) calls.push_back(Durable::Unset());
  std::thread writer([&calls] {
    for (int i = 0; i < kCalls; ++i) {
      calls[static_cast<std::size_t>(i)].Set(
          i % 7 == 0 ? Status(StatusCode::kInternal, "commit failed") : Status::Ok());
    }
  });
  int failed = 0;
  for (const Durable& d : calls) failed += d.get().ok() ? 0 : 1;
  writer.join();
  EXPECT_EQ(failed, (kCalls + 6) / 7);
}

// The HTTP server parks a call and asks, with OnSet, to be told when its commit settles: the
// writer tells it right after setting the outcome, on the writer's thread; a commit settled
// before the call was parked tells it at once.
TEST(Durable, OnSetRunsOnTheSettingThreadOnceTheOutcomeIsKnown) {
  const Durable d = Durable::Unset();
  std::thread::id ran_on;
  bool saw_ready = false;
  int runs = 0;
  d.OnSet([&] {
    ran_on = std::this_thread::get_id();
    saw_ready = d.ready() && d.get().code() == StatusCode::kInternal;
    ++runs;
  });
  d.OnSet([&] { ++runs; });
  EXPECT_EQ(runs, 0);
  std::thread::id writer_id;
  std::thread writer([&] {
    writer_id = std::this_thread::get_id();
    d.Set(Status(StatusCode::kInternal, "disk full"));
  });
  writer.join();
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(ran_on, writer_id);
  EXPECT_TRUE(saw_ready);

  bool at_once = false;
  d.OnSet([&] { at_once = std::this_thread::get_id() != writer_id; });
  EXPECT_TRUE(at_once);
}

}  // namespace
}  // namespace allot::server
