// Not a correctness test: prints how many single-op batches per second Commit() sustains, from 1
// and from 16 threads, on the file system of $TEST_TMPDIR / $TMPDIR (else /tmp). It asserts only
// that every commit succeeded; times depend on the machine and its fsync.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "store/sqlite_store.h"
#include "store/support/scratch_dir.h"

namespace allot::store {
namespace {

void Measure(int threads, std::chrono::milliseconds duration) {
  testing::ScratchDir dir;
  auto store = testing::OpenOrDie(dir.File("allot.db"));
  std::atomic<bool> stop{false};
  std::atomic<long long> commits{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (long long i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        Batch batch;
        batch.Put(Kind::kJob, std::to_string(t) + "/" + std::to_string(i),
                  R"({"jobId":"x","status":"SUBMITTED","priority":10})");
        if (store->Commit(std::move(batch)).ok()) {
          commits.fetch_add(1, std::memory_order_relaxed);
        } else {
          failures.fetch_add(1);
        }
      }
    });
  }
  std::this_thread::sleep_for(duration);
  stop = true;
  for (std::thread& w : workers) w.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto n = static_cast<double>(commits.load());
  const auto tx = static_cast<double>(store->transactions());
  std::printf(
      "%2d threads: %8.0f commits/s (%lld commits, %.0f transactions/s, %.1f batches each)\n",
      threads, n / seconds, commits.load(), tx / seconds, n / tx);
  EXPECT_EQ(failures.load(), 0);
}

TEST(SqliteStoreThroughput, SingleOpCommitsPerSecond) {
  Measure(1, std::chrono::milliseconds(2000));
  Measure(16, std::chrono::milliseconds(3000));
}

}  // namespace
}  // namespace allot::store
