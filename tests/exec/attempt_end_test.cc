#include "exec/attempt_end.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace allot::exec {
namespace {

namespace fs = std::filesystem;

// A checkpoint sync runs beside the callback thread, not on it: the delivery comes later, from
// the sync's own thread, with the files copied and nothing left to copy; and EndSyncs' end waits
// for a sync in flight.
TEST(EndSyncsTest, SyncsOnAThreadOfItsOwnThenPostsTheDelivery) {
  const fs::path root =
      fs::temp_directory_path() / ("allot-end-syncs-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "job" / "checkpoints");
  { std::ofstream(root / "job" / "checkpoints" / "epoch-1.pt") << "weights"; }
  AttemptEnd end;
  end.exit.job = 7;
  end.exit.attempt = 1;
  end.job_dir = (root / "job").string();
  end.sync_dir = (root / "sync").string();

  std::mutex mu;
  std::condition_variable cv;
  std::thread::id posted_from;
  std::function<void()> delivery;
  AttemptEnd delivered;
  std::string error = "unset";
  {
    EndSyncs syncs;
    const bool started = syncs.Start(
        end,
        [&](const AttemptEnd& e) {
          delivered = e;
          error = e.sync_error;
        },
        [&](std::function<void()> d) {
          std::lock_guard<std::mutex> lock(mu);
          posted_from = std::this_thread::get_id();
          delivery = std::move(d);
          cv.notify_all();
        });
    ASSERT_TRUE(started);
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return delivery != nullptr; }));
  }  // the end waits for the worker
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_NE(posted_from, std::this_thread::get_id());
  delivery();  // as the callback thread would
  EXPECT_EQ(error, "");
  EXPECT_TRUE(delivered.sync_dir.empty());  // the delivery copies nothing again
  EXPECT_EQ(delivered.exit.job, 7);
  std::ifstream copied(root / "sync" / "epoch-1.pt");
  std::string text;
  copied >> text;
  EXPECT_EQ(text, "weights");
  fs::remove_all(root);
}

// A failed sync is said in the delivery; the attempt's end is delivered all the same.
TEST(EndSyncsTest, AFailedSyncIsDeliveredWithItsReason) {
  const fs::path root =
      fs::temp_directory_path() / ("allot-end-syncs-f-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "job" / "checkpoints");
  { std::ofstream(root / "job" / "checkpoints" / "a") << "x"; }
  { std::ofstream(root / "file") << "not a directory"; }
  AttemptEnd end;
  end.job_dir = (root / "job").string();
  end.sync_dir = (root / "file" / "sync").string();  // under a file: cannot be made
  std::mutex mu;
  std::condition_variable cv;
  std::function<void()> delivery;
  std::string error;
  {
    EndSyncs syncs;
    ASSERT_TRUE(syncs.Start(
        end, [&](const AttemptEnd& e) { error = e.sync_error; },
        [&](std::function<void()> d) {
          std::lock_guard<std::mutex> lock(mu);
          delivery = std::move(d);
          cv.notify_all();
        }));
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return delivery != nullptr; }));
  }
  delivery();
  EXPECT_FALSE(error.empty());
  fs::remove_all(root);
}

}  // namespace
}  // namespace allot::exec
