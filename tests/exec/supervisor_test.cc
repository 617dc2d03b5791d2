// The supervisor (`allot __supervise`), its files, and what the local executor builds on them:
// stop reasons, a grace that holds without a server, adoption after a restart, vanished hosts,
// checkpoint reports.

#include "exec/supervisor.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "exec/host_files.h"
#include "exec/local_executor.h"
#include "exec/spawn.h"
#include "exec/support/exec_testing.h"

namespace allot::exec {
namespace {

using testing::JobPid;
using testing::ReadFile;
using testing::Recorder;
using testing::ScratchDir;
using testing::ShellSpec;
using testing::WaitForFileContaining;
using testing::WaitUntilGone;
using testing::WriteFile;

// ---------------------------------------------------------------------------------------------
// The files.

TEST(HostFiles, FlatJsonRoundTrips) {
  const std::string json = FlatJson({{"reason", "a \"quoted\"\nline"}}, {{"grace_ms", -5}});
  const auto fields = ParseFlatJson(json);
  ASSERT_TRUE(fields.has_value()) << json;
  EXPECT_EQ(fields->at("reason"), "a \"quoted\"\nline");
  EXPECT_EQ(fields->at("grace_ms"), "-5");
  EXPECT_FALSE(ParseFlatJson("{\"a\":").has_value());
  EXPECT_FALSE(ParseFlatJson("{\"a\":1} x").has_value());
  EXPECT_TRUE(ParseFlatJson(" { } ").has_value());
}

TEST(HostFiles, RecordsRoundTripAndStopWords) {
  ScratchDir dir;
  ASSERT_TRUE(WriteSupervisorRecord(dir.path(), {12, 34, 56, 78, "/out"}).ok());
  const auto record = ReadSupervisorRecord(dir.path());
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->pid, 12);
  EXPECT_EQ(record->start_time, 34U);
  EXPECT_EQ(record->child_pid, 56);
  EXPECT_EQ(record->child_start_time, 78U);
  EXPECT_EQ(record->output_dir, "/out");
  ASSERT_TRUE(WriteHostStatus(dir.path(), {-9, 1, 2}).ok());
  EXPECT_NE(ReadFile(dir.path() + "/status.json").find("\"signal\":9"), std::string::npos);
  EXPECT_EQ(ReadHostStatus(dir.path())->exit_code, -9);
  ASSERT_TRUE(WriteStopRequest(dir.path(), {"timeout", 250}).ok());
  EXPECT_EQ(ReadStopRequest(dir.path())->grace_ms, 250);
  EXPECT_EQ(StopReasonWord(model::StopKind::kPreemption), "preemption");
  EXPECT_EQ(StopReasonWord(model::StopKind::kTermination), "termination");
  EXPECT_EQ(StopReasonWord(model::StopKind::kTimeout), "timeout");
  EXPECT_FALSE(ReadHostStatus(dir.path() + "/none").ok());
}

TEST(HostFiles, StartTimesTellProcessesApart) {
  const auto mine = RunningStartTime(::getpid());
  ASSERT_TRUE(mine.has_value());
  EXPECT_TRUE(SameProcessRunning(::getpid(), *mine));
  EXPECT_FALSE(SameProcessRunning(::getpid(), *mine + 1));
}

// ---------------------------------------------------------------------------------------------
// The supervisor on its own.

class SupervisorTest : public ::testing::Test {
 protected:
  // Starts `exec_supervise_main __supervise --dir D --output-dir D/out <extra> -- sh -c script`.
  pid_t Supervise(const std::string& script, std::vector<std::string> extra = {}) {
    SpawnRequest request;
    request.argv = {testing::SupervisorExe(), "__supervise", "--dir", dir_.path(),
                    "--output-dir", Out()};
    request.argv.insert(request.argv.end(), extra.begin(), extra.end());
    request.argv.insert(request.argv.end(), {"--", "/bin/sh", "-c", script});
    request.environment = CurrentEnvironment();
    request.stdout_path = dir_.path() + "/stdout";
    request.stderr_path = dir_.path() + "/stderr";
    const Result<pid_t> pid = SpawnProcess(request);
    EXPECT_TRUE(pid.ok()) << pid.status().message();
    return pid.ok() ? *pid : 0;
  }
  int Wait(pid_t pid) {
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
  }
  std::string Out() const { return dir_.path() + "/out"; }
  std::string Stdout() const { return dir_.path() + "/stdout"; }

