// Finished jobs' trees in the data directory (job_files.cc): measured once the job ended, kept
// while the disk has room, removed when the jobs' file system passes its threshold, and a
// caller who asks for the logs of a removed tree is told so. The order between shares is
// finished_trees_test.cc's; the thresholds on a real small file system are
// tests/integration/test_job_files.py's.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/support/controller_fixture.h"
#include "server/support/forwarding_executor.h"

namespace allot::server {
namespace {

constexpr std::int64_t kMiB = 1 << 20;

class JobFilesTest : public ControllerTest {
 protected:
  // Restarts the controller with these thresholds (the fixture's first start had the defaults).
  // With `controlled`, the file system's used percent is used_percent_, not statvfs's.
  void Restart(int high_percent, int low_percent, bool controlled = false,
               Duration check_interval = 100) {
    controller_.reset();
    options_.job_files_high_percent = high_percent;
    options_.job_files_low_percent = low_percent;
    options_.job_files_check_interval = check_interval;
    options_.job_files_usage = nullptr;
    // Small beside the faked disks (a 100 MiB one in EvictionTest), so that it comes back.
    options_.store_reserve_bytes = reserve_bytes_;
    // On the real file system (not `controlled`) no job is evicted: the build machine's disk may
    // well be past 95 % used, and these tests are about finished trees.
    options_.job_files_evict_percent = controlled ? 95 : 100;
    if (controlled) {
      options_.job_files_usage = [this]() -> std::pair<std::int64_t, std::int64_t> {
        if (usage_) return usage_();
        return {static_cast<std::int64_t>(used_percent_.load() * kTotal / 100), kTotal};
      };
    }
    Start();
  }
  Json Allot(const std::string& id) {
    Result<Json> d = Call("describeservicejob", {{"jobId", id}});
    return d.ok() ? d.value()["allot"] : Json();
  }
  std::int64_t FilesBytes(const std::string& id) {
    return Allot(id).value("filesBytes", std::int64_t{-1});
  }
  std::int64_t FilesRemovedAt(const std::string& id) {
    return Allot(id).value("filesRemovedAt", std::int64_t{0});
  }
  fs::path TreeOf(const std::string& id) const { return dir_ / "jobs" / id; }
  std::string RunToSuccess(const std::string& name, const std::string& script) {
    const std::string id = Submit(name, script);
    EXPECT_TRUE(WaitFor([&] { return StatusOf(id) == "SUCCEEDED"; })) << StatusOf(id);
    EXPECT_TRUE(WaitFor([&] { return FilesBytes(id) >= 0; })) << Allot(id).dump();
    return id;
  }
  // With the store's reserve made: two jobs hold both instances, and a third waits.
  void TwoRunningOneWaiting(std::string* running, std::string* running2, std::string* waiting) {
    ASSERT_TRUE(WaitFor([&] { return fs::exists(dir_ / "store-reserve"); }));
    *running = Submit("runs", "sleep 600");
    *running2 = Submit("runs-2", "sleep 600");
    for (const std::string* id : {running, running2}) {
      ASSERT_TRUE(WaitFor([&] { return StatusOf(*id) == "RUNNING"; })) << StatusOf(*id);
    }
    *waiting = Submit("waits", "sleep 600");
  }
  std::size_t AuditRecords() {
    Result<std::vector<store::Record>> records =
        store_->Range(store::Kind::kAudit, {.from = "", .to = "", .limit = 100000});
    return records.ok() ? records->size() : 0;
  }
  std::atomic<double> used_percent_{0};
  // Where set (before the restart), the file system's (used, total) bytes instead.
  std::function<std::pair<std::int64_t, std::int64_t>()> usage_;
  static constexpr std::int64_t kTotal = std::int64_t{100} << 30;
  std::atomic<std::int64_t> fixed_bytes_{0};  // what usage_ adds to the jobs' trees
  std::int64_t reserve_bytes_ = kMiB;         // Options::store_reserve_bytes at the restart
  static std::string WritesOneMiB() {
    return "echo hello; head -c 1048576 /dev/urandom > \"$SM_MODEL_DIR/model.bin\"";
  }
};

TEST_F(JobFilesTest, AFinishedJobsTreeIsMeasuredAndKeptWhileTheDiskHasRoom) {
  Restart(100, 80);
  const std::string id = Submit("writes", WritesOneMiB());
  ASSERT_TRUE(WaitFor([&] { return StatusOf(id) == "SUCCEEDED"; })) << StatusOf(id);
  ASSERT_TRUE(WaitFor([&] { return FilesBytes(id) >= 0; })) << Allot(id).dump();
  EXPECT_GE(FilesBytes(id), kMiB);
  EXPECT_LT(FilesBytes(id), 4 * kMiB);
  EXPECT_EQ(FilesRemovedAt(id), 0);
  EXPECT_TRUE(fs::exists(TreeOf(id) / "attempt-1" / "algo-1" / "stdout"));
  Result<Controller::Reply> logs = controller_->Logs({.job_id = id});
  ASSERT_TRUE(logs.ok()) << logs.status().ToString();
  EXPECT_NE(controller_->MetricsText().find("allot_job_files_bytes{queue=\"q\",share=\"\"} " +
                                            std::to_string(FilesBytes(id)) + "\n"),
            std::string::npos)
      << controller_->MetricsText();
}

// While the disk is more than the high mark used, the check comes every second, not once an
// interval (10 minutes here): jobs writing fast would fill the last percents between two checks.
// Before, the second check came 10 minutes after the first. Once the disk has room again, the
// checks go back to the interval.
TEST_F(JobFilesTest, WhileTheDiskIsShortItIsCheckedEverySecond) {
  auto checks = std::make_shared<std::atomic<int>>(0);  // the controller outlives the test body
  used_percent_ = 91;
  usage_ = [this, checks]() -> std::pair<std::int64_t, std::int64_t> {
    ++*checks;
    return {static_cast<std::int64_t>(used_percent_.load() * kTotal / 100), kTotal};
  };
  Restart(90, 85, /*controlled=*/true, /*check_interval=*/Seconds(600));
  ASSERT_TRUE(WaitFor([&] { return *checks >= 4; })) << *checks << " checks";
  used_percent_ = 50;
  const int checks_at_room = *checks;
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  // One check may have been armed before the disk had room (and one running then); none after.
  EXPECT_LE(*checks - checks_at_room, 2) << checks_at_room << " then " << *checks;
}

// Past the threshold (1 % here: any file system in use), the finished job's tree goes; a
// running job's stays, and so does its record.
TEST_F(JobFilesTest, WhenTheDiskIsShortAFinishedTreeIsRemovedAndTheLogsSaySo) {
  Restart(1, 0);
  const std::string running = Submit("running", "sleep 60");
  const std::string done = Submit("done", WritesOneMiB());
  ASSERT_TRUE(WaitFor([&] { return StatusOf(done) == "SUCCEEDED"; })) << StatusOf(done);
  ASSERT_TRUE(WaitFor([&] { return FilesRemovedAt(done) != 0; })) << Allot(done).dump();
  EXPECT_GE(FilesBytes(done), kMiB);  // what it took, kept in the record
  EXPECT_FALSE(fs::exists(fs::symlink_status(TreeOf(done))));
  Result<Controller::Reply> logs = controller_->Logs({.job_id = done});
  ASSERT_FALSE(logs.ok());
  EXPECT_EQ(logs.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(logs.status().message().find("were removed at"), std::string::npos)
      << logs.status().message();
  EXPECT_NE(logs.status().message().find("--job-files-high-percent"), std::string::npos);

  ASSERT_EQ(StatusOf(running), "RUNNING");
  EXPECT_TRUE(fs::exists(TreeOf(running) / "attempt-1" / "algo-1"));
  EXPECT_EQ(FilesBytes(running), -1);
  ASSERT_TRUE(Call("terminateservicejob", {{"jobId", running}, {"reason", "done"}}).ok());
  // Once it ended, it goes too.
  ASSERT_TRUE(WaitFor([&] { return FilesRemovedAt(running) != 0; })) << Allot(running).dump();
  EXPECT_FALSE(fs::exists(fs::symlink_status(TreeOf(running))));
  EXPECT_EQ(controller_->MetricsText().find("allot_job_files_bytes{"), std::string::npos);
}

// What was measured before a restart is known after it: the tree is removed once the server
// comes back with a threshold it passes, without being measured again.
TEST_F(JobFilesTest, ATreeMeasuredBeforeARestartIsRemovedAfterIt) {
  Restart(100, 80);
  const std::string id = RunToSuccess("writes", WritesOneMiB());
  const std::int64_t measured = FilesBytes(id);
  Restart(1, 0);
  ASSERT_TRUE(WaitFor([&] { return FilesRemovedAt(id) != 0; })) << Allot(id).dump();
  EXPECT_EQ(FilesBytes(id), measured);
  EXPECT_FALSE(fs::exists(fs::symlink_status(TreeOf(id))));
}

// A full disk that nothing else frees: the store's reserve goes, so the rollback writes; until
// there is room again a caller may only free the disk (terminate, delete), not add to it; then
// the reserve is made again and changes are taken. Before, the rollback's probe failed for as
// long as the disk stayed full (test_full_disk.py has it with a real disk).
TEST_F(JobFilesTest, OnAFullDiskTheStoresReserveGoesAndOnlyWhatFreesTheDiskIsTaken) {
  Restart(90, 50, /*controlled=*/true);
  const fs::path reserve = dir_ / "store-reserve";
  std::string running, running2, waiting;
  ASSERT_NO_FATAL_FAILURE(TwoRunningOneWaiting(&running, &running2, &waiting));
  const std::string waiting2 = Submit("waits-2", "sleep 600");

  used_percent_ = 100;  // and the store has no room while the reserve takes its bytes
  store_->FailWhile(ResourceExhausted("disk full"), [reserve] { return fs::exists(reserve); });
  EXPECT_TRUE(Submit("refused", "true").empty());
  ASSERT_TRUE(WaitFor([this] { return !controller_->rolling_back(); }));
  EXPECT_FALSE(fs::exists(reserve));
  Result<Json> added = Call("submitservicejob", {{"jobName", "adds"},
                                                 {"jobQueue", "q"},
                                                 {"serviceJobType", "SAGEMAKER_TRAINING"},
                                                 {"serviceRequestPayload", Payload("true")}});
  ASSERT_FALSE(added.ok());
  EXPECT_NE(added.status().message().find("disk is full"), std::string::npos)
      << added.status().ToString();
  EXPECT_FALSE(controller_->rolling_back());  // a refusal, not a failed write
  EXPECT_NE(controller_->MetricsText().find("\nallot_store_reserve_released 1\n"),
            std::string::npos);
  // A termination is taken, and audited; one that changes nothing or is refused writes nothing.
  const std::size_t audited = AuditRecords();
  ASSERT_TRUE(Call("terminateservicejob", {{"jobId", running}, {"reason", "free it"}}).ok());
  ASSERT_TRUE(WaitFor([&] { return StatusOf(running) == "FAILED"; })) << StatusOf(running);
  EXPECT_EQ(AuditRecords(), audited + 1);
  // The freed instance waits for room: no job starts while the reserve is out, and the waiting
  // job says why.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(StatusOf(waiting), "RUNNABLE");
  EXPECT_FALSE(fs::exists(TreeOf(waiting)));
  const std::string reason =
      Call("describeservicejob", {{"jobId", waiting}}).value().value("statusReason", std::string());
  EXPECT_NE(reason.find("The server holds every dispatch: its disk is full"), std::string::npos)
      << reason;
  EXPECT_TRUE(Call("terminateservicejob", {{"jobId", running}, {"reason", "again"}}).ok());
  EXPECT_FALSE(Call("terminateservicejob", {{"jobId", "no-such-job"}, {"reason", "x"}}).ok());
  EXPECT_EQ(AuditRecords(), audited + 1);
  // A waiting job terminated meanwhile never starts.
  ASSERT_TRUE(Call("terminateservicejob", {{"jobId", running2}, {"reason", "free it"}}).ok());
  ASSERT_TRUE(WaitFor([&] { return StatusOf(running2) == "FAILED"; })) << StatusOf(running2);
  EXPECT_EQ(StatusOf(waiting2), "RUNNABLE");
  ASSERT_TRUE(Call("terminateservicejob", {{"jobId", waiting2}, {"reason", "not now"}}).ok());
  ASSERT_TRUE(WaitFor([&] { return StatusOf(waiting2) == "FAILED"; })) << StatusOf(waiting2);

  store_->Heal();
  used_percent_ = 40;
  ASSERT_TRUE(WaitFor([&] { return !Submit("after", "true").empty(); }));
  ASSERT_TRUE(WaitFor([&] { return StatusOf(waiting) == "RUNNING"; })) << StatusOf(waiting);
  EXPECT_FALSE(fs::exists(TreeOf(waiting2)));
  EXPECT_EQ(StatusOf(waiting2), "FAILED");
  EXPECT_TRUE(fs::exists(reserve));
  EXPECT_EQ(fs::file_size(reserve), kMiB);
  EXPECT_NE(controller_->MetricsText().find("\nallot_store_reserve_released 0\n"),
            std::string::npos);
  // A failure on a disk with room (an I/O error) leaves the reserve: room would not help.
  store_->Fail(Internal("io error"));
  EXPECT_TRUE(Submit("io", "true").empty());
  ASSERT_TRUE(WaitFor([this] { return controller_->rolling_back(); }));
  EXPECT_NE(controller_->MetricsText().find("\nallot_store_rolling_back 1\n"), std::string::npos);
  store_->Heal();
  ASSERT_TRUE(WaitFor([this] { return !controller_->rolling_back(); }));
  EXPECT_TRUE(fs::exists(reserve));
  EXPECT_FALSE(Submit("after-io", "true").empty());
}

// The store fails again while the reserve is out, with a job held for room: the rollback ends
// once the store writes, its reload holds dispatches again (a new engine), the held job runs
// once the reserve is back, with one attempt, and a termination refused by the failure is not
// taken. Before, a launch held for room was dropped by the rollback, and its job showed an
// attempt "lost: the server stopped while it ran" that had never begun.
TEST_F(JobFilesTest, AFailureWhileTheReserveIsOutIsRolledBackAndTheHeldJobRunsOnce) {
  Restart(90, 50, /*controlled=*/true);
  const fs::path reserve = dir_ / "store-reserve";
  std::string running, running2, waiting;
  ASSERT_NO_FATAL_FAILURE(TwoRunningOneWaiting(&running, &running2, &waiting));

  used_percent_ = 100;
  store_->FailWhile(ResourceExhausted("disk full"), [reserve] { return fs::exists(reserve); });
  EXPECT_TRUE(Submit("refused", "true").empty());
  ASSERT_TRUE(WaitFor([this] { return !controller_->rolling_back(); }));
  ASSERT_FALSE(fs::exists(reserve));
  ASSERT_TRUE(Call("terminateservicejob", {{"jobId", running}, {"reason", "free it"}}).ok());
  ASSERT_TRUE(WaitFor([&] { return StatusOf(running) == "FAILED"; })) << StatusOf(running);
  EXPECT_EQ(StatusOf(waiting), "RUNNABLE");  // held for room

  store_->Fail(ResourceExhausted("disk full"));  // and now even the reserve's room is spent
  EXPECT_FALSE(Call("terminateservicejob", {{"jobId", running2}, {"reason", "lost"}}).ok());
  ASSERT_TRUE(WaitFor([this] { return controller_->rolling_back(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(controller_->rolling_back());  // the probe fails: no reserve left to release
  EXPECT_FALSE(fs::exists(TreeOf(waiting)));

  store_->Heal();  // the store writes, but the disk is still full: reloaded, and still held
  ASSERT_TRUE(WaitFor([this] { return !controller_->rolling_back(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(StatusOf(waiting), "RUNNABLE");
  EXPECT_NE(Call("describeservicejob", {{"jobId", waiting}})
                .value()
                .value("statusReason", std::string())
                .find("holds every dispatch"),
            std::string::npos);
  used_percent_ = 40;
  ASSERT_TRUE(WaitFor([&] { return fs::exists(reserve); }));
  ASSERT_TRUE(WaitFor([&] { return StatusOf(waiting) == "RUNNING"; })) << StatusOf(waiting);
  const Json attempts = Call("describeservicejob", {{"jobId", waiting}}).value()["attempts"];
  EXPECT_EQ(attempts.size(), 1u) << attempts.dump();
  EXPECT_EQ(StatusOf(running2), "RUNNING");  // its termination was refused, not lost
  EXPECT_FALSE(Submit("after", "true").empty());
  for (const std::string& id : {running2, waiting}) {
    ASSERT_TRUE(Call("terminateservicejob", {{"jobId", id}, {"reason", "done"}}).ok());
    ASSERT_TRUE(WaitFor([&] { return StatusOf(id) == "FAILED"; })) << StatusOf(id);
  }
}

// The removal is for a full disk, when the store's writes fail: it runs then too, and what it
// removed is recorded once the store writes again. Before, nothing was removed while the store
// failed, and the store failed while nothing was removed.
TEST_F(JobFilesTest, TreesRemovedWhileTheStoreFailsAreRecordedOnceItWrites) {
  Restart(90, 50, /*controlled=*/true);
  const std::string id = RunToSuccess("writes", WritesOneMiB());
  store_->Fail(ResourceExhausted("disk full"));
  EXPECT_TRUE(Submit("refused", "true").empty());
  ASSERT_TRUE(WaitFor([this] { return controller_->rolling_back(); }));
  used_percent_ = 95;
  ASSERT_TRUE(WaitFor([&] { return !fs::exists(fs::symlink_status(TreeOf(id))); }));
  EXPECT_TRUE(controller_->rolling_back());
  used_percent_ = 40;
  store_->Heal();
  ASSERT_TRUE(WaitFor([this] { return !controller_->rolling_back(); }));
  ASSERT_TRUE(WaitFor([&] { return FilesRemovedAt(id) != 0; })) << Allot(id).dump();
  Restart(90, 50, /*controlled=*/true);  // and it stays recorded
  EXPECT_NE(FilesRemovedAt(id), 0);
}

// The removal's own batch fails (the store fails as it records it): the record is kept as an
// executor report is, and written once the store writes again. Before, it was lost in the
// rollback, and the tree, gone, was counted and its logs answered as if it were there.
TEST_F(JobFilesTest, ARemovalWhoseOwnBatchFailsIsRecordedAfterTheRollback) {
  Restart(90, 50, /*controlled=*/true);
  const std::string id = RunToSuccess("writes", WritesOneMiB());
  store_->Fail(ResourceExhausted("disk full"));
  used_percent_ = 95;
  ASSERT_TRUE(WaitFor([&] { return !fs::exists(fs::symlink_status(TreeOf(id))); }));
  ASSERT_TRUE(WaitFor([this] { return controller_->rolling_back(); }));
  used_percent_ = 40;
  store_->Heal();
  ASSERT_TRUE(WaitFor([this] { return !controller_->rolling_back(); }));
  ASSERT_TRUE(WaitFor([&] { return FilesRemovedAt(id) != 0; })) << Allot(id).dump();
  EXPECT_FALSE(controller_->Logs({.job_id = id}).ok());
  EXPECT_EQ(controller_->MetricsText().find("allot_job_files_bytes{"), std::string::npos);
}

// A tree charged far more than it holds (one too deep to measure) does not end the pass while
// the disk stays short: the file system is read again, and the next tree goes too, in the one
// check the second job's end makes (the periodic checks are a minute apart here).
TEST_F(JobFilesTest, ATreeChargedMoreThanItHoldsDoesNotEndThePass) {
  Restart(90, 85, /*controlled=*/true, Seconds(60));
  const std::string deep = Submit("deep",
                                  "d=\"$SM_MODEL_DIR\"; for i in $(seq 300); do "
                                  "d=\"$d/d\"; done; mkdir -p \"$d\"");
  ASSERT_TRUE(WaitFor([&] { return FilesBytes(deep) >= 0; })) << Allot(deep).dump();
  used_percent_ = 95;
  const std::string real = RunToSuccess("real", WritesOneMiB());
  ASSERT_TRUE(WaitFor([&] { return FilesRemovedAt(deep) != 0 && FilesRemovedAt(real) != 0; }, 5))
      << Allot(deep).dump() << Allot(real).dump();
}

// Shares a, b and c in queue qs, on a file system of 100 MiB whose use is the trees' file sizes
// plus fixed_bytes_. (The next two tests are a review's, each failing on 06ed38b.)
class EvictionTest : public JobFilesTest {
 protected:
  static constexpr std::int64_t kSmallTotal = 100 * kMiB;
  void SetUpShares(int high_percent = 90, int low_percent = 85) {
    usage_ = [this]() -> std::pair<std::int64_t, std::int64_t> {
      const bool reserve = count_reserve_ && fs::exists(dir_ / "store-reserve");
      return {fixed_bytes_.load() + Trees() + (reserve ? reserve_bytes_ : 0), kSmallTotal};
    };
    Restart(high_percent, low_percent, /*controlled=*/true);
    const Json fifo = {{"idleResourceAssignmentStrategy", "FIFO"}};
    ASSERT_TRUE(Call("createschedulingpolicy", {{"name", "qsp"}, {"quotaSharePolicy", fifo}}).ok());
    MakePolicyQueue("qs", "qsp");
    for (const char* name : {"a", "b", "c"}) {
      Json share = TeamShareInQ();
      share["quotaShareName"] = name;
      share["jobQueue"] = "qs";
      ASSERT_TRUE(Call("createquotashare", share).ok());
    }
  }
  bool count_reserve_ = false;  // the store's reserve as part of the faked disk
  std::int64_t Trees() {
    std::int64_t trees = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir_ / "jobs", ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file(ec)) trees += static_cast<std::int64_t>(it->file_size(ec));
    }
    return trees;
  }
  std::string SubmitTo(const std::string& share, const std::string& script,
                       const std::string& queue = "qs") {
    Result<Json> r = Call("submitservicejob", {{"jobName", share + "-job"},
                                               {"jobQueue", queue},
                                               {"quotaShareName", share},
                                               {"serviceJobType", "SAGEMAKER_TRAINING"},
                                               {"serviceRequestPayload", Payload(script)}});
    return r.ok() ? r.value()["jobId"].get<std::string>() : "";
  }
  // Every stop the executor is given is dropped, from the next start on: the evicted job stays
  // stopping for as long as the test needs.
  void DropStops() {
    wrap_executor_ = [](std::unique_ptr<exec::Executor> real) {
      return std::unique_ptr<exec::Executor>(std::make_unique<StopDropper>(std::move(real), true));
    };
  }
  bool Evicting(const std::string& id) {
    const Json stop = Allot(id).value("stopping", Json::object());
    return stop.value("reason", "").starts_with("Terminated to free the jobs' file system");
  }
  // A job that writes `mib` MiB into its model directory, says so (`done`), and runs on.
  static std::string WritesThenRuns(int mib) {
    return "head -c " + std::to_string(mib * kMiB) +
           " /dev/zero > \"$SM_MODEL_DIR/m\" && touch \"$SM_MODEL_DIR/../done\"; sleep 600";
  }
  // A job that says it runs (`done`), writes `mib` MiB once told (Tell(id, "go")), says so
  // (`wrote`), and runs on.
  static std::string WritesWhenTold(int mib) {
    return "touch \"$SM_MODEL_DIR/../done\"; while [ ! -e \"$SM_MODEL_DIR/../go\" ]; do sleep "
           "0.05; done; head -c " +
           std::to_string(mib * kMiB) +
           " /dev/zero > \"$SM_MODEL_DIR/m\" && touch \"$SM_MODEL_DIR/../wrote\"; sleep 600";
  }
  void Tell(const std::string& id, const char* file) {
    std::ofstream(TreeOf(id) / "attempt-1" / "algo-1" / "ml" / file).put('x');
  }
  bool Done(const std::string& id, const char* name = "done") {
    return fs::exists(TreeOf(id) / "attempt-1" / "algo-1" / "ml" / "model" / ".." / name);
  }
};

// The shares are ranked on what they hold now. Before, on live measures up to 5 minutes old:
// b's job was measured empty, then wrote 8 MiB, and a's 4 MiB job was terminated although b
// held twice as much.
TEST_F(EvictionTest, TheSharesAreRankedOnWhatTheyHoldNotOnAnOldMeasure) {
  SetUpShares();
  const std::string c_done = SubmitTo("c", "head -c 1048576 /dev/zero > \"$SM_MODEL_DIR/m\"");
  ASSERT_TRUE(WaitFor([&] { return FilesBytes(c_done) >= 0; })) << StatusOf(c_done);
  const std::string a = SubmitTo("a", WritesThenRuns(4));
  const std::string b = SubmitTo("b", WritesWhenTold(8));
  ASSERT_TRUE(WaitFor([&] { return Done(a) && Done(b); }));
  // 91 %: the removal pass measures the live trees (a: 4 MiB, b: ~0) and removes c's tree.
  fixed_bytes_ = 91 * kMiB + kMiB / 2 - Trees();
  ASSERT_TRUE(WaitFor([&] { return FilesRemovedAt(c_done) != 0; })) << Allot(c_done).dump();
  // b now writes 8 MiB, and the disk passes 96 %.
  Tell(b, "go");
  ASSERT_TRUE(WaitFor([&] { return Done(b, "wrote"); }));
  fixed_bytes_ = 96 * kMiB - Trees();
  const bool a_failed = WaitFor([&] { return StatusOf(a) == "FAILED"; }, 5);
  const bool b_failed = StatusOf(b) == "FAILED";
  EXPECT_FALSE(a_failed) << "a's job was evicted, though share b holds twice as much";
  EXPECT_TRUE(WaitFor([&] { return StatusOf(b) == "FAILED"; }, 20) || b_failed);
  (void)Call("terminateservicejob", {{"jobId", a}, {"reason", "done"}});
  (void)Call("terminateservicejob", {{"jobId", b}, {"reason", "done"}});
  EXPECT_TRUE(WaitFor([&] { return StatusOf(a) == "FAILED" && StatusOf(b) == "FAILED"; }));
}

// The eviction's own batch fails (the store's writes fail on a full disk) and the rollback drops
// the termination: the next check evicts again. Before, the job was still taken as evicted, ran
// on, and no job was evicted again until it ended by itself.
TEST_F(EvictionTest, AnEvictionLostInARollbackIsMadeAgain) {
  SetUpShares();
  const std::string a = SubmitTo("a", WritesThenRuns(4));
  ASSERT_TRUE(WaitFor([&] { return Done(a); }));
  store_->Fail(ResourceExhausted("disk full"));
  fixed_bytes_ = 97 * kMiB - Trees();
  ASSERT_TRUE(WaitFor([this] { return controller_->rolling_back(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  store_->Heal();
  ASSERT_TRUE(WaitFor([this] { return !controller_->rolling_back(); }));
  EXPECT_TRUE(WaitFor([&] { return StatusOf(a) == "FAILED"; }, 20))
      << "still " << StatusOf(a) << " at 97 % used, 20 s after the rollback";
  (void)Call("terminateservicejob", {{"jobId", a}, {"reason", "done"}});
  EXPECT_TRUE(WaitFor([&] { return StatusOf(a) == "FAILED"; }));
}

// An eviction still stopping when the server restarts is still the one under way: no second
// job is terminated before it ended and its tree was measured. Its stop never reaches it here
// (dropped, before and after the restart). Before, the restart forgot it, and the next check
// terminated share d's other job as well.
TEST_F(EvictionTest, AnEvictionStillStoppingAtARestartIsStillTheOnlyOne) {
  DropStops();
  SetUpShares();
  Json two = TeamShareInQ();  // both of the queue's instances, so d runs two jobs at once
  two["quotaShareName"] = "d";
  two["jobQueue"] = "qs";
  two["capacityLimits"][0]["maxCapacity"] = 2;
  ASSERT_TRUE(Call("createquotashare", two).ok());
  const std::string big = SubmitTo("d", WritesThenRuns(4));
  const std::string small = SubmitTo("d", WritesThenRuns(1));
  ASSERT_TRUE(WaitFor([&] { return Done(big) && Done(small); }));
  fixed_bytes_ = 96 * kMiB - Trees();
  ASSERT_TRUE(WaitFor([&] { return Evicting(big); })) << Allot(big).dump();
  Restart(90, 85, /*controlled=*/true);  // the stop dropped again: big stays stopping
  std::this_thread::sleep_for(std::chrono::milliseconds(800));  // eight checks
  EXPECT_TRUE(Evicting(big)) << Allot(big).dump();
  EXPECT_FALSE(Evicting(small)) << "a second job evicted while the first still stops";
  EXPECT_EQ(StatusOf(small), "RUNNING");
  wrap_executor_ = nullptr;
  Restart(90, 85, /*controlled=*/true);  // stops reach the jobs again
  (void)Call("terminateservicejob", {{"jobId", small}, {"reason", "done"}});
  EXPECT_TRUE(WaitFor([&] { return StatusOf(big) == "FAILED" && StatusOf(small) == "FAILED"; }));
}

// The evicted job's queue is deleted while it stops, and the server restarts: the job is kept
// for Describe, outside the engine, and no stop will ever end it. It holds up no later
// eviction. (With the eviction under way taken from the job's record alone, every later one
// waited for it for good: share b's job here was never evicted.)
TEST_F(EvictionTest, AJobARestartLeftOutsideTheEngineHoldsUpNoEviction) {
  DropStops();
  SetUpShares();
  MakePolicyQueue("q2", "qsp");
  Json e = TeamShareInQ();
  e["quotaShareName"] = "e";
  e["jobQueue"] = "q2";
  ASSERT_TRUE(Call("createquotashare", e).ok());
  // Its stops dropped, the evicted job ends when the test says (the file `stop`).
  const std::string big =
      SubmitTo("e",
               "head -c 4194304 /dev/zero > \"$SM_MODEL_DIR/m\" && touch "
               "\"$SM_MODEL_DIR/../done\"; while [ ! -e \"$SM_MODEL_DIR/../stop\" ];"
               " do sleep 0.1; done",
               "q2");
  const std::string b = SubmitTo("b", WritesWhenTold(8));
  ASSERT_TRUE(WaitFor([&] { return Done(big) && Done(b); }));
  fixed_bytes_ = 96 * kMiB - Trees();
  ASSERT_TRUE(WaitFor([&] { return Evicting(big); })) << Allot(big).dump();
  ASSERT_TRUE(Call("updatejobqueue", {{"jobQueue", "q2"}, {"state", "DISABLED"}}).ok());
  ASSERT_TRUE(Call("deletejobqueue", {{"jobQueue", "q2"}}).ok());
  Restart(90, 85, /*controlled=*/true);  // big stays RUNNING, outside the engine
  Tell(b, "go");
  ASSERT_TRUE(WaitFor([&] { return Done(b, "wrote"); }));
  fixed_bytes_ = 96 * kMiB - Trees();  // b now holds the most: 8 MiB against e's 4
  EXPECT_TRUE(WaitFor([&] { return Evicting(b); }, 10)) << Allot(b).dump();
  Tell(big, "stop");
  wrap_executor_ = nullptr;
  Restart(90, 85, /*controlled=*/true);  // stops reach the jobs again
  (void)Call("terminateservicejob", {{"jobId", b}, {"reason", "done"}});
  EXPECT_TRUE(WaitFor([&] { return StatusOf(b) == "FAILED"; }));
}

// A tenant terminates its own job with a reason that copies an eviction's, and its stop never
// ends (dropped): no eviction is taken to be under way, and share b's job, holding the most, is
// still evicted. (The marker is the record's `evicted`, which no caller writes.)
TEST_F(EvictionTest, ATerminationWhoseReasonCopiesAnEvictionsHoldsUpNoEviction) {
  DropStops();
  SetUpShares();
  const std::string forged = SubmitTo("a", WritesThenRuns(1));
  const std::string b = SubmitTo("b", WritesThenRuns(4));
  ASSERT_TRUE(WaitFor([&] { return Done(forged) && Done(b); }));
  ASSERT_TRUE(Call("terminateservicejob",
                   {{"jobId", forged},
                    {"reason", "Terminated to free the jobs' file system: it was 99.0% used"}})
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return Evicting(forged); })) << Allot(forged).dump();
  fixed_bytes_ = 96 * kMiB - Trees();
  EXPECT_TRUE(WaitFor([&] { return Evicting(b); }, 10)) << Allot(b).dump();
  wrap_executor_ = nullptr;
  Restart(90, 85, /*controlled=*/true);  // stops reach the jobs again
  EXPECT_TRUE(WaitFor([&] { return StatusOf(forged) == "FAILED" && StatusOf(b) == "FAILED"; }));
}

// Running jobs alone fill the disk: past the eviction mark (95 %), with no finished tree left,
// the job with the largest tree in the share holding the most is terminated, one at a time, and
// its tree removed once it ended. Before, nothing stopped them: the disk filled, the store's
// writes failed, and every team's calls failed with it.
TEST_F(EvictionTest, RunningJobsThatFillTheDiskLoseTheLargestOfTheShareHoldingTheMost) {
  SetUpShares();
  const std::string big = SubmitTo("a", WritesThenRuns(4));
  const std::string small = SubmitTo("b", WritesThenRuns(1));
  ASSERT_TRUE(WaitFor([&] { return Done(big) && Done(small); }));
  // 92 %: past the high mark, but nothing finished to remove and under the eviction mark.
  fixed_bytes_ = 92 * kMiB - Trees();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // six checks
  EXPECT_EQ(StatusOf(big), "RUNNING");
  EXPECT_EQ(StatusOf(small), "RUNNING");
  // 95 % exactly: at the mark, not more than it. (Before, a job was evicted here, and the
  // older test above, whose disk sits at 95 %, lost its job when a check fell in its run.)
  fixed_bytes_ = 95 * kMiB - Trees();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_EQ(StatusOf(big), "RUNNING");
  EXPECT_EQ(StatusOf(small), "RUNNING");
  // 96 %: a holds the most; its job goes, and its tree with it (96 - 4 = 92 %, under the mark).
  fixed_bytes_ = 96 * kMiB - Trees();
  ASSERT_TRUE(WaitFor([&] { return StatusOf(big) == "FAILED"; })) << StatusOf(big);
  Result<Json> d = Call("describeservicejob", {{"jobId", big}});
  ASSERT_TRUE(d.ok());
  const std::string reason = d.value().value("statusReason", "");
  EXPECT_EQ(reason.rfind("Terminated to free the jobs' file system: it was 96.0% used", 0), 0U)
      << reason;
  EXPECT_NE(reason.find("qs/a"), std::string::npos) << reason;
  EXPECT_TRUE(WaitFor([&] { return FilesRemovedAt(big) != 0; })) << Allot(big).dump();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_EQ(StatusOf(small), "RUNNING");  // one is enough: under the mark again
  ASSERT_TRUE(Call("terminateservicejob", {{"jobId", small}, {"reason", "done"}}).ok());
  EXPECT_TRUE(WaitFor([&] { return StatusOf(small) == "FAILED"; }));
}

// A job fills the disk; the eviction's own write fails, and the rollback that releases the
// store's reserve also loses the eviction. The release leaves the disk under the eviction mark
// (92 %), but with less free than the reserve needs to be made again (8 of 16 MiB). The room it
// needs counts as used while it is out: the job is evicted again, its tree goes, the reserve comes
// back and changes are taken. Before, nothing was evicted or removed at 92 %, and every change
// was refused until a restart (found by a hostile tenant's job on a 192 MiB data directory).
TEST_F(EvictionTest, AReserveTheMarksWouldNotBringBackIsMadeRoomFor) {
  reserve_bytes_ = 8 * kMiB;
  count_reserve_ = true;
  fixed_bytes_ = 50 * kMiB;
  SetUpShares();
  const fs::path reserve = dir_ / "store-reserve";
  ASSERT_TRUE(WaitFor([&] { return fs::exists(reserve); }));
  const std::string filler = SubmitTo("a", WritesWhenTold(20));
  ASSERT_TRUE(WaitFor([&] { return Done(filler); }));
  Tell(filler, "go");
  ASSERT_TRUE(WaitFor([&] { return Done(filler, "wrote"); }));  // 50 + 20 + 8: 78 %
  // Then something else fills the disk at once (72 + 20 + 8): the job's writes are all done,
  // so what the disk holds after the release is known (92 %).
  store_->FailWhile(ResourceExhausted("disk full"), [reserve] { return fs::exists(reserve); });
  fixed_bytes_ = 72 * kMiB;
  ASSERT_TRUE(WaitFor([&] { return !fs::exists(reserve); }));
  store_->Heal();  // the fault stood for the full disk, which has the reserve's room now
  ASSERT_TRUE(WaitFor([&] { return StatusOf(filler) == "FAILED"; })) << StatusOf(filler);
  const std::string reason =
      Call("describeservicejob", {{"jobId", filler}}).value().value("statusReason", std::string());
  EXPECT_NE(reason.find("counting the room the server's store needs free"), std::string::npos)
      << reason;
  ASSERT_TRUE(WaitFor([&] { return FilesRemovedAt(filler) != 0; })) << Allot(filler).dump();
  ASSERT_TRUE(WaitFor([&] { return fs::exists(reserve); }));
  EXPECT_TRUE(WaitFor([&] { return !SubmitTo("b", "true").empty(); }));
}

// What a share's running jobs hold counts toward what it holds: share a, with a small finished
// tree and a running job holding more, gives its finished tree before share b, whose finished
// tree is the larger. Counting finished trees alone, b's went first. The file system here is
// 100 MiB, of which the jobs' trees take what they take plus a fixed part that puts it just
// over the threshold.
TEST_F(EvictionTest, ARunningJobsTreeCountsTowardWhatItsShareHolds) {
  SetUpShares(89, 88);  // and the eviction mark stays 95 %: nothing running is terminated here
  auto writes = [](int mib) {
    return "head -c " + std::to_string(mib * kMiB) + " /dev/zero > \"$SM_MODEL_DIR/m\"";
  };
  const std::string b_done = SubmitTo("b", writes(4));
  const std::string a_done = SubmitTo("a", writes(2));
  for (const std::string& id : {a_done, b_done}) {
    ASSERT_TRUE(WaitFor([&] { return FilesBytes(id) >= 0; })) << StatusOf(id);
  }
  const std::string a_running =
      SubmitTo("a", writes(8) + " && touch \"$SM_MODEL_DIR/../done\"; sleep 60");
  ASSERT_TRUE(WaitFor([&] { return Done(a_running); })) << StatusOf(a_running);
  // Just over 89 %: freeing a's 2 MiB brings it under 88 %, and so would b's 4 MiB.
  fixed_bytes_ = 89 * kMiB + kMiB / 2 - Trees();
  ASSERT_TRUE(WaitFor([&] { return FilesRemovedAt(a_done) != 0; })) << Allot(a_done).dump();
  EXPECT_EQ(FilesRemovedAt(b_done), 0);
  EXPECT_TRUE(fs::exists(TreeOf(a_running)));
  ASSERT_TRUE(Call("terminateservicejob", {{"jobId", a_running}, {"reason", "done"}}).ok());
  EXPECT_TRUE(WaitFor([&] { return StatusOf(a_running) == "FAILED"; }));
}

// A chain deeper than the walks go hides what lies below it: such a tree is charged what its
// hosts and its checkpoints could hold (the disk limit each), so its share does not look small.
TEST_F(JobFilesTest, ATreeTooDeepToMeasureIsChargedWhatItsHostsCouldWrite) {
  Restart(100, 80);
  const std::string id = Submit("deep",
                                "d=\"$SM_MODEL_DIR\"; for i in $(seq 300); do d=\"$d/d\"; "
                                "done; mkdir -p \"$d\" && head -c 65536 /dev/zero > \"$d/f\"");
  ASSERT_TRUE(WaitFor([&] { return FilesBytes(id) >= 0; })) << Allot(id).dump();
  EXPECT_GE(FilesBytes(id), 2 * options_.job_limits.disk_bytes) << StatusOf(id);
}

// A tree that cannot be removed (an immutable file, a mount point) stays counted, is logged, and
// is tried again later; the others go meanwhile.
TEST_F(JobFilesTest, AFailedRemovalKeepsTheTreeCountedAndIsTriedAgain) {
  Restart(90, 0, /*controlled=*/true);
  const std::string stuck = RunToSuccess("stuck", WritesOneMiB());
  const fs::path pinned = TreeOf(stuck) / "attempt-1" / "algo-1" / "stdout";
  if (std::system(("chattr +i '" + pinned.string() + "' 2>/dev/null").c_str()) != 0) {
    GTEST_SKIP() << "chattr +i is not available here";
  }
  const std::string other = RunToSuccess("other", WritesOneMiB());
  used_percent_ = 95;
  ASSERT_TRUE(WaitFor([&] { return FilesRemovedAt(other) != 0; })) << Allot(other).dump();
  EXPECT_EQ(FilesRemovedAt(stuck), 0);
  EXPECT_TRUE(fs::exists(pinned));
  EXPECT_NE(controller_->MetricsText().find("allot_job_files_bytes{queue=\"q\",share=\"\"} " +
                                            std::to_string(FilesBytes(stuck)) + "\n"),
            std::string::npos);
  ASSERT_EQ(std::system(("chattr -i '" + pinned.string() + "'").c_str()), 0);
  ASSERT_TRUE(WaitFor([&] { return FilesRemovedAt(stuck) != 0; })) << Allot(stuck).dump();
  EXPECT_FALSE(fs::exists(fs::symlink_status(TreeOf(stuck))));
}

}  // namespace
}  // namespace allot::server
