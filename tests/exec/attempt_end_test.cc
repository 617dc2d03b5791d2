#include "exec/attempt_end.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <set>
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

// One share's syncs take at most kMaxPerUser workers: a team whose attempts leave huge trees
// holds up its own syncs, not another team's. The copies are stand-ins (an EndSyncs copies as
// the share's user through CopyIdentity::exe): the first team's wait for a gate, the second's
// end at once.
TEST(EndSyncsTest, OneUsersSyncsHoldUpNoOtherUsers) {
  const fs::path root =
      fs::temp_directory_path() / ("allot-end-syncs-u-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "started");
  const fs::path gate = root / "gate";
  {
    std::ofstream(root / "held.sh")
        << "#!/bin/sh\ntouch \"$(mktemp -p " << (root / "started").string() << ")\"\nwhile [ ! -e "
        << gate.string() << " ]; do sleep 0.05; done\n";
  }
  { std::ofstream(root / "quick.sh") << "#!/bin/sh\nexit 0\n"; }
  fs::permissions(root / "held.sh", fs::perms::owner_all);
  fs::permissions(root / "quick.sh", fs::perms::owner_all);
  auto end_of = [&](model::JobId job, const std::string& exe, uid_t uid) {
    AttemptEnd end;
    end.exit.job = job;
    end.exit.attempt = 1;
    end.job_dir = (root / ("job-" + std::to_string(job))).string();
    fs::create_directories(fs::path(end.job_dir) / "checkpoints");
    end.sync_dir = (root / "sync").string();
    end.copy_as = CopyIdentity{(root / exe).string(), JobUser{uid, uid}, {}, 0};
    return end;
  };
  std::mutex mu;
  std::condition_variable cv;
  std::set<model::JobId> delivered;
  auto post = [&](const std::function<void()>& d) {
    d();  // as the callback thread would, at once
    cv.notify_all();
  };
  auto deliver = [&](const AttemptEnd& e) {
    std::lock_guard<std::mutex> lock(mu);
    delivered.insert(e.exit.job);
  };
  auto count_started = [&] {
    return std::distance(fs::directory_iterator(root / "started"), fs::directory_iterator());
  };
  {
    EndSyncs syncs;
    for (const model::JobId job : {model::JobId{1}, model::JobId{2}, model::JobId{3}})
      ASSERT_TRUE(syncs.Start(end_of(job, "held.sh", 65534), deliver, post));
    ASSERT_TRUE(syncs.Start(end_of(9, "quick.sh", 65533), deliver, post));
    {
      std::unique_lock<std::mutex> lock(mu);
      EXPECT_TRUE(
          cv.wait_for(lock, std::chrono::seconds(20), [&] { return delivered.count(9) == 1; }));
      EXPECT_EQ(delivered.size(), 1U);  // the first team's wait
    }
    for (int i = 0; i < 100 && count_started() < EndSyncs::kMaxPerUser; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a third would have begun
    EXPECT_EQ(count_started(), EndSyncs::kMaxPerUser);
    EXPECT_TRUE(syncs.Syncing(3, 1));  // held back, and said to be syncing
    { std::ofstream(gate) << ""; }
    std::unique_lock<std::mutex> lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return delivered.size() == 4; }));
  }
  EXPECT_EQ(count_started(), 3);
  fs::remove_all(root);
}

}  // namespace
}  // namespace allot::exec
