// ScanDueCheckpoints (exec/checkpoint_scan.h): each attempt is scanned on its own pace, so one
// job's huge checkpoint directory delays only its own reports.

#include "exec/checkpoint_scan.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace allot::exec {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct FakeAttempt {
  std::string job_dir;
  Timestamp checkpoint = 0;
  Clock::time_point next_scan{};
  bool started = true;
};

class CheckpointScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/allot-checkpoint-scan-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    root_ = dir;
  }
  void TearDown() override { fs::remove_all(root_); }

  // A job directory with one checkpoint file in it.
  std::string JobWithCheckpoint(const std::string& name) {
    const fs::path dir = root_ / name;
    fs::create_directories(dir / "checkpoints");
    std::ofstream(dir / "checkpoints" / "step-1") << "weights";
    return dir.string();
  }

  // One scan; the (key, time) pairs reported newer, and the time of the next scan.
  std::pair<std::vector<int>, Clock::time_point> Scan(std::map<int, FakeAttempt>& attempts) {
    std::mutex mu;
    std::unique_lock<std::mutex> lock(mu);
    std::vector<int> newer;
    const Clock::time_point next = ScanDueCheckpoints(
        attempts, lock, [](const FakeAttempt& a) { return a.started; },
        [&](int key, Timestamp time) {
          EXPECT_TRUE(lock.owns_lock());
          EXPECT_GT(time, 0);
          newer.push_back(key);
        });
    EXPECT_TRUE(lock.owns_lock());
    return {newer, next};
  }

  fs::path root_;
};

TEST_F(CheckpointScanTest, OnlyTheAttemptsDueAreScannedEachOnItsOwnPace) {
  std::map<int, FakeAttempt> attempts;
  attempts[1].job_dir = JobWithCheckpoint("due");
  attempts[2].job_dir = JobWithCheckpoint("later");
  attempts[2].next_scan = Clock::now() + std::chrono::hours(1);  // a slow walk's long wait
  attempts[3].job_dir = JobWithCheckpoint("not-started");
  attempts[3].started = false;
  attempts[4];  // no job directory: nothing to scan

  const Clock::time_point before = Clock::now();
  auto [newer, next] = Scan(attempts);
  EXPECT_EQ(newer, std::vector<int>{1});
  EXPECT_GT(attempts[1].checkpoint, 0);
  EXPECT_EQ(attempts[2].checkpoint, 0);  // not due: its own pace, whatever the others'
  EXPECT_EQ(attempts[3].checkpoint, 0);
  // The scanned attempt waits at least the base interval; the next scan is the earliest wait.
  EXPECT_GE(attempts[1].next_scan, before + kCheckpointScan);
  EXPECT_EQ(next, attempts[1].next_scan);

  // Nothing newer: scanned again when due, but not reported again.
  attempts[1].next_scan = {};
  std::tie(newer, next) = Scan(attempts);
  EXPECT_TRUE(newer.empty());

  // Due now, the one that waited is scanned and reported.
  attempts[2].next_scan = {};
  std::tie(newer, next) = Scan(attempts);
  EXPECT_EQ(newer, std::vector<int>{2});
}

TEST_F(CheckpointScanTest, NothingToScanIsNeverDue) {
  std::map<int, FakeAttempt> attempts;
  attempts[1];  // no job directory
  attempts[2].job_dir = JobWithCheckpoint("not-started");
  attempts[2].started = false;
  EXPECT_EQ(Scan(attempts).second, Clock::time_point::max());
}

}  // namespace
}  // namespace allot::exec
