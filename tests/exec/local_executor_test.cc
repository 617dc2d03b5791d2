#include "exec/local_executor.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "exec/support/exec_testing.h"

namespace allot::exec {
namespace {

using testing::FindNumber;
using testing::ReadFile;
using testing::Recorder;
using testing::ScratchDir;
using testing::ShellSpec;
using testing::WaitForFileContaining;
using testing::WaitUntilGone;
using testing::WriteFile;

const std::string kReasonPrefix = "Received status from SageMaker: AlgorithmError: ";
constexpr model::StopKind kTerm = model::StopKind::kTermination;

class LocalExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(scratch_.path().empty()); }

  std::unique_ptr<Executor>& Start(LocalOptions options = {}) {
    executor_ = NewLocalExecutor(options, testing::NoSandbox(), recorder_.Callbacks());
    return executor_;
  }
  std::string Dir(const std::string& name) const { return scratch_.path() + "/" + name; }
  std::string Log(const std::string& attempt, const std::string& host,
                  const std::string& stream = "stdout") const {
    return Dir(attempt) + "/" + host + "/" + stream;
  }

  ScratchDir scratch_;
  Recorder recorder_;
  std::unique_ptr<Executor> executor_;
};

TEST(LocalExecutorConventions, HostNamesAndReasons) {
  EXPECT_EQ(HostName(3), "algo-3");
  EXPECT_EQ(HostFailureReason("algo-2", 3), kReasonPrefix + "algo-2 exited with code 3");
  EXPECT_EQ(HostFailureReason("algo-1", -9), kReasonPrefix + "algo-1 was killed by signal 9");
}

TEST_F(LocalExecutorTest, ThreeHostsSucceedAndSeeTheirHostNames) {
  auto& executor = Start();
  const LaunchSpec spec =
      ShellSpec(1, 1, "echo \"host=$SM_CURRENT_HOST hosts=$SM_HOSTS\"", 3, Dir("a1"));
  ASSERT_TRUE(executor->Launch(spec).ok());

  const auto exit = recorder_.WaitEnded(1, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->succeeded);
  EXPECT_EQ(exit->reason, "");
  EXPECT_EQ(exit->exit_codes, (std::vector<int>{0, 0, 0}));

  const auto started = recorder_.WaitStarted(1, 1);
  ASSERT_TRUE(started.has_value());
  ASSERT_EQ(started->hosts.size(), 3U);
  for (int k = 1; k <= 3; ++k) {
    const std::string host = "algo-" + std::to_string(k);
    EXPECT_EQ(started->hosts[static_cast<std::size_t>(k - 1)].host, host);
    EXPECT_GT(started->hosts[static_cast<std::size_t>(k - 1)].pid, 0);
    EXPECT_EQ(ReadFile(Log("a1", host)),
              "host=" + host + " hosts=[\"algo-1\", \"algo-2\", \"algo-3\"]\n");
  }
  EXPECT_NE(started->hosts[0].pid, started->hosts[1].pid);
  EXPECT_NE(started->thread, std::this_thread::get_id());  // callbacks come from the executor
  EXPECT_EQ(recorder_.log(), (std::vector<std::string>{"started 1/1", "ended 1/1"}));
}

TEST_F(LocalExecutorTest, EachHostIsItsOwnSessionAndTheJobItsOwnProcessGroup) {
  auto& executor = Start();
  ASSERT_TRUE(executor
                  ->Launch(ShellSpec(1, 1,
                                     "echo \"pid=$$ pgid=$(ps -o pgid= -p $$ | tr -d ' ') "
                                     "sid=$(ps -o sid= -p $$ | tr -d ' ')\"",
                                     2, Dir("a1")))
                  .ok());
  const auto exit = recorder_.WaitEnded(1, 1);
  ASSERT_TRUE(exit.has_value());
  const auto started = recorder_.WaitStarted(1, 1);
  ASSERT_TRUE(started.has_value());
  for (const HostProcess& host : started->hosts) {
    const std::string out = ReadFile(Log("a1", host.host));
    if (FindNumber(out, "pgid") == std::nullopt || FindNumber(out, "sid") == std::nullopt) {
      GTEST_SKIP() << "ps is not available: " << out;
    }
    EXPECT_EQ(FindNumber(out, "pgid"), FindNumber(out, "pid"));  // the job's own group
    EXPECT_EQ(FindNumber(out, "sid"), host.pid);                 // in its supervisor's session
    EXPECT_NE(FindNumber(out, "pid"), host.pid);
  }
}

