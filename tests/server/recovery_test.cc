// A restart keeps every stop it acknowledged (issue 9: an acknowledged change is never lost).
// A job under a stop whose attempt left nothing to adopt ends the way the stop says, rather
// than being requeued as lost; an adopted attempt under a stop is given the stop again, since
// the first may never have reached it.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/support/controller_fixture.h"
#include "server/support/forwarding_executor.h"

namespace allot::server {
namespace {

class RecoveryTest : public ControllerTest {
 protected:
  // Starts again with an executor that drops every stop (`drop`) or passes them on.
  void StartWithStops(bool drop) {
    controller_.reset();
    wrap_executor_ = [this, drop](std::unique_ptr<exec::Executor> real) {
      auto wrapper = std::make_unique<StopDropper>(std::move(real), drop);
      stops_ = wrapper.get();
      return std::unique_ptr<exec::Executor>(std::move(wrapper));
    };
    Start();
  }
  // The server goes down, the first attempts of `ids` leave nothing to adopt (their processes
  // are killed through the identities the server recorded), and it starts again, passing stops on.
  void RestartWithoutAttempts(const std::vector<std::string>& ids) {
    controller_.reset();
    for (const std::string& id : ids) fs::remove_all(AttemptDir(id, 1));
    StartWithStops(/*drop=*/false);
  }
  Json Describe(const std::string& id) {
    Result<Json> d = Call("describeservicejob", {{"jobId", id}});
    return d.ok() ? d.value() : Json{{"error", d.status().ToString()}};
  }
  fs::path AttemptDir(const std::string& id, int attempt) const {
    return dir_ / "jobs" / id / ("attempt-" + std::to_string(attempt));
  }
  // A job that counts its runs in `runs` and, on its first, trains until killed (SIGTERM
  // ignored, so a stop takes the whole grace); later runs exit 0.
  std::string SubmitTrainer(const fs::path& runs) {
    return Submit("trainer", "echo run >> " + runs.string() + "; [ $(wc -l < " + runs.string() +
                                 ") -gt 1 ] && exit 0; trap '' TERM; sleep 600 & wait; sleep 600");
  }
  int Runs(const fs::path& runs) {
    std::ifstream in(runs);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }
  StopDropper* stops_ = nullptr;
};

// Before, the restart found nothing of the attempt, requeued the job "Attempt lost", and ran it
// again: the caller's acknowledged TerminateServiceJob was undone.
TEST_F(RecoveryTest, ATerminatedJobWhoseAttemptIsGoneAfterARestartEndsTerminated) {
  StartWithStops(/*drop=*/true);  // the server goes down before the stop reaches the attempt
  const fs::path runs = dir_ / "runs";
  const std::string id = SubmitTrainer(runs);
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(WaitFor([&] { return StatusOf(id) == "RUNNING"; })) << StatusOf(id);
  ASSERT_TRUE(Call("terminateservicejob", {{"jobId", id}, {"reason", "no longer needed"}}).ok());
  ASSERT_TRUE(WaitFor([&] { return stops_->stops() == 1; }));
  RestartWithoutAttempts({id});
  const Json d = Describe(id);
  EXPECT_EQ(d["status"], "FAILED") << d.dump();
  EXPECT_EQ(d.value("statusReason", ""), "no longer needed") << d.dump();
  EXPECT_EQ(d["attempts"].size(), 1U) << d.dump();
  EXPECT_EQ(Runs(runs), 1);
  // And so it stays: the end was written, a second restart finds it.
  controller_.reset();
  Start();
  EXPECT_EQ(StatusOf(id), "FAILED");
  EXPECT_EQ(Runs(runs), 1);
}

// A timeout's stop, lost the same way: the job fails as timed out (a timeout uses no retry),
// and the capacity it held is free again.
TEST_F(RecoveryTest, AJobTimedOutBeforeARestartWhoseAttemptIsGoneEndsTimedOut) {
  StartWithStops(/*drop=*/true);
  const fs::path runs = dir_ / "runs";
  Result<Json> submitted =
      Call("submitservicejob",
           {{"jobName", "trainer"},
            {"jobQueue", "q"},
            {"serviceJobType", "SAGEMAKER_TRAINING"},
            {"timeoutConfig", {{"attemptDurationSeconds", 1}}},
            {"retryStrategy", {{"attempts", 3}}},
            {"serviceRequestPayload", Payload("echo run >> " + runs.string() + "; sleep 600")}});
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  const std::string id = submitted.value()["jobId"];
  ASSERT_TRUE(WaitFor([&] { return stops_->stops() == 1; })) << Describe(id).dump();
  RestartWithoutAttempts({id});
  const Json d = Describe(id);
  EXPECT_EQ(d["status"], "FAILED") << d.dump();
  EXPECT_EQ(d.value("statusReason", ""), "Job attempt duration exceeded timeout") << d.dump();
  const std::string next = Submit("next", "true");
  EXPECT_TRUE(WaitFor([&] { return StatusOf(next) == "SUCCEEDED"; })) << StatusOf(next);
  EXPECT_EQ(Runs(runs), 1);
}

// The stop was acknowledged and committed, but the server went down before it reached the
// attempt. Before, the restart adopted the attempt as stopping and never stopped it: it ran on
// (here for 600 s), holding its capacity, and the job ended only when it did.
TEST_F(RecoveryTest, AnAdoptedAttemptUnderAStopIsStoppedAgain) {
  StartWithStops(/*drop=*/true);
  const fs::path runs = dir_ / "runs";
  const std::string id = SubmitTrainer(runs);
  ASSERT_TRUE(WaitFor([&] { return StatusOf(id) == "RUNNING"; })) << StatusOf(id);
  ASSERT_TRUE(Call("terminateservicejob", {{"jobId", id}, {"reason", "stop it"}}).ok());
  ASSERT_TRUE(WaitFor([&] { return stops_->stops() == 1; }));
  StartWithStops(/*drop=*/false);
  // The grace is 2 s; the trainer ignores SIGTERM, so it is killed when the grace ends.
  ASSERT_TRUE(WaitFor([&] { return StatusOf(id) == "FAILED"; }, 20)) << Describe(id).dump();
  EXPECT_EQ(Describe(id).value("statusReason", ""), "stop it");
  EXPECT_GE(stops_->stops(), 1);
  EXPECT_EQ(Runs(runs), 1);
}

// A preemption's stop lost the same way: the victim is requeued as preempted (counted, since it
// ran), behind its preemptor, which runs first; then the victim runs again.
TEST_F(RecoveryTest, AVictimWhoseAttemptIsGoneAfterARestartIsRequeuedBehindItsPreemptor) {
  StartWithStops(/*drop=*/true);
  ASSERT_TRUE(
      Call("createschedulingpolicy",
           {{"name", "shares"}, {"quotaSharePolicy", {{"idleResourceAssignmentStrategy", "FIFO"}}}})
          .ok());
  MakePolicyQueue("pq", "shares");
  Json share = TeamShareInQ();
  share["jobQueue"] = "pq";
  share["capacityLimits"][0]["maxCapacity"] = 1;
  share["preemptionConfiguration"]["inSharePreemption"] = "ENABLED";
  ASSERT_TRUE(Call("createquotashare", share).ok());
  const fs::path runs = dir_ / "runs";
  auto submit = [&](const std::string& name, int priority, const std::string& script) {
    Result<Json> r = Call("submitservicejob", {{"jobName", name},
                                               {"jobQueue", "pq"},
                                               {"quotaShareName", "team"},
                                               {"schedulingPriority", priority},
                                               {"serviceJobType", "SAGEMAKER_TRAINING"},
                                               {"serviceRequestPayload", Payload(script)}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r.value()["jobId"].get<std::string>() : "";
  };
  const std::string victim =
      submit("victim", 0,
             "echo run >> " + runs.string() + "; [ $(wc -l < " + runs.string() +
                 ") -gt 1 ] && exit 0; trap '' TERM; sleep 600 & wait; sleep 600");
  ASSERT_TRUE(WaitFor([&] { return StatusOf(victim) == "RUNNING"; })) << StatusOf(victim);
  const fs::path go = dir_ / "go";
  const std::string urgent =
      submit("urgent", 5, "while [ ! -e " + go.string() + " ]; do sleep 0.05; done");
  ASSERT_TRUE(WaitFor([&] { return stops_->stops() == 1; })) << Describe(victim).dump();
  RestartWithoutAttempts({victim});
  ASSERT_TRUE(WaitFor([&] { return StatusOf(urgent) == "RUNNING"; })) << StatusOf(urgent);
  const Json d = Describe(victim);
  EXPECT_EQ(d["status"], "RUNNABLE") << d.dump();
  EXPECT_EQ(d["allot"]["preemptions"], 1) << d.dump();
  { std::ofstream touch(go); }
  ASSERT_TRUE(WaitFor([&] { return StatusOf(urgent) == "SUCCEEDED"; })) << StatusOf(urgent);
  ASSERT_TRUE(WaitFor([&] { return StatusOf(victim) == "SUCCEEDED"; })) << StatusOf(victim);
  EXPECT_EQ(Runs(runs), 2);
}

// The GPU slot of an attempt ended this way stays taken until its end is applied. Before, the
// restore did not mark it taken: a job requeued meanwhile (E, whose attempt was gone too) took it,
// and the end then freed it under E, so the next job (F) ran on E's GPU while the other stayed
// idle. (Found by a review, with this test.)
TEST_F(RecoveryTest, TheSlotOfAnAttemptEndedThisWayIsNotHandedOutTwice) {
  options_.host_map["ml.g5.xlarge"] = {{"0", ""}, {"1", ""}};
  StartWithStops(/*drop=*/true);
  const fs::path gpus = dir_ / "gpus";
  auto job = [&](const std::string& name) {
    return Submit(name, "echo " + name + "=$CUDA_VISIBLE_DEVICES >> " + gpus.string() +
                            "; trap '' TERM; sleep 600 & wait; sleep 600");
  };
  const std::string a = job("A");
  ASSERT_TRUE(WaitFor([&] { return StatusOf(a) == "RUNNING"; })) << StatusOf(a);
  const std::string e = job("E");
  ASSERT_TRUE(WaitFor([&] { return StatusOf(e) == "RUNNING"; })) << StatusOf(e);
  ASSERT_TRUE(Call("terminateservicejob", {{"jobId", a}, {"reason", "no longer needed"}}).ok());
  ASSERT_TRUE(WaitFor([&] { return stops_->stops() == 1; }));
  RestartWithoutAttempts({a, e});
  EXPECT_EQ(StatusOf(a), "FAILED");
  ASSERT_TRUE(WaitFor([&] { return StatusOf(e) == "RUNNING"; })) << StatusOf(e);
  const std::string f = job("F");
  ASSERT_TRUE(WaitFor([&] { return StatusOf(f) == "RUNNING"; })) << StatusOf(f);
  ASSERT_TRUE(WaitFor([&] { return Runs(gpus) == 4; }));
  std::ifstream in(gpus);
  std::map<std::string, std::string> last;  // each job's GPU at its latest launch
  for (std::string line; std::getline(in, line);) {
    last[line.substr(0, line.find('='))] = line.substr(line.find('=') + 1);
  }
  EXPECT_NE(last["E"], last["F"]) << "E and F run on the same GPU";
  for (const std::string& id : {e, f}) {
    EXPECT_TRUE(Call("terminateservicejob", {{"jobId", id}, {"reason", "done"}}).ok());
  }
  // Ended before the controller goes: no trainer outlives the test.
  EXPECT_TRUE(WaitFor([&] { return StatusOf(e) == "FAILED" && StatusOf(f) == "FAILED"; }));
}

// An attempt's end that the executor reported while the store's writes failed is applied again
// after the rollback, before the end the reload gives a stopped attempt it found nothing to
// adopt of: the checkpoint error it reported stays in the job's reason. Before, the reload's end
// came first, and the replayed report found the attempt ended (stop 36's first review, Medium).
TEST_F(RecoveryTest, AnEndReportedWhileTheStoreFailedKeepsItsCheckpointError) {
  const fs::path roots = FreshTestDir("allot-roots");  // outside the data directory, as it must
  const fs::path ck = roots / "ck";
  fs::create_directories(ck);
  controller_.reset();
  options_.file_roots = {roots.string()};
  Start();
  Json payload = Json::parse(Payload(
      "mkdir -p \"$SM_MODEL_DIR/../checkpoints\" && echo x > "
      "\"$SM_MODEL_DIR/../checkpoints/m\" && touch \"$SM_MODEL_DIR/../done\"; trap '' TERM; "
      "sleep 600"));
  payload["CheckpointConfig"] = {{"S3Uri", "file://" + ck.string()}};
  Result<Json> submitted = Call("submitservicejob", {{"jobName", "ck"},
                                                     {"jobQueue", "q"},
                                                     {"serviceJobType", "SAGEMAKER_TRAINING"},
                                                     {"serviceRequestPayload", payload.dump()}});
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  const std::string id = submitted.value()["jobId"];
  ASSERT_TRUE(WaitFor([&] { return fs::exists(AttemptDir(id, 1) / "algo-1" / "ml" / "done"); }))
      << Describe(id).dump();
  // The location becomes a file: the sync after the attempt fails.
  fs::remove_all(ck);
  std::ofstream(ck) << "not a directory\n";
  ASSERT_TRUE(Call("terminateservicejob", {{"jobId", id}, {"reason", "operator says stop"}}).ok());
  // The stop is stored; the attempt's end, which comes with the grace's SIGKILL (TERM is
  // ignored), is not.
  store_->Fail(ResourceExhausted("disk full"));
  ASSERT_TRUE(WaitFor([this] { return controller_->rolling_back(); }));
  // The attempt ended (its supervisor wrote its status), and the executor's report, which comes
  // after the checkpoints' sync, has had time to arrive.
  ASSERT_TRUE(WaitFor([&] { return fs::exists(AttemptDir(id, 1) / "algo-1" / "status.json"); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  // Nothing left to adopt: the reload restores the job under its stop and ends it "lost".
  fs::remove_all(AttemptDir(id, 1));
  store_->Heal();
  ASSERT_TRUE(WaitFor([this] { return !controller_->rolling_back(); }));
  ASSERT_TRUE(WaitFor([&] { return StatusOf(id) == "FAILED"; })) << Describe(id).dump();
  const std::string reason = Describe(id).value("statusReason", "");
  EXPECT_NE(reason.find("operator says stop; its checkpoints were not saved"), std::string::npos)
      << reason;
  fs::remove_all(roots);
}

}  // namespace
}  // namespace allot::server