  ScratchDir dir_;
};

TEST_F(SupervisorTest, RecordsItselfTheJobAndItsExitStatus) {
  const pid_t pid = Supervise("echo ready; exit 3");
  ASSERT_EQ(Wait(pid), 0);
  const auto record = ReadSupervisorRecord(dir_.path());
  ASSERT_TRUE(record.ok()) << record.status().message();
  EXPECT_EQ(record->pid, pid);
  EXPECT_GT(record->start_time, 0U);
  EXPECT_GT(record->child_pid, 0);
  EXPECT_NE(record->child_pid, pid);
  EXPECT_EQ(record->output_dir, Out());
  const auto status = ReadHostStatus(dir_.path());
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->exit_code, 3);
  EXPECT_GT(status->started_at, 0);
  EXPECT_GE(status->ended_at, status->started_at);
  EXPECT_EQ(ReadFile(Stdout()), "ready\n");  // the job inherits the supervisor's output
}

TEST_F(SupervisorTest, StopWritesTheReasonAndForwardsTerm) {
  const pid_t pid = Supervise(
      "trap 'echo reason=$(cat " + Out() + "/stop-reason); exit 0' TERM; echo ready; "
      "while :; do sleep 0.05; done");
  ASSERT_TRUE(WaitForFileContaining(Stdout(), "ready"));
  ASSERT_TRUE(WriteStopRequest(dir_.path(), {"timeout", Seconds(600)}).ok());
  ::kill(pid, SIGTERM);
  ASSERT_EQ(Wait(pid), 0);
  EXPECT_EQ(ReadFile(Out() + "/stop-reason"), "timeout");
  EXPECT_NE(ReadFile(Stdout()).find("reason=timeout"), std::string::npos);
  EXPECT_EQ(ReadHostStatus(dir_.path())->exit_code, 0);
}

TEST_F(SupervisorTest, WithoutStopFileItTerminatesWithItsOwnGrace) {
  const pid_t pid = Supervise("trap '' TERM; echo ready; sleep 60", {"--grace-ms", "100"});
  ASSERT_TRUE(WaitForFileContaining(Stdout(), "ready"));
  ::kill(pid, SIGTERM);
  ASSERT_EQ(Wait(pid), 0);
  EXPECT_EQ(ReadFile(Out() + "/stop-reason"), "termination");
  EXPECT_EQ(ReadHostStatus(dir_.path())->exit_code, -SIGKILL);
}