// The payload's Environment reaches the job; the server's does not (the supervisor runs with a
// clean environment and the job starts from BaseJobEnvironment).
TEST_F(LocalExecutorTest, PayloadEnvironmentReachesTheProcessButNotTheServers) {
  ASSERT_EQ(::setenv("ALLOT_EXEC_TEST_INHERITED", "from-server", 1), 0);
  ASSERT_EQ(::setenv("ALLOT_EXEC_TEST_OVERRIDDEN", "server-value", 1), 0);
  auto& executor = Start();
  LaunchSpec spec =
      ShellSpec(2, 1,
                "echo \"[$MY_VAR] [$ALLOT_EXEC_TEST_INHERITED] [$ALLOT_EXEC_TEST_OVERRIDDEN] "
                "[$SM_CURRENT_HOST]\"",
                1, Dir("a"));
  spec.environment = {{"MY_VAR", "hello world"},
                      {"ALLOT_EXEC_TEST_OVERRIDDEN", "payload-value"},
                      {"SM_CURRENT_HOST", "not-this"}};
  ASSERT_TRUE(executor->Launch(spec).ok());
  const auto exit = recorder_.WaitEnded(2, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->succeeded);
  EXPECT_EQ(ReadFile(Log("a", "algo-1")), "[hello world] [] [payload-value] [algo-1]\n");
  ::unsetenv("ALLOT_EXEC_TEST_INHERITED");
  ::unsetenv("ALLOT_EXEC_TEST_OVERRIDDEN");
}

TEST_F(LocalExecutorTest, PathOfThePayloadEnvironmentFindsTheProgram) {
  // The program is looked up in the job's PATH, not the server's.
  const std::string bin = Dir("bin");
  ASSERT_EQ(::mkdir(bin.c_str(), 0755), 0);
  WriteFile(bin + "/allot-test-prog", "#!/bin/sh\necho found-it\n");
  ASSERT_EQ(::chmod((bin + "/allot-test-prog").c_str(), 0755), 0);
  auto& executor = Start();
  LaunchSpec spec = ShellSpec(3, 1, "", 1, Dir("a"));
  spec.argv = {"allot-test-prog"};
  spec.environment = {{"PATH", bin + ":/usr/bin:/bin"}};
  ASSERT_TRUE(executor->Launch(spec).ok());
  const auto exit = recorder_.WaitEnded(3, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->succeeded);
  EXPECT_EQ(ReadFile(Log("a", "algo-1")), "found-it\n");
}

TEST_F(LocalExecutorTest, LogsGoToPerHostFilesAndAreAppended) {
  auto& executor = Start();
  ASSERT_TRUE(
      executor->Launch(ShellSpec(4, 1, "echo out-$SM_CURRENT_HOST; echo err >&2", 2, Dir("a")))
          .ok());
  ASSERT_TRUE(recorder_.WaitEnded(4, 1).has_value());
  EXPECT_EQ(ReadFile(Log("a", "algo-1")), "out-algo-1\n");
  EXPECT_EQ(ReadFile(Log("a", "algo-2")), "out-algo-2\n");
  EXPECT_EQ(ReadFile(Log("a", "algo-1", "stderr")), "err\n");
  EXPECT_EQ(ReadFile(Log("a", "algo-2", "stderr")), "err\n");

  // The same directory again (e.g. a relaunch): the files grow.
  ASSERT_TRUE(executor->Launch(ShellSpec(4, 2, "echo again", 1, Dir("a"))).ok());
  ASSERT_TRUE(recorder_.WaitEnded(4, 2).has_value());
  EXPECT_EQ(ReadFile(Log("a", "algo-1")), "out-algo-1\nagain\n");
}

