// The controller over a store that fails on demand (issue 9, item 4): a refused or failed write
// never stays visible, the controller rolls back to what the store holds, and an executor report
// that could not be written is applied again, not lost.

#include "server/controller.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/decode.h"
#include "server/api_error.h"
#include "server/config_codec.h"
#include "server/job_codec.h"
#include "server/support/controller_fixture.h"
#include "server/support/forwarding_executor.h"
#include "server/wire_call.h"
#include "store/faulty_store.h"

namespace allot::server {
namespace {

// The real executor, whose launches of a job whose command names HOLD wait until Release():
// a launch that takes long, as a restore of gigabytes of checkpoints does.
class HeldLaunches final : public ForwardingExecutor {
 public:
  using ForwardingExecutor::ForwardingExecutor;
  Status Launch(const exec::LaunchSpec& spec) override {
    const bool hold = !spec.argv.empty() && spec.argv.back().find("HOLD") != std::string::npos;
    if (hold) {
      std::unique_lock<std::mutex> lock(mu_);
      ++held_;
      ++waiting_;
      cv_.wait(lock, [this] { return released_; });
      --waiting_;
    }
    return ForwardingExecutor::Launch(spec);
  }
  void Stop(model::JobId job, int attempt, Duration grace, model::StopKind kind) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (waiting_ > 0) ++stops_while_held_;  // the real executor would not know the attempt
    }
    ForwardingExecutor::Stop(job, attempt, grace, kind);
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  int held() {
    std::lock_guard<std::mutex> lock(mu_);
    return held_;
  }
  int stops_while_held() {
    std::lock_guard<std::mutex> lock(mu_);
    return stops_while_held_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
  int held_ = 0;
  int waiting_ = 0;
  int stops_while_held_ = 0;
};

class HeldLaunchTest : public ControllerTest {
 protected:
  void SetUp() override {
    ControllerTest::SetUp();
    wrap_executor_ = [this](std::unique_ptr<exec::Executor> real) {
      auto wrapper = std::make_unique<HeldLaunches>(std::move(real));
      held_ = wrapper.get();
      return std::unique_ptr<exec::Executor>(std::move(wrapper));
    };
    controller_.reset();
    Start();
    ASSERT_NE(held_, nullptr);
  }
  // Whatever failed, no launch stays held: the controller's shutdown waits for launches.
  void TearDown() override {
    if (held_ != nullptr) held_->Release();
    ControllerTest::TearDown();
  }
  // Queue "wide" on an environment of 9 ml.g5.xlarge (one share's 8 launches at once, and more),
  // under scheduling `policy` if one is named.
  void MakeWideQueue(const std::string& policy = "") {
    ASSERT_TRUE(Call("createserviceenvironment",
                     {{"serviceEnvironmentName", "wide-env"},
                      {"serviceEnvironmentType", "SAGEMAKER_TRAINING"},
                      {"capacityLimits", {{{"capacityUnit", "ml.g5.xlarge"}, {"maxCapacity", 9}}}}})
                    .ok());
    Json queue = {
        {"jobQueueName", "wide"},
        {"priority", 3},
        {"serviceEnvironmentOrder", {{{"order", 1}, {"serviceEnvironment", "wide-env"}}}}};
    if (!policy.empty()) queue["schedulingPolicyArn"] = policy;
    ASSERT_TRUE(Call("createjobqueue", queue).ok());
  }
  HeldLaunches* held_ = nullptr;
};

// A launch that takes long holds up no other: before, every launch, stop and timer of the
// server waited on the controller's loop for it. A stop that comes while it launches is kept
// and passed on once it has launched (the executor knows the attempt only then).
TEST_F(HeldLaunchTest, ALongLaunchHoldsUpNoOtherAndAStopMeanwhileIsKept) {
  const std::string slow = Submit("slow", "echo HOLD; sleep 600");
  ASSERT_FALSE(slow.empty());
  ASSERT_TRUE(WaitFor([&] { return held_->held() == 1; }));
  const std::string quick = Submit("quick", "true");
  ASSERT_FALSE(quick.empty());
  EXPECT_TRUE(WaitFor([&] { return StatusOf(quick) == "SUCCEEDED"; })) << StatusOf(quick);
  ASSERT_TRUE(Call("terminateservicejob", {{"jobId", slow}, {"reason", "test"}}).ok());
  // Effects run in commit order: once a job submitted after the termination has run, the stop's
  // effect has run too, while the launch is still held.
  const std::string marker = Submit("marker", "true");
  ASSERT_TRUE(WaitFor([&] { return StatusOf(marker) == "SUCCEEDED"; })) << StatusOf(marker);
  EXPECT_EQ(held_->stops_while_held(), 0);  // kept, not sent to an executor that knows nothing
  held_->Release();
  EXPECT_TRUE(WaitFor([&] { return StatusOf(slow) == "FAILED"; })) << StatusOf(slow);
}

// One share's launches past its cap (8 at once) wait behind its others; a stop of one that
// waits there ends it at once. Before, the terminate waited until the share's held launches
// (restores of huge checkpoints, say) let it begin, only to be skipped then.
TEST_F(HeldLaunchTest, AStopOfALaunchHeldBehindItsSharesOthersEndsItAtOnce) {
  MakeWideQueue();
  std::vector<std::string> held;
  for (int i = 0; i < 8; ++i)
    held.push_back(Submit("held-" + std::to_string(i), "echo HOLD", "wide"));
  ASSERT_TRUE(WaitFor([&] { return held_->held() == 8; }));
  const std::string behind = Submit("behind", "echo HOLD", "wide");
  ASSERT_FALSE(behind.empty());
  ASSERT_TRUE(WaitFor([&] { return StatusOf(behind) == "SCHEDULED"; })) << StatusOf(behind);
  ASSERT_TRUE(Call("terminateservicejob", {{"jobId", behind}, {"reason", "not needed"}}).ok());
  EXPECT_TRUE(WaitFor([&] { return StatusOf(behind) == "FAILED"; }, 10)) << StatusOf(behind);
  EXPECT_EQ(held_->held(), 8);  // it never reached the executor
  held_->Release();
  for (const std::string& id : held) {
    EXPECT_TRUE(WaitFor([&] { return StatusOf(id) == "SUCCEEDED"; })) << StatusOf(id);
  }
  EXPECT_EQ(held_->held(), 8);
}

// A preemption of a launch held behind its share's others, which never began: the job is
// requeued without using a preemption. Before, it counted as one (with the time it waited as
// lost work), so with preemptionRetriesBeforeTermination 0 the job failed without ever running.
TEST_F(HeldLaunchTest, APreemptedLaunchThatNeverBeganUsesNoPreemption) {
  ASSERT_TRUE(
      Call("createschedulingpolicy",
           {{"name", "shares"}, {"quotaSharePolicy", {{"idleResourceAssignmentStrategy", "FIFO"}}}})
          .ok());
  MakeWideQueue("shares");
  Result<Json> share =
      Call("createquotashare",
           {{"quotaShareName", "team"},
            {"jobQueue", "wide"},
            {"capacityLimits", {{{"capacityUnit", "ml.g5.xlarge"}, {"maxCapacity", 9}}}},
            {"resourceSharingConfiguration", {{"strategy", "RESERVE"}}},
            {"preemptionConfiguration", {{"inSharePreemption", "ENABLED"}}}});
  ASSERT_TRUE(share.ok()) << share.status().ToString();
  auto submit = [&](const std::string& name, int priority, const std::string& script) {
    Result<Json> r = Call("submitservicejob",
                          {{"jobName", name},
                           {"jobQueue", "wide"},
                           {"quotaShareName", "team"},
                           {"schedulingPriority", priority},
                           {"preemptionConfiguration", {{"preemptionRetriesBeforeTermination", 0}}},
                           {"serviceJobType", "SAGEMAKER_TRAINING"},
                           {"serviceRequestPayload", Payload(script)}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r.value()["jobId"].get<std::string>() : "";
  };
  std::vector<std::string> held;
  for (int i = 0; i < 8; ++i) held.push_back(submit("held-" + std::to_string(i), 3, "echo HOLD"));
  ASSERT_TRUE(WaitFor([&] { return held_->held() == 8; }));
  const std::string behind = submit("behind", 0, "true");  // the lowest priority: the victim
  ASSERT_FALSE(behind.empty());
  ASSERT_TRUE(WaitFor([&] { return StatusOf(behind) == "SCHEDULED"; })) << StatusOf(behind);
  const std::string urgent = submit("urgent", 5, "true");
  ASSERT_FALSE(urgent.empty());
  // The urgent job's own launch waits behind the share's held ones, as the victim's did.
  ASSERT_TRUE(WaitFor([&] { return StatusOf(behind) != "SCHEDULED"; }, 10)) << StatusOf(behind);
  Result<Json> d = Call("describeservicejob", {{"jobId", behind}});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.value()["status"], "RUNNABLE") << d.value().dump();
  EXPECT_EQ(d.value()["allot"]["preemptions"], 0) << d.value().dump();
  EXPECT_EQ(StatusOf(urgent), "SCHEDULED");
  held_->Release();
  // Both run once the capacity is free, the victim as any requeued job.
  EXPECT_TRUE(WaitFor([&] { return StatusOf(urgent) == "SUCCEEDED"; })) << StatusOf(urgent);
  EXPECT_TRUE(WaitFor([&] { return StatusOf(behind) == "SUCCEEDED"; })) << StatusOf(behind);
  for (const std::string& id : held) {
    EXPECT_TRUE(WaitFor([&] { return StatusOf(id) == "SUCCEEDED"; })) << StatusOf(id);
  }
}

// A store failure while a launch is held: the rollback waits for the launch, then finds its
// processes. Without the wait it found none, requeued the job, and launched it a second time
// beside the first, which nothing tracked any more.
TEST_F(HeldLaunchTest, ARollbackWaitsForTheLaunchInFlight) {
  const std::string slow = Submit("slow", "echo HOLD; sleep 600");
  ASSERT_FALSE(slow.empty());
  ASSERT_TRUE(WaitFor([&] { return held_->held() == 1; }));
  store_->Fail(Internal("io error"));
  EXPECT_FALSE(Call("submitservicejob", {{"jobName", "lost"},
                                         {"jobQueue", "q"},
                                         {"serviceJobType", "SAGEMAKER_TRAINING"},
                                         {"serviceRequestPayload", Payload("true")}})
                   .ok());
  store_->Heal();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the rollback's first try
  held_->Release();
  ASSERT_TRUE(WaitFor([this] { return !controller_->rolling_back(); }));
  ASSERT_TRUE(WaitFor([&] { return StatusOf(slow) == "RUNNING"; })) << StatusOf(slow);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  EXPECT_EQ(held_->held(), 1);  // launched once: no second attempt
  Result<Json> d = Call("describeservicejob", {{"jobId", slow}});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.value()["attempts"].size(), 1U) << d.value().dump();
  ASSERT_TRUE(Call("terminateservicejob", {{"jobId", slow}, {"reason", "done"}}).ok());
  EXPECT_TRUE(WaitFor([&] { return StatusOf(slow) == "FAILED"; })) << StatusOf(slow);
}

TEST_F(ControllerTest, AFailedSubmissionIsAnsweredAsAFaultAndNeverListed) {
  store_->Fail(ResourceExhausted("disk full"));
  Result<Json> r = Call("submitservicejob", {{"jobName", "lost"},
                                             {"jobQueue", "q"},
                                             {"serviceJobType", "SAGEMAKER_TRAINING"},
                                             {"serviceRequestPayload", Payload("sleep 30")}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  // While the store refuses writes every call is refused, reads included: nothing unstored shows.
  EXPECT_FALSE(Call("listservicejobs", {{"jobQueue", "q"}, {"jobStatus", "RUNNABLE"}}).ok());
  store_->Heal();
  ASSERT_TRUE(WaitFor([this] { return !controller_->rolling_back(); }));
  for (const char* status : {"SUBMITTED", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING"}) {
    EXPECT_TRUE(ListedNames(status).empty()) << status;
  }
  // The capacity the lost job would have taken is free: two new jobs both run.
  const std::string a = Submit("a", "sleep 30");
  const std::string b = Submit("b", "sleep 30");
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  EXPECT_TRUE(WaitFor([&] { return StatusOf(a) == "RUNNING" && StatusOf(b) == "RUNNING"; }));
  EXPECT_TRUE(Call("terminateservicejob", {{"jobId", a}, {"reason", "done"}}).ok());
  EXPECT_TRUE(Call("terminateservicejob", {{"jobId", b}, {"reason", "done"}}).ok());
  EXPECT_TRUE(WaitFor([&] { return StatusOf(a) == "FAILED" && StatusOf(b) == "FAILED"; }));
}

TEST_F(ControllerTest, AnExitReportWhoseWriteFailedIsAppliedAfterTheRollback) {
  const fs::path go = dir_ / "go";
  const std::string id =
      Submit("runner", "while [ ! -e " + go.string() + " ]; do sleep 0.05; done");
  ASSERT_TRUE(WaitFor([&] { return StatusOf(id) == "RUNNING"; }));
  store_->Fail(Internal("io error"));
  { std::ofstream touch(go); }  // the job exits 0 while nothing can be written
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(StatusOf(id), "unavailable");
  store_->Heal();
  ASSERT_TRUE(WaitFor([&] { return StatusOf(id) == "SUCCEEDED"; })) << StatusOf(id);
  // And it is stored: a restart finds it SUCCEEDED.
  controller_.reset();
  Start();
  EXPECT_EQ(StatusOf(id), "SUCCEEDED");
}

TEST_F(ControllerTest, ARestartWritesNoRecordThatDidNotChange) {
  std::vector<std::string> ids;
  for (int i = 0; i < 12; ++i) ids.push_back(Submit("j" + std::to_string(i), "sleep 30"));
  ASSERT_TRUE(WaitFor([&] { return ListedNames("RUNNING").size() == 2; }));
  Result<Json> before = Call("describeservicejob", {{"jobId", ids.back()}});
  ASSERT_TRUE(before.ok());
  controller_.reset();  // the two running attempts are left to the next start
  Start();
  EXPECT_EQ(store_->written_ops(), 0U) << "a start rewrote records that did not change";
  EXPECT_EQ(ListedNames("RUNNING").size(), 2U);  // adopted, not restarted
  EXPECT_EQ(ListedNames("RUNNABLE").size(), 10U);
  Result<Json> after = Call("describeservicejob", {{"jobId", ids.back()}});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after.value()["allot"]["runnableSince"], before.value()["allot"]["runnableSince"]);
  for (const std::string& id : ids) {
    EXPECT_TRUE(Call("terminateservicejob", {{"jobId", id}, {"reason", "done"}}).ok());
  }
  EXPECT_TRUE(WaitFor([&] { return ListedNames("RUNNING").empty(); }));
}

// A start with many stored jobs decodes them on several threads: every record comes back, and a
// corrupt one anywhere stops the start with an error naming it.
TEST_F(ControllerTest, AStartWithManyStoredJobsReadsEveryOneAndRefusesACorruptOne) {
  controller_.reset();
  constexpr int kJobs = 20'000;  // above the threshold for decoding on several threads
  auto write_jobs = [this](const std::string& corrupt_key) {
    auto st = store::OpenSqliteStore({.path = (dir_ / "allot.db").string()});
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    store::Batch batch;
    for (int i = 0; i < kJobs; ++i) {
      JobRecord j;
      j.seq = static_cast<model::JobId>(i + 1);
      j.id = "stored-" + std::to_string(i);
      j.name = "bulk-" + std::to_string(i);
      j.queue = "q";
      j.status = model::JobStatus::kFailed;
      j.demand = {{"ml.g5.xlarge", 1}};
      j.created_at = 1000 + i;
      j.stopped_at = 2000 + i;
      batch.Put(store::Kind::kJob, j.id, j.id == corrupt_key ? "{not json" : EncodeJob(j));
    }
    ASSERT_TRUE(st.value()->Commit(std::move(batch)).ok());
    st.value()->Close();
  };
  write_jobs("");
  Start();
  Result<Json> page = Call("listservicejobs", {{"jobQueue", "q"}, {"jobStatus", "FAILED"}});
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page.value()["jobSummaryList"].size(), 100U);
  EXPECT_EQ(page.value()["jobSummaryList"][0]["jobName"], "bulk-19999");
  for (int i : {0, 7'777, 15'000, kJobs - 1}) {
    Result<Json> d = Call("describeservicejob", {{"jobId", "stored-" + std::to_string(i)}});
    ASSERT_TRUE(d.ok()) << i;
    EXPECT_EQ(d.value()["jobName"], "bulk-" + std::to_string(i));
    EXPECT_EQ(d.value()["createdAt"], 1000 + i);
  }
  // The next job submitted takes a sequence after every stored one.
  EXPECT_FALSE(Submit("after", "exit 0").empty());
  controller_.reset();
  write_jobs("stored-15000");
  Options options;
  options.data_dir = dir_.string();
  options.sandbox = false;
  options.supervisor_exe = SupervisorExe();
  auto refused = Controller::Start(options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInternal);
  EXPECT_NE(refused.status().message().find("stored-15000"), std::string::npos)
      << refused.status().message();
}

// A data directory the server makes is its own alone; one that exists keeps its mode.
TEST_F(ControllerTest, ADataDirectoryTheServerMakesIsClosedToOthers) {
  for (const bool exists : {false, true}) {
    SCOPED_TRACE(exists);
    const fs::path data = dir_ / (exists ? "given" : "made") / "data";
    if (exists) {
      fs::create_directories(data);
      fs::permissions(data, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
    }
    Options options;
    options.data_dir = data.string();
    options.sandbox = false;
    options.supervisor_exe = SupervisorExe();
    auto c = Controller::Start(options);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(fs::status(data).permissions() & fs::perms::all,
              exists ? fs::perms(0755) : fs::perms::owner_all);
  }
}

// A job whose queue was deleted is still described with its queue's ARN after a restart, and is
// neither listed nor scheduled.
TEST_F(ControllerTest, AJobOfADeletedQueueKeepsItsQueueArnAfterARestart) {
  controller_.reset();
  {
    auto st = store::OpenSqliteStore({.path = (dir_ / "allot.db").string()});
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    JobRecord j;
    j.seq = 1;
    j.id = "orphan";
    j.name = "orphan";
    j.queue = "gone";
    j.status = model::JobStatus::kRunnable;
    j.demand = {{"ml.g5.xlarge", 1}};
    j.created_at = 1000;
    store::Batch batch;
    batch.Put(store::Kind::kJob, j.id, EncodeJob(j));
    ASSERT_TRUE(st.value()->Commit(std::move(batch)).ok());
    st.value()->Close();
  }
  Start();
  Result<Json> d = Call("describeservicejob", {{"jobId", "orphan"}});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d.value()["jobQueue"], "arn:aws:batch:local:000000000000:job-queue/gone");
  EXPECT_TRUE(ListedNames("RUNNABLE").empty());
  EXPECT_EQ(store_->written_ops(), 0U);  // nothing of it restored, so nothing written back
}

// Job ids are time ordered (their first 48 bits the submission's millisecond), so the store's
// keys for a job and its payload append; each payload still comes back, byte for byte and with
// its own job, after its job's record was rewritten by state changes and after a restart.
TEST_F(ControllerTest, EveryPayloadComesBackWithItsJobAfterARestart) {
  std::vector<std::pair<std::string, std::string>> jobs;  // id, payload
  auto submit = [&](const std::string& name, const std::string& script) {
    const std::string id = Submit(name, script);
    ASSERT_FALSE(id.empty()) << name;
    jobs.emplace_back(id, Payload(script));
  };
  submit("done", "exit 0");  // runs to its end: its record is rewritten at each state
  ASSERT_TRUE(WaitFor([&] { return StatusOf(jobs[0].first) == "SUCCEEDED"; }));
  submit("hold-1", "sleep 30");
  submit("hold-2", "sleep 30");
  for (int i = 0; i < 40; ++i) submit("wait-" + std::to_string(i), "echo " + std::to_string(i));
  for (std::size_t i = 1; i < jobs.size(); ++i) {
    const std::string& id = jobs[i].first;
    ASSERT_EQ(id.size(), 36U);
    EXPECT_EQ(id[14], '7') << id;  // the version nibble
    EXPECT_NE(std::string_view("89ab").find(id[19]), std::string_view::npos) << id;  // variant
    // The 48-bit time prefix ("xxxxxxxx-xxxx") never goes back.
    EXPECT_LE(jobs[i - 1].first.substr(0, 13), id.substr(0, 13));
  }
  controller_.reset();
  Start();
  for (const auto& [id, payload] : jobs) {
    Result<Json> d = Call("describeservicejob", {{"jobId", id}});
    ASSERT_TRUE(d.ok()) << id << ": " << d.status().ToString();
    EXPECT_EQ(d.value()["serviceRequestPayload"], payload) << id;
  }
  for (const auto& [id, payload] : jobs) {
    EXPECT_TRUE(Call("terminateservicejob", {{"jobId", id}, {"reason", "done"}}).ok());
  }
  EXPECT_TRUE(WaitFor([&] { return ListedNames("RUNNING").empty(); }));
}

// A store written before the time-ordered ids (random version-4 ids for the job and payload
// keys, as every earlier build wrote them) opens as before: each old job is described with its
// payload, a waiting one launches from its stored payload, and old and new jobs live side by side
// across another restart.
TEST_F(ControllerTest, AStoreWithRandomJobIdsOpensAndEveryOldPayloadIsRead) {
  controller_.reset();
  const std::vector<std::string> old_ids = {"f47ac10b-58cc-4372-a567-0e02b2c3d479",
                                            "0b9e5f62-1c2d-4e8a-9f3b-7a6d5c4b3a21",
                                            "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"};
  {
    auto st = store::OpenSqliteStore({.path = (dir_ / "allot.db").string()});
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    store::Batch batch;
    for (std::size_t i = 0; i < old_ids.size(); ++i) {
      JobRecord j;
      j.seq = static_cast<model::JobId>(i + 1);
      j.id = old_ids[i];
      j.name = "old-" + std::to_string(i);
      j.queue = "q";
      // The first waits and must launch from its stored payload; the others ended long ago.
      j.status = i == 0 ? model::JobStatus::kRunnable : model::JobStatus::kFailed;
      j.demand = {{"ml.g5.xlarge", 1}};
      j.created_at = 1000 + static_cast<Timestamp>(i);
      j.runnable_since = j.created_at;
      if (i > 0) j.stopped_at = 2000;
      batch.Put(store::Kind::kJob, j.id, EncodeJob(j));
      batch.Put(store::Kind::kJobPayload, j.id, Payload("exit " + std::to_string(i)));
    }
    ASSERT_TRUE(st.value()->Commit(std::move(batch)).ok());
    st.value()->Close();
  }
  Start();
  for (std::size_t i = 0; i < old_ids.size(); ++i) {
    Result<Json> d = Call("describeservicejob", {{"jobId", old_ids[i]}});
    ASSERT_TRUE(d.ok()) << old_ids[i] << ": " << d.status().ToString();
    EXPECT_EQ(d.value()["jobName"], "old-" + std::to_string(i));
    EXPECT_EQ(d.value()["serviceRequestPayload"], Payload("exit " + std::to_string(i)));
  }
  EXPECT_TRUE(WaitFor([&] { return StatusOf(old_ids[0]) == "SUCCEEDED"; })) << StatusOf(old_ids[0]);
  const std::string fresh = Submit("new", "exit 7");
  ASSERT_FALSE(fresh.empty());
  EXPECT_TRUE(WaitFor([&] { return StatusOf(fresh) == "FAILED"; })) << StatusOf(fresh);
  controller_.reset();
  Start();
  for (std::size_t i = 0; i < old_ids.size(); ++i) {
    Result<Json> d = Call("describeservicejob", {{"jobId", old_ids[i]}});
    ASSERT_TRUE(d.ok()) << old_ids[i];
    EXPECT_EQ(d.value()["serviceRequestPayload"], Payload("exit " + std::to_string(i)));
  }
  Result<Json> d = Call("describeservicejob", {{"jobId", fresh}});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d.value()["serviceRequestPayload"], Payload("exit 7"));
  EXPECT_EQ(d.value()["status"], "FAILED");
}

TEST_F(ControllerTest, ARefusedEnvironmentLeavesNothingBehind) {
  const Json bad = {{"serviceEnvironmentName", "env2"},
                    {"serviceEnvironmentType", "SAGEMAKER_TRAINING"},
                    {"capacityLimits", {{{"capacityUnit", ""}, {"maxCapacity", 1}}}}};
  EXPECT_EQ(Call("createserviceenvironment", bad).status().code(),
            StatusCode::kInvalidArgument);  // the HTTP layer's 400
  Result<Json> listed = Call("describeserviceenvironments", Json::object());
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed.value()["serviceEnvironments"].size(), 1U);
  EXPECT_EQ(listed.value()["serviceEnvironments"][0]["serviceEnvironmentName"], "env");
  // The name is free: the same environment with a valid unit is created.
  Json good = bad;
  good["capacityLimits"][0]["capacityUnit"] = "ml.g5.xlarge";
  EXPECT_TRUE(Call("createserviceenvironment", good).ok());
}

// UpdateJobQueue's serviceEnvironmentOrder may change the order only: a queue's jobs hold
// capacity of its environment, so another environment is refused, and the queue is unchanged.
TEST_F(ControllerTest, UpdateJobQueueKeepsItsServiceEnvironment) {
  ASSERT_TRUE(Call("createserviceenvironment",
                   {{"serviceEnvironmentName", "env2"},
                    {"serviceEnvironmentType", "SAGEMAKER_TRAINING"},
                    {"capacityLimits", {{{"capacityUnit", "ml.g5.xlarge"}, {"maxCapacity", 1}}}}})
                  .ok());
  Result<Json> moved =
      Call("updatejobqueue",
           {{"jobQueue", "q"},
            {"serviceEnvironmentOrder", {{{"order", 1}, {"serviceEnvironment", "env2"}}}}});
  ASSERT_FALSE(moved.ok());
  EXPECT_NE(moved.status().message().find("serviceEnvironmentOrder"), std::string::npos)
      << moved.status().message();
  EXPECT_TRUE(Call("updatejobqueue",
                   {{"jobQueue", "q"},
                    {"serviceEnvironmentOrder", {{{"order", 7}, {"serviceEnvironment", "env"}}}}})
                  .ok());
  Result<Json> queues = Call("describejobqueues", Json::object());
  ASSERT_TRUE(queues.ok());
  EXPECT_EQ(queues.value()["jobQueues"][0]["serviceEnvironmentOrder"],
            Json::parse(R"([{"order": 7, "serviceEnvironment": "env"}])"));
}

// DescribeServiceEnvironments and DescribeJobQueues answer the records named, in the order named
// and without the names that name none; without names, a page of them all at a time.
TEST_F(ControllerTest, DescribeNamedInTheOrderNamedOrElseAPage) {
  for (const std::string n : {"2", "3"}) {
    ASSERT_TRUE(Call("createserviceenvironment",
                     {{"serviceEnvironmentName", "env" + n},
                      {"serviceEnvironmentType", "SAGEMAKER_TRAINING"},
                      {"capacityLimits", {{{"capacityUnit", "ml.g5.xlarge"}, {"maxCapacity", 1}}}}})
                    .ok());
    ASSERT_TRUE(Call("createjobqueue", {{"jobQueueName", "q" + n},
                                        {"priority", 1},
                                        {"serviceEnvironmentOrder",
                                         {{{"order", 1}, {"serviceEnvironment", "env" + n}}}}})
                    .ok());
  }
  const struct {
    const char* action;
    const char* list;
    const char* name;
    std::vector<std::string> all;
  } kDescribes[] = {{"describeserviceenvironments",
                     "serviceEnvironments",
                     "serviceEnvironmentName",
                     {"env", "env2", "env3"}},
                    {"describejobqueues", "jobQueues", "jobQueueName", {"q", "q2", "q3"}}};
  for (const auto& d : kDescribes) {
    SCOPED_TRACE(d.action);
    auto names = [&](const Json& request, Json* token = nullptr) {
      Result<Json> r = Call(d.action, request);
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      std::vector<std::string> out;
      if (!r.ok()) return out;
      for (const Json& item : r.value()[d.list]) out.push_back(item[d.name]);
      if (token != nullptr) *token = r.value().value("nextToken", Json());
      return out;
    };
    const std::string arn = std::string("arn:aws:batch:local:000000000000:") +
                            (d.all[0] == "env" ? "service-environment/env" : "job-queue/q");
    Json token;
    EXPECT_EQ(names({{d.list, {d.all[2], "nope", arn}}, {"maxResults", 1}}, &token),
              (std::vector<std::string>{d.all[2], d.all[0]}));
    EXPECT_TRUE(token.is_null());
    EXPECT_EQ(names({{"maxResults", 2}}, &token), (std::vector<std::string>{d.all[0], d.all[1]}));
    ASSERT_TRUE(token.is_string());
    EXPECT_EQ(names({{"maxResults", 2}, {"nextToken", token}}, &token),
              (std::vector<std::string>{d.all[2]}));
    EXPECT_TRUE(token.is_null());
  }
}

// A call the engine accepted one event of and refused the next would leave the engine changed
// without the record: no sequence of calls reaches that, but a stored configuration can (a plain
// queue whose implicit FIFO share was also stored as a quota share, deleted while a job in it
// still stops, so that the next put of the implicit share is refused). The call is then a fault:
// it answers 500 and the controller rolls back to what the store holds, as after a failed write,
// so that the engine and the records agree again.
TEST_F(ControllerTest, ACallRefusedAfterTheEngineChangedRollsBackToTheStore) {
  controller_.reset();
  {
    auto st = store::OpenSqliteStore({.path = (dir_ / "allot.db").string()});
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    const std::string queue_arn = "arn:aws:batch:local:000000000000:job-queue/q";
    const QuotaShareRecord implicit{.name = "_fifo",
                                    .arn = queue_arn + "/quota-share/_fifo",
                                    .queue = "q",
                                    .job_queue_arn = queue_arn,
                                    .capacity_limits = {{"ml.g5.xlarge", 2}}};
    store::Batch b;
    b.Put(store::Kind::kQuotaShare, implicit.Key(), Encode(implicit));
    ASSERT_TRUE(st.value()->Commit(std::move(b)).ok());
  }
  Start();
  const std::string stopping = Submit("stopping", "trap '' TERM; sleep 30");
  ASSERT_TRUE(WaitFor([&] { return StatusOf(stopping) == "RUNNING"; }));
  const std::string share = "arn:aws:batch:local:000000000000:job-queue/q/quota-share/_fifo";
  ASSERT_TRUE(Call("updatequotashare", {{"quotaShareArn", share}, {"state", "DISABLED"}}).ok());
  ASSERT_TRUE(Call("deletequotashare", {{"quotaShareArn", share}}).ok());

  // The engine takes the queue's new state, then refuses the implicit share: being deleted.
  Result<Json> update = Call("updatejobqueue", {{"jobQueue", "q"}, {"state", "DISABLED"}});
  ASSERT_FALSE(update.ok());
  EXPECT_EQ(update.status().code(), StatusCode::kInternal) << update.status().ToString();
  EXPECT_EQ(update.status().message(), kInternalError);
  ASSERT_TRUE(WaitFor([this] { return !controller_->rolling_back(); }));
  // Its audit record was written, as a fault's.
  auto audit =
      store_->Range(store::Kind::kAudit, {.from = "", .to = "", .limit = 1, .descending = true});
  ASSERT_TRUE(audit.ok() && audit->size() == 1);
  Result<AuditRecord> record = DecodeAudit(audit->front().key, audit->front().value);
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  EXPECT_EQ(record->action, "batch:UpdateJobQueue");
  EXPECT_EQ(record->outcome, "ServerException");

  // The record says ENABLED, and so does the engine: a new job in the queue runs.
  Result<Json> queues = Call("describejobqueues", {{"jobQueues", {"q"}}});
  ASSERT_TRUE(queues.ok()) << queues.status().ToString();
  EXPECT_EQ(queues.value()["jobQueues"][0]["state"], "ENABLED");
  const std::string after = Submit("after", "exit 0");
  ASSERT_FALSE(after.empty());
  EXPECT_TRUE(WaitFor([&] { return StatusOf(after) == "SUCCEEDED"; })) << StatusOf(after);
  EXPECT_TRUE(WaitFor([&] { return StatusOf(stopping) == "FAILED"; })) << StatusOf(stopping);
}

// A deleted share counts toward the queue's 20 until its jobs have stopped (the engine keeps it
// until then): a 21st share meanwhile is the caller's to wait for, a ClientException that says
// so, not a fault; once the jobs have stopped it is taken.
TEST_F(ControllerTest, ADeletedShareCountsTowardTheLimitUntilItsJobsHaveStopped) {
  ASSERT_TRUE(
      Call("createschedulingpolicy",
           {{"name", "qp"}, {"quotaSharePolicy", {{"idleResourceAssignmentStrategy", "FIFO"}}}})
          .ok());
  MakePolicyQueue("pq", "qp");
  auto share = [](int i) {
    Json s = TeamShareInQ();
    s["jobQueue"] = "pq";
    s["quotaShareName"] = "s" + std::to_string(i);
    return s;
  };
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(Call("createquotashare", share(i)).ok()) << i;
  Result<Json> submitted =
      Call("submitservicejob", {{"jobName", "stopping"},
                                {"jobQueue", "pq"},
                                {"quotaShareName", "s0"},
                                {"serviceJobType", "SAGEMAKER_TRAINING"},
                                {"serviceRequestPayload", Payload("trap '' TERM; sleep 30")}});
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  const std::string job = submitted.value()["jobId"];
  ASSERT_TRUE(WaitFor([&] { return StatusOf(job) == "RUNNING"; })) << StatusOf(job);
  const std::string s0 = "arn:aws:batch:local:000000000000:job-queue/pq/quota-share/s0";
  ASSERT_TRUE(Call("updatequotashare", {{"quotaShareArn", s0}, {"state", "DISABLED"}}).ok());
  ASSERT_TRUE(Call("deletequotashare", {{"quotaShareArn", s0}}).ok());

  Result<Json> early = Call("createquotashare", share(20));  // the job stops for 2 s (its grace)
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.status().code(), StatusCode::kInvalidArgument) << early.status().ToString();
  EXPECT_EQ(ApiErrorFor(early.status()).type, "ClientException");
  EXPECT_EQ(early.status().message(),
            "job queue pq already has the maximum of 20 quota shares, counting those being "
            "deleted until their jobs have stopped");
  ASSERT_TRUE(WaitFor([&] { return StatusOf(job) == "FAILED"; })) << StatusOf(job);
  Result<Json> later = Call("createquotashare", share(20));
  EXPECT_TRUE(later.ok()) << later.status().ToString();
}