TEST_F(SupervisorTest, BadArgumentsExit2) {
  SpawnRequest request;
  request.argv = {testing::SupervisorExe(), "__supervise", "--dir", dir_.path(), "--", "true"};
  request.environment = CurrentEnvironment();
  request.stdout_path = Stdout();
  request.stderr_path = dir_.path() + "/stderr";
  const Result<pid_t> pid = SpawnProcess(request);
  ASSERT_TRUE(pid.ok());
  EXPECT_EQ(Wait(*pid), 2);
  EXPECT_NE(ReadFile(dir_.path() + "/stderr").find("usage"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// The executor on supervisors.

class SupervisedTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(scratch_.path().empty()); }
  std::unique_ptr<Executor> New(Recorder& recorder, LocalOptions options = {}) {
    return NewLocalExecutor(options, testing::NoSandbox(), recorder.Callbacks());
  }
  std::string Dir(const std::string& name) const { return scratch_.path() + "/" + name; }
  std::string Host(const std::string& attempt, int k = 1) const {
    return Dir(attempt) + "/algo-" + std::to_string(k);
  }
  static AdoptSpec AdoptOf(const LaunchSpec& spec) {
    return AdoptSpec{spec.job, spec.attempt, spec.attempt_dir, spec.instance_count, spec.job_dir,
                     spec.checkpoint_sync_dir};
  }

  ScratchDir scratch_;
  Recorder a_;
  Recorder b_;
};

const std::string kReasonPrefix = "Received status from SageMaker: AlgorithmError: ";

TEST_F(SupervisedTest, PreemptionIsTheStopReasonTheJobReads) {
  auto executor = New(a_);
  const LaunchSpec spec = ShellSpec(
      1, 1,
      "trap 'echo reason=$(cat \"$SM_OUTPUT_DIR/stop-reason\"); exit 0' TERM; echo ready; "
      "while :; do sleep 0.05; done",
      1, Dir("a"));
  ASSERT_TRUE(executor->Launch(spec).ok());
  ASSERT_TRUE(WaitForFileContaining(Host("a") + "/stdout", "ready"));
  executor->Stop(1, 1, Seconds(600), model::StopKind::kPreemption);
  const auto exit = a_.WaitEnded(1, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->succeeded);
  EXPECT_NE(ReadFile(Host("a") + "/stdout").find("reason=preemption"), std::string::npos);
  EXPECT_NE(ReadFile(Host("a") + "/stop.json").find("\"reason\":\"preemption\""),
            std::string::npos);
  EXPECT_NE(ReadFile(Host("a") + "/status.json").find("\"exit_code\":0"), std::string::npos);
}

TEST_F(SupervisedTest, TheGraceHoldsAfterTheExecutorDetached) {
  auto executor = New(a_);
  ASSERT_TRUE(
      executor->Launch(ShellSpec(2, 1, "trap '' TERM; echo ready; sleep 60", 1, Dir("a"))).ok());
  const auto started = a_.WaitStarted(2, 1);
  ASSERT_TRUE(started.has_value());
  ASSERT_TRUE(WaitForFileContaining(Host("a") + "/stdout", "ready"));
  executor->Stop(2, 1, 300, model::StopKind::kTermination);
  executor->Detach();
  executor.reset();
  // The supervisor kills the job after the grace with no executor watching.
  ASSERT_TRUE(WaitForFileContaining(Host("a") + "/status.json", "\"signal\":9"));
  int wstatus = 0;
  ASSERT_EQ(::waitpid(started->hosts[0].pid, &wstatus, 0), started->hosts[0].pid);
  EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
  EXPECT_TRUE(a_.ended().empty());
}

TEST_F(SupervisedTest, AnotherExecutorAdoptsARunningAttempt) {
  auto first = New(a_);
  const std::string go = Dir("go");
  const LaunchSpec spec = ShellSpec(
      3, 2, "echo ready; until [ -e " + go + " ]; do sleep 0.05; done; exit 5", 2, Dir("a"));
  ASSERT_TRUE(first->Launch(spec).ok());
  const auto started = a_.WaitStarted(3, 2);
  ASSERT_TRUE(started.has_value());
  ASSERT_TRUE(WaitForFileContaining(Host("a", 2) + "/stdout", "ready"));
  first->Detach();
  first.reset();

  auto second = New(b_);
  ASSERT_TRUE(second->Adopt(AdoptOf(spec)).ok());
  WriteFile(go, "");
  const auto exit = b_.WaitEnded(3, 2);
  ASSERT_TRUE(exit.has_value());
  EXPECT_FALSE(exit->succeeded);
  EXPECT_EQ(exit->exit_codes[0] == 5 || exit->exit_codes[1] == 5, true);
  EXPECT_NE(exit->reason.find("exited with code 5"), std::string::npos) << exit->reason;
  EXPECT_TRUE(b_.started().empty());  // `started` is not repeated
  EXPECT_TRUE(a_.ended().empty());
  // The supervisors were this test's children: the adopter reaped them.
  for (const HostProcess& host : started->hosts) {
    int wstatus = 0;
    EXPECT_EQ(::waitpid(host.pid, &wstatus, WNOHANG), -1);
  }
}

TEST_F(SupervisedTest, AnAttemptThatEndedUnwatchedReportsItsTrueStatus) {
  auto first = New(a_);
  const LaunchSpec spec = ShellSpec(4, 1, "exit 4", 1, Dir("a"));
  ASSERT_TRUE(first->Launch(spec).ok());
  first->Detach();
  first.reset();
  ASSERT_TRUE(WaitForFileContaining(Host("a") + "/status.json", "\"exit_code\":4"));
  const auto record = ReadSupervisorRecord(Host("a"));
  ASSERT_TRUE(record.ok());
  ASSERT_TRUE(WaitUntilGone(record->pid));

  auto second = New(b_);
  ASSERT_TRUE(second->Adopt(AdoptOf(spec)).ok());
  const auto exit = b_.WaitEnded(4, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_codes, (std::vector<int>{4}));
  EXPECT_EQ(exit->reason, kReasonPrefix + "algo-1 exited with code 4");
}

TEST_F(SupervisedTest, AKilledSupervisorIsAVanishedHostAndItsJobGoesToo) {
  auto executor = New(a_);
  ASSERT_TRUE(
      executor->Launch(ShellSpec(5, 1, "echo ready; exec sleep 60", 1, Dir("a"))).ok());
  const auto started = a_.WaitStarted(5, 1);
  ASSERT_TRUE(started.has_value());
  ASSERT_TRUE(WaitForFileContaining(Host("a") + "/stdout", "ready"));
  const pid_t job = JobPid(Host("a"));
  ASSERT_GT(job, 0);
  ::kill(started->hosts[0].pid, SIGKILL);
  const auto exit = a_.WaitEnded(5, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_FALSE(exit->succeeded);
  EXPECT_EQ(exit->reason, HostVanishedReason("algo-1"));
  EXPECT_EQ(exit->reason, kReasonPrefix + "host algo-1 vanished without an exit status");
  EXPECT_TRUE(WaitUntilGone(job));
}

TEST_F(SupervisedTest, AdoptChecksTheStartTimeNotThePidAlone) {
  // supervisor.json names a live process (this test) that started at another time.
  const std::string host = Host("a");
  ASSERT_TRUE(std::filesystem::create_directories(host));
  const std::uint64_t mine = RunningStartTime(::getpid()).value_or(0);
  ASSERT_TRUE(WriteSupervisorRecord(host, {::getpid(), mine + 7, ::getpid(), mine + 7, ""}).ok());
  auto executor = New(a_);
  ASSERT_TRUE(executor->Adopt(AdoptSpec{6, 1, Dir("a"), 1, "", ""}).ok());
  const auto exit = a_.WaitEnded(6, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->reason, HostVanishedReason("algo-1"));
  EXPECT_EQ(::kill(::getpid(), 0), 0);  // and nothing was killed
}

TEST_F(SupervisedTest, AdoptingNothingFails) {
  auto executor = New(a_);
  const Status status = executor->Adopt(AdoptSpec{7, 1, Dir("none"), 2, "", ""});
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.message().find("nothing to adopt"), std::string::npos) << status.message();
  EXPECT_TRUE(a_.log().empty());
}

TEST_F(SupervisedTest, TheJobsFailureFileIsTheReason) {
  auto executor = New(a_);
  ASSERT_TRUE(executor
                  ->Launch(ShellSpec(8, 1,
                                     "echo 'CUDA out of memory' > \"$SM_OUTPUT_DIR/failure\"; "
                                     "exit 1",
                                     1, Dir("a")))
                  .ok());
  const auto exit = a_.WaitEnded(8, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->reason, kReasonPrefix + "CUDA out of memory");
}

TEST_F(SupervisedTest, CheckpointsWrittenByTheJobAreReported) {
  auto executor = New(a_);
  const std::string go = Dir("go");
  const LaunchSpec spec = ShellSpec(9, 1,
                                    "echo step > \"$ALLOT_CHECKPOINT_DIR/step-1\"; echo ready; "
                                    "until [ -e " + go + " ]; do sleep 0.05; done",
                                    1, Dir("a"));
  ASSERT_TRUE(executor->Launch(spec).ok());
  ASSERT_TRUE(WaitForFileContaining(Host("a") + "/stdout", "ready"));
  const auto newest = a_.WaitCheckpoint(9, 1, 1);
  ASSERT_TRUE(newest.has_value());
  EXPECT_EQ(*newest, NewestFileTime(spec.job_dir + "/checkpoints"));
  EXPECT_TRUE(a_.ended().empty());  // reported while the attempt runs
  WriteFile(go, "");
  ASSERT_TRUE(a_.WaitEnded(9, 1).has_value());
  EXPECT_EQ(a_.log().back(), "ended 9/1");
}

TEST_F(SupervisedTest, ASandboxedJobReadsTheStopReasonUnderOptMl) {
  if (!SandboxAvailable(LayoutOptions{})) GTEST_SKIP() << "bubblewrap does not work here";
  auto executor = NewLocalExecutor(LocalOptions{}, LayoutOptions{}, a_.Callbacks());
  ASSERT_TRUE(executor
                  ->Launch(ShellSpec(10, 1,
                                     "trap 'echo reason=$(cat /opt/ml/output/stop-reason); "
                                     "exit 0' TERM; echo ready; while :; do sleep 0.05; done",
                                     1, Dir("a")))
                  .ok());
  ASSERT_TRUE(WaitForFileContaining(Host("a") + "/stdout", "ready"));
  executor->Stop(10, 1, Seconds(600), model::StopKind::kPreemption);
  const auto exit = a_.WaitEnded(10, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_NE(ReadFile(Host("a") + "/stdout").find("reason=preemption"), std::string::npos)
      << ReadFile(Host("a") + "/stderr");
}

}  // namespace
}  // namespace allot::exec