TEST_F(LocalExecutorTest, OneFailingHostFailsTheAttemptAndStopsTheOthers) {
  LocalOptions options;
  options.failure_grace = Seconds(60);  // SIGTERM alone must end them
  auto& executor = Start(options);
  ASSERT_TRUE(executor
                  ->Launch(ShellSpec(5, 1,
                                     "if [ \"$SM_CURRENT_HOST\" = algo-2 ]; then exit 3; fi; "
                                     "exec sleep 60",
                                     3, Dir("a")))
                  .ok());
  const auto exit = recorder_.WaitEnded(5, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_FALSE(exit->succeeded);
  EXPECT_EQ(exit->reason, kReasonPrefix + "algo-2 exited with code 3");
  EXPECT_EQ(exit->exit_codes, (std::vector<int>{-SIGTERM, 3, -SIGTERM}));
}

TEST_F(LocalExecutorTest, HostsIgnoringTermAfterAFailureAreKilledAfterTheFailureGrace) {
  LocalOptions options;
  options.failure_grace = 300;
  auto& executor = Start(options);
  // algo-2 fails once algo-1 ignores SIGTERM.
  const std::string script = "if [ \"$SM_CURRENT_HOST\" = algo-2 ]; then until grep -q ready " +
                             Log("a", "algo-1") + "; do sleep 0.01; done; exit 7; fi; " +
                             "trap '' TERM; echo ready; sleep 60";
  ASSERT_TRUE(executor->Launch(ShellSpec(6, 1, script, 2, Dir("a"))).ok());
  const auto exit = recorder_.WaitEnded(6, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_FALSE(exit->succeeded);
  EXPECT_EQ(exit->reason, kReasonPrefix + "algo-2 exited with code 7");
  EXPECT_EQ(exit->exit_codes, (std::vector<int>{-SIGKILL, 7}));
}

TEST_F(LocalExecutorTest, HostKilledBySignalIsReported) {
  auto& executor = Start();
  ASSERT_TRUE(executor->Launch(ShellSpec(7, 1, "kill -USR1 $$", 1, Dir("a"))).ok());
  const auto exit = recorder_.WaitEnded(7, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_FALSE(exit->succeeded);
  EXPECT_EQ(exit->exit_codes, (std::vector<int>{-SIGUSR1}));
  EXPECT_EQ(exit->reason, kReasonPrefix + "algo-1 was killed by signal " + std::to_string(SIGUSR1));
}

TEST_F(LocalExecutorTest, StopOfAJobThatExitsOnTermReportsItsStatus) {
  auto& executor = Start();
  ASSERT_TRUE(executor
                  ->Launch(ShellSpec(8, 1,
                                     "trap 'echo got-term; exit 0' TERM; echo ready; "
                                     "while :; do sleep 1; done",
                                     1, Dir("a")))
                  .ok());
  ASSERT_TRUE(WaitForFileContaining(Log("a", "algo-1"), "ready"));
  executor->Stop(8, 1, Seconds(60), kTerm);  // a SIGKILL would come far beyond the wait limit
  const auto exit = recorder_.WaitEnded(8, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->succeeded);
  EXPECT_EQ(exit->exit_codes, (std::vector<int>{0}));
  EXPECT_EQ(ReadFile(Log("a", "algo-1")), "ready\ngot-term\n");
}

TEST_F(LocalExecutorTest, StopOfAJobIgnoringTermKillsItAfterTheGrace) {
  auto& executor = Start();
  ASSERT_TRUE(
      executor->Launch(ShellSpec(9, 1, "trap '' TERM; echo ready; sleep 60", 2, Dir("a"))).ok());
  ASSERT_TRUE(WaitForFileContaining(Log("a", "algo-1"), "ready"));
  ASSERT_TRUE(WaitForFileContaining(Log("a", "algo-2"), "ready"));
  executor->Stop(9, 1, 300, kTerm);
  const auto exit = recorder_.WaitEnded(9, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_FALSE(exit->succeeded);
  EXPECT_EQ(exit->exit_codes, (std::vector<int>{-SIGKILL, -SIGKILL}));
  EXPECT_EQ(exit->reason, kReasonPrefix + "algo-1 was killed by signal 9");
}

TEST_F(LocalExecutorTest, StopKillsTheChildrenOfTheJobToo) {
  auto& executor = Start();
  ASSERT_TRUE(
      executor
          ->Launch(ShellSpec(10, 1, "trap '' TERM; sleep 60 & echo child=$!; wait", 1, Dir("a")))
          .ok());
  ASSERT_TRUE(WaitForFileContaining(Log("a", "algo-1"), "child="));
  const auto child = FindNumber(ReadFile(Log("a", "algo-1")), "child");
  ASSERT_TRUE(child.has_value());
  executor->Stop(10, 1, 300, kTerm);
  const auto exit = recorder_.WaitEnded(10, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_codes, (std::vector<int>{-SIGKILL}));
  EXPECT_TRUE(WaitUntilGone(static_cast<pid_t>(*child)));
}

TEST_F(LocalExecutorTest, WhatAHostLeavesBehindInItsGroupIsKilledWhenItExits) {
  auto& executor = Start();
  ASSERT_TRUE(
      executor->Launch(ShellSpec(11, 1, "sleep 60 & echo child=$!; exit 0", 1, Dir("a"))).ok());
  const auto exit = recorder_.WaitEnded(11, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->succeeded);
  const auto child = FindNumber(ReadFile(Log("a", "algo-1")), "child");
  ASSERT_TRUE(child.has_value());
  EXPECT_TRUE(WaitUntilGone(static_cast<pid_t>(*child)));
}

TEST_F(LocalExecutorTest, StopTwiceTheEarliestKillDeadlineWins) {
  auto& executor = Start();
  for (int attempt = 1; attempt <= 2; ++attempt) {
    const std::string dir = Dir("a" + std::to_string(attempt));
    ASSERT_TRUE(
        executor->Launch(ShellSpec(12, attempt, "trap '' TERM; echo ready; sleep 60", 1, dir))
            .ok());
    ASSERT_TRUE(WaitForFileContaining(dir + "/algo-1/stdout", "ready"));
  }
  executor->Stop(12, 1, Seconds(600), kTerm);
  executor->Stop(12, 1, 200, kTerm);
  executor->Stop(12, 2, 200, kTerm);
  executor->Stop(12, 2, Seconds(600), kTerm);
  for (int attempt = 1; attempt <= 2; ++attempt) {
    const auto exit = recorder_.WaitEnded(12, attempt);
    ASSERT_TRUE(exit.has_value()) << attempt;
    EXPECT_EQ(exit->exit_codes, (std::vector<int>{-SIGKILL}));
  }
}

TEST_F(LocalExecutorTest, StopOfAnUnknownAttemptIsIgnored) {
  auto& executor = Start();
  executor->Stop(99, 1, 0, kTerm);
  ASSERT_TRUE(executor->Launch(ShellSpec(13, 1, "exit 0", 1, Dir("a"))).ok());
  ASSERT_TRUE(recorder_.WaitEnded(13, 1).has_value());
  executor->Stop(13, 1, 0, kTerm);  // already ended
  EXPECT_EQ(recorder_.ended().size(), 1U);
}

TEST_F(LocalExecutorTest, StopWithZeroGraceKillsAtOnce) {
  auto& executor = Start();
  ASSERT_TRUE(
      executor->Launch(ShellSpec(14, 1, "trap '' TERM; echo ready; sleep 60", 1, Dir("a"))).ok());
  ASSERT_TRUE(WaitForFileContaining(Log("a", "algo-1"), "ready"));
  executor->Stop(14, 1, 0, kTerm);
  const auto exit = recorder_.WaitEnded(14, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_codes, (std::vector<int>{-SIGKILL}));
}

TEST_F(LocalExecutorTest, ExecFailureReturnsAClearErrorAndNoCallback) {
  auto& executor = Start();
  LaunchSpec spec = ShellSpec(15, 1, "", 2, Dir("a"));
  spec.argv = {"nosuchprog-allot-test", "--flag"};
  const Status status = executor->Launch(spec);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "cannot run 'nosuchprog-allot-test': No such file or directory");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);

  spec.argv = {Dir("a")};  // a directory
  const Status not_executable = executor->Launch(spec);
  ASSERT_FALSE(not_executable.ok());
  EXPECT_NE(not_executable.message().find("cannot run '" + Dir("a") + "': Permission denied"),
            std::string::npos)
      << not_executable.message();

  // Callbacks come in order: once a later attempt ended, none for the failed one can follow.
  ASSERT_TRUE(executor->Launch(ShellSpec(16, 1, "exit 0", 1, Dir("b"))).ok());
  ASSERT_TRUE(recorder_.WaitEnded(16, 1).has_value());
  EXPECT_EQ(recorder_.log(), (std::vector<std::string>{"started 16/1", "ended 16/1"}));
  // The failed child was reaped: this process has no child left.
  int wstatus = 0;
  EXPECT_EQ(::waitpid(-1, &wstatus, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST_F(LocalExecutorTest, InvalidAndDuplicateLaunchesAreRejected) {
  auto& executor = Start();
  LaunchSpec empty = ShellSpec(17, 1, "", 1, Dir("a"));
  empty.argv.clear();
  EXPECT_EQ(executor->Launch(empty).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(executor->Launch(ShellSpec(17, 1, "true", 0, Dir("a"))).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(executor->Launch(ShellSpec(17, 1, "true", 1, "")).code(), StatusCode::kInvalidArgument);

  ASSERT_TRUE(
      executor
          ->Launch(ShellSpec(17, 1, "trap 'exit 0' TERM; while :; do sleep 1; done", 1, Dir("a")))
          .ok());
  EXPECT_EQ(executor->Launch(ShellSpec(17, 1, "true", 1, Dir("b"))).code(),
            StatusCode::kAlreadyExists);
  executor->Stop(17, 1, 200, kTerm);
  ASSERT_TRUE(recorder_.WaitEnded(17, 1).has_value());
}

TEST_F(LocalExecutorTest, CannotCreateTheAttemptDirectory) {
  auto& executor = Start();
  WriteFile(Dir("file"), "x");
  const Status status = executor->Launch(ShellSpec(18, 1, "true", 1, Dir("file") + "/sub"));
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cannot create"), std::string::npos) << status.message();
}

TEST_F(LocalExecutorTest, SignalsBlockedByTheServerAreUnblockedInTheJob) {
  // The server typically blocks SIGTERM in its threads to sigwait() for it.
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigset_t old;
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &term, &old), 0);
  auto& executor = Start();
  const Status launched = executor->Launch(ShellSpec(19, 1, "echo ready; sleep 60", 1, Dir("a")));
  ASSERT_EQ(::pthread_sigmask(SIG_SETMASK, &old, nullptr), 0);
  ASSERT_TRUE(launched.ok());
  ASSERT_TRUE(WaitForFileContaining(Log("a", "algo-1"), "ready"));
  executor->Stop(19, 1, Seconds(600), kTerm);
  const auto exit = recorder_.WaitEnded(19, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_codes, (std::vector<int>{-SIGTERM}));
}

TEST_F(LocalExecutorTest, CallbacksMayCallIntoTheExecutor) {
  std::unique_ptr<Executor> executor;
  Recorder recorder;
  Callbacks callbacks = recorder.Callbacks();
  auto record_started = callbacks.started;
  callbacks.started = [&](model::JobId job, int attempt, const std::vector<HostProcess>& hosts) {
    record_started(job, attempt, hosts);
    executor->Stop(job, attempt, 0, kTerm);  // from the callback thread
  };
  executor = NewLocalExecutor(LocalOptions{}, testing::NoSandbox(), callbacks);
  ASSERT_TRUE(executor->Launch(ShellSpec(20, 1, "trap '' TERM; sleep 60", 1, Dir("a"))).ok());
  const auto exit = recorder.WaitEnded(20, 1);
  ASSERT_TRUE(exit.has_value());
  ASSERT_EQ(exit->exit_codes.size(), 1U);
  // SIGTERM may come before the shell set its trap.
  EXPECT_TRUE(exit->exit_codes[0] == -SIGKILL || exit->exit_codes[0] == -SIGTERM)
      << exit->exit_codes[0];
  executor.reset();
}

TEST_F(LocalExecutorTest, DetachLeavesProcessesRunningAndStopsCallbacks) {
  auto& executor = Start();
  ASSERT_TRUE(executor->Launch(ShellSpec(21, 1, "echo ready; exec sleep 60", 1, Dir("a"))).ok());
  const auto started = recorder_.WaitStarted(21, 1);
  ASSERT_TRUE(started.has_value());
  ASSERT_TRUE(WaitForFileContaining(Log("a", "algo-1"), "ready"));
  const pid_t pid = started->hosts[0].pid;

  executor->Detach();
  executor->Detach();               // twice is fine
  executor->Stop(21, 1, 0, kTerm);  // ignored once detached
  EXPECT_EQ(executor->Launch(ShellSpec(22, 1, "true", 1, Dir("b"))).code(),
            StatusCode::kFailedPrecondition);
  executor.reset();

  EXPECT_EQ(::kill(pid, 0), 0);  // the supervisor runs, still our (unreaped) child
  int wstatus = 0;
  EXPECT_EQ(::waitpid(pid, &wstatus, WNOHANG), 0);
  EXPECT_GT(testing::JobPid(Dir("a") + "/algo-1"), 0);
  EXPECT_EQ(::kill(testing::JobPid(Dir("a") + "/algo-1"), 0), 0);  // and the job
  EXPECT_TRUE(recorder_.ended().empty());

  // Killing the job ends its supervisor, which records the signal.
  testing::KillHost(Dir("a") + "/algo-1", pid);
  EXPECT_NE(ReadFile(Dir("a") + "/algo-1/status.json").find("\"signal\":9"), std::string::npos);
}

TEST_F(LocalExecutorTest, DestroyingTheExecutorDetaches) {
  auto& executor = Start();
  ASSERT_TRUE(executor->Launch(ShellSpec(23, 1, "exec sleep 60", 1, Dir("a"))).ok());
  const auto started = recorder_.WaitStarted(23, 1);
  ASSERT_TRUE(started.has_value());
  const pid_t pid = started->hosts[0].pid;
  executor.reset();
  EXPECT_EQ(::kill(pid, 0), 0);
  testing::KillHost(Dir("a") + "/algo-1", pid);
  EXPECT_TRUE(recorder_.ended().empty());
}

TEST_F(LocalExecutorTest, ManyShortAttemptsAllEnd) {
  auto& executor = Start();
  constexpr int kAttempts = 20;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    ASSERT_TRUE(executor
                    ->Launch(ShellSpec(24, attempt, "exit $((${SM_CURRENT_HOST#algo-} - 1))", 2,
                                       Dir("m" + std::to_string(attempt))))
                    .ok());
  }
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    const auto exit = recorder_.WaitEnded(24, attempt);
    ASSERT_TRUE(exit.has_value()) << attempt;
    ASSERT_EQ(exit->exit_codes.size(), 2U);
    // algo-1 may be stopped by the failure of algo-2 before it exits 0.
    EXPECT_TRUE(exit->exit_codes[0] == 0 || exit->exit_codes[0] == -SIGTERM);
    EXPECT_EQ(exit->exit_codes[1], 1);
    EXPECT_EQ(exit->reason, kReasonPrefix + "algo-2 exited with code 1");
  }
}

}  // namespace
}  // namespace allot::exec