// Whether a queue takes quota shares is read from its policy; the engine gave a plain queue its
// implicit FIFO share when it was put. A policy a queue uses therefore keeps whether it takes
// quota shares: UpdateSchedulingPolicy may not add a quotaSharePolicy (the queue would count as
// quota-managed beside its implicit share, which a restart drops), nor remove one. A policy no
// queue uses may gain one.
TEST_F(ControllerTest, APolicyInUseKeepsWhetherItTakesQuotaShares) {
  const Json fifo = {{"idleResourceAssignmentStrategy", "FIFO"}};
  ASSERT_TRUE(Call("createschedulingpolicy", {{"name", "plain"}}).ok());
  MakePolicyQueue("pq", "plain");
  Result<Json> gain =
      Call("updateschedulingpolicy", {{"arn", "plain"}, {"quotaSharePolicy", fifo}});
  ASSERT_FALSE(gain.ok());
  EXPECT_EQ(gain.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(gain.status().message().find("quotaSharePolicy"), std::string::npos)
      << gain.status().message();
  EXPECT_NE(gain.status().message().find("job queue pq"), std::string::npos)
      << gain.status().message();
  Result<Json> policies = Call("describeschedulingpolicies", {{"arns", {"plain"}}});
  ASSERT_TRUE(policies.ok()) << policies.status().ToString();
  EXPECT_FALSE(policies.value()["schedulingPolicies"][0].contains("quotaSharePolicy"));
  // The queue is still plain: it takes jobs without a share and no quota share.
  Json share_in_pq = TeamShareInQ();
  share_in_pq["jobQueue"] = "pq";
  EXPECT_FALSE(Call("createquotashare", share_in_pq).ok());
  const std::string job = Submit("plain", "exit 0", "pq");
  ASSERT_FALSE(job.empty());
  EXPECT_TRUE(WaitFor([&] { return StatusOf(job) == "SUCCEEDED"; })) << StatusOf(job);

  // Unused, it may gain one; then, as any policy that has one, never lose it.
  ASSERT_TRUE(Call("createschedulingpolicy", {{"name", "spare"}}).ok());
  ASSERT_TRUE(Call("updateschedulingpolicy", {{"arn", "spare"}, {"quotaSharePolicy", fifo}}).ok());
  Result<Json> lose = Call("updateschedulingpolicy", {{"arn", "spare"}});
  ASSERT_FALSE(lose.ok());
  EXPECT_EQ(lose.status().message(),
            "quotaSharePolicy cannot be removed from scheduling policy spare");
}

// AWS: a job queue created without a scheduling policy is a FIFO queue and "can't have a
// scheduling policy added"; one created with a policy may have it replaced.
TEST_F(ControllerTest, AQueueCreatedWithoutAPolicyNeverGainsOne) {
  ASSERT_TRUE(Call("createschedulingpolicy", {{"name", "p1"}}).ok());
  ASSERT_TRUE(Call("createschedulingpolicy", {{"name", "p2"}}).ok());
  Result<Json> add = Call("updatejobqueue", {{"jobQueue", "q"}, {"schedulingPolicyArn", "p1"}});
  ASSERT_FALSE(add.ok());
  EXPECT_EQ(add.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(add.status().message(),
            "schedulingPolicyArn cannot be added to job queue q: it was created without a "
            "scheduling policy (create another job queue with one)");
  Result<Json> q = Call("describejobqueues", {{"jobQueues", {"q"}}});
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_FALSE(q.value()["jobQueues"][0].contains("schedulingPolicyArn"));
  // Replacing a queue's policy stays allowed.
  MakePolicyQueue("pq", "p1");
  ASSERT_TRUE(Call("updatejobqueue", {{"jobQueue", "pq"}, {"schedulingPolicyArn", "p2"}}).ok());
  Result<Json> pq = Call("describejobqueues", {{"jobQueues", {"pq"}}});
  ASSERT_TRUE(pq.ok()) << pq.status().ToString();
  EXPECT_EQ(pq.value()["jobQueues"][0]["schedulingPolicyArn"],
            "arn:aws:batch:local:000000000000:scheduling-policy/p2");
}

// A queue's policy is found by one rule everywhere: by the name its ARN ends with. A queue whose
// stored policy ARN was written under another region still uses the policy of that name (it is
// quota-managed by it), so the policy cannot be deleted from under it.
TEST_F(ControllerTest, APolicyIsInUseByTheQueueThatIsQuotaManagedByIt) {
  ASSERT_TRUE(
      Call("createschedulingpolicy",
           {{"name", "qm"}, {"quotaSharePolicy", {{"idleResourceAssignmentStrategy", "FIFO"}}}})
          .ok());
  controller_.reset();
  {
    auto st = store::OpenSqliteStore({.path = (dir_ / "allot.db").string()});
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    Result<std::optional<std::string>> stored = st.value()->Get(store::Kind::kJobQueue, "q");
    ASSERT_TRUE(stored.ok() && stored.value().has_value());
    Result<JobQueueRecord> decoded = DecodeQueue("q", **stored);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    JobQueueRecord queue = decoded.value();
    queue.scheduling_policy_arn = "arn:aws:batch:elsewhere:000000000000:scheduling-policy/qm";
    store::Batch b;
    b.Put(store::Kind::kJobQueue, "q", Encode(queue));
    ASSERT_TRUE(st.value()->Commit(std::move(b)).ok());
    st.value()->Close();
  }
  Start();
  // The queue is quota-managed by qm: it takes a quota share.
  ASSERT_TRUE(Call("createquotashare", TeamShareInQ()).ok());
  Result<Json> removed = Call("deleteschedulingpolicy", {{"arn", "qm"}});
  ASSERT_FALSE(removed.ok());
  EXPECT_EQ(removed.status().message(), "scheduling policy qm is used by job queue q");
}
}  // namespace
}  // namespace allot::server

