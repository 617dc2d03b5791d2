#include "env/worker_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace allot::env {
namespace {

// A gate that tasks wait on until the test opens it.
class Gate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    ++waiting_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return open_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  // Until `n` tasks wait at the gate, or 20 s.
  bool AwaitWaiting(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(20), [&] { return waiting_ >= n; });
  }
  int waiting() {
    std::lock_guard<std::mutex> lock(mu_);
    return waiting_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int waiting_ = 0;
};

// Tasks held at a gate take every worker, up to the bound and no further; the next tasks wait
// their turn and run once a worker is free. None runs on the thread that posts it.
TEST(WorkerPoolTest, RunsAtMostTheBoundAtOnceAndTheRestInTurn) {
  Gate gate;
  std::atomic<int> done{0};
  std::mutex mu;
  std::set<std::thread::id> threads;
  {
    WorkerPool pool(3);
    for (int i = 0; i < 7; ++i) {
      ASSERT_TRUE(pool.Post([&] {
        {
          std::lock_guard<std::mutex> lock(mu);
          threads.insert(std::this_thread::get_id());
        }
        gate.Wait();
        ++done;
      }));
    }
    ASSERT_TRUE(gate.AwaitWaiting(3));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // a fourth would show now
    EXPECT_EQ(gate.waiting(), 3);
    EXPECT_EQ(done.load(), 0);
    gate.Open();
    pool.AwaitIdle();
    EXPECT_EQ(done.load(), 7);
  }
  EXPECT_EQ(threads.size(), 3U);
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 0U);
}

// One task held long holds up no other while a worker is free.
TEST(WorkerPoolTest, ALongTaskHoldsUpNoOther) {
  Gate gate;
  std::atomic<bool> quick{false};
  WorkerPool pool(2);
  ASSERT_TRUE(pool.Post([&] { gate.Wait(); }));
  ASSERT_TRUE(gate.AwaitWaiting(1));
  std::mutex mu;
  std::condition_variable cv;
  ASSERT_TRUE(pool.Post([&] {
    std::lock_guard<std::mutex> lock(mu);
    quick = true;
    cv.notify_all();
  }));
  {
    std::unique_lock<std::mutex> lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return quick.load(); }));
  }
  gate.Open();
}

// A key's tasks take at most their share of the workers; the rest wait aside, and a task of
// another key that comes meanwhile runs on a free worker. Each of the key's tasks that ends sends
// its next behind the other keys' tasks that came meanwhile.
TEST(WorkerPoolTest, AKeysTasksTakeAtMostTheirShareAndGoBehindOthers) {
  Gate gate;
  std::mutex mu;
  std::vector<std::string> ran;
  auto note = [&](const std::string& what) {
    std::lock_guard<std::mutex> lock(mu);
    ran.push_back(what);
  };
  {
    WorkerPool pool(3);
    for (int i = 1; i <= 4; ++i) {
      ASSERT_TRUE(pool.Post("team-a", 2, [&, i] {
        note("a" + std::to_string(i));
        if (i <= 2) gate.Wait();
      }));
    }
    ASSERT_TRUE(gate.AwaitWaiting(2));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // a third of a's would show
    EXPECT_EQ(gate.waiting(), 2);
    ASSERT_TRUE(pool.Post("team-b", 2, [&] { note("b1"); }));  // the third worker is free
    for (int i = 0; i < 100; ++i) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (ran.size() == 3) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      EXPECT_EQ(ran, (std::vector<std::string>{"a1", "a2", "b1"}));
    }
    gate.Open();
    pool.AwaitIdle();
  }
  ASSERT_EQ(ran.size(), 5U);
  EXPECT_EQ(std::count(ran.begin(), ran.end(), "a3"), 1);
  EXPECT_EQ(std::count(ran.begin(), ran.end(), "a4"), 1);
}

// Drain drops what has not begun and waits for what runs: after it, no task of the pool runs
// or will, so what they use may go.
TEST(WorkerPoolTest, DrainDropsTheQueuedAndWaitsForTheRunning) {
  Gate gate;
  std::atomic<int> began{0};
  std::atomic<bool> running_ended{false};
  WorkerPool pool(1);
  ASSERT_TRUE(pool.Post([&] {
    ++began;
    gate.Wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    running_ended = true;
  }));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(pool.Post([&] { ++began; }));
  ASSERT_TRUE(gate.AwaitWaiting(1));
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    gate.Open();
  });
  pool.Drain();
  EXPECT_TRUE(running_ended.load());
  EXPECT_EQ(began.load(), 1);
  opener.join();
  // The pool serves again after a drain.
  std::atomic<bool> after{false};
  ASSERT_TRUE(pool.Post([&] { after = true; }));
  pool.AwaitIdle();
  EXPECT_TRUE(after.load());
}

}  // namespace
}  // namespace allot::env