namespace allot::server {
namespace {

// The error convention: every entry point answers a Status, never an exception, and each code is
// one AWS error at the wire.
TEST_F(ControllerTest, RefusalsAreInvalidArgumentStatusesThatMapToClientException) {
  Result<WireReply> missing = CallAction(*controller_, "submitservicejob", {{"jobName", "x"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("jobQueue"), std::string::npos)
      << missing.status().message();
  EXPECT_EQ(CallAction(*controller_, "nosuchaction", Json::object()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(controller_->Logs({.job_id = "no-such-job"}).status().code(),
            StatusCode::kInvalidArgument);
  Result<api::TagsRequest> list_tags =
      api::DecodeTags("GET", "arn:aws:batch:local:000000000000:job-queue/nope", Json::object(), {});
  ASSERT_TRUE(list_tags.ok()) << list_tags.status().ToString();
  EXPECT_EQ(controller_->Tags(list_tags.value()).status().code(), StatusCode::kInvalidArgument);
  const ApiError client = ApiErrorFor(missing.status());
  EXPECT_EQ(client.http_status, 400);
  EXPECT_EQ(client.type, "ClientException");
  EXPECT_EQ(client.message, missing.status().message());
  for (const Status& fault :
       {Internal("x"), Status(StatusCode::kUnavailable, "x"), ResourceExhausted("disk full")}) {
    EXPECT_EQ(ApiErrorFor(fault).http_status, 500) << fault.ToString();
    EXPECT_EQ(ApiErrorFor(fault).type, "ServerException");
  }
  for (const Status& mistake : {NotFound("x"), AlreadyExists("x"), FailedPrecondition("x")}) {
    EXPECT_EQ(ApiErrorFor(mistake).http_status, 400) << mistake.ToString();
  }
}

class ListPagingTest : public ControllerTest {
 protected:
  void SetUp() override {
    list_scan_budget_ = 3;
    ControllerTest::SetUp();
  }

  // Every page of a JOB_NAME listing, following nextToken.
  std::vector<Json> Pages(const std::string& name, int max_results) {
    std::vector<Json> pages;
    Json request = {{"jobQueue", "q"},
                    {"maxResults", max_results},
                    {"filters", {{{"name", "JOB_NAME"}, {"values", {name}}}}}};
    for (int guard = 0; guard < 50; ++guard) {
      Result<Json> r = Call("listservicejobs", request);
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      if (!r.ok()) break;
      pages.push_back(r.value());
      if (!r.value().contains("nextToken")) break;
      request["nextToken"] = r.value()["nextToken"];
    }
    return pages;
  }
};

// A filter that matches few of many jobs examines at most the budget per page: a page may hold
// fewer than maxResults and still carry a nextToken, and following the tokens returns every match
// once, newest first.
TEST_F(ListPagingTest, PagesStayWithinTheScanBudgetAndTokensReturnEveryMatchOnce) {
  std::vector<std::string> a_jobs;
  for (int i = 0; i < 6; ++i) {
    a_jobs.push_back(Submit("A-" + std::to_string(i), "exit 0"));
    Submit("b-" + std::to_string(i), "exit 0");
  }
  const std::vector<Json> pages = Pages("a-*", 100);
  std::vector<std::string> listed;
  bool short_page_with_token = false;
  for (const Json& page : pages) {
    for (const Json& j : page["jobSummaryList"]) listed.push_back(j["jobId"]);
    short_page_with_token = short_page_with_token ||
                            (page.contains("nextToken") && page["jobSummaryList"].size() < 100);
  }
  EXPECT_TRUE(short_page_with_token);
  EXPECT_EQ(listed, std::vector<std::string>(a_jobs.rbegin(), a_jobs.rend()));
  // Few enough names are read from the name index at once, ignoring case.
  const std::vector<Json> exact = Pages("a-3", 100);
  ASSERT_EQ(exact.size(), 1u);
  ASSERT_EQ(exact[0]["jobSummaryList"].size(), 1u);
  EXPECT_EQ(exact[0]["jobSummaryList"][0]["jobName"], "A-3");
  // maxResults still bounds a page; the token resumes after its last job.
  const std::vector<Json> small = Pages("B-*", 2);
  std::size_t total = 0;
  for (const Json& page : small) {
    EXPECT_LE(page["jobSummaryList"].size(), 2u);
    total += page["jobSummaryList"].size();
  }
  EXPECT_EQ(total, 6u);
}

}  // namespace
}  // namespace allot::server
