// The supervisor (`allot __supervise`), its files, and what the local executor builds on them:
// stop reasons, a grace that holds without a server, adoption after a restart, vanished hosts,
// checkpoint reports.

#include "exec/supervisor.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "env/process.h"
#include "exec/host_files.h"
#include "exec/local_executor.h"
#include "exec/sandbox.h"
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

TEST(HostFiles, StringsRoundTripAndOldFilesStillRead) {
  ScratchDir dir;
  ASSERT_TRUE(WriteStopRequest(dir.path(), {"a \"quoted\"\nline", -5}).ok());
  const auto stop = ReadStopRequest(dir.path());
  ASSERT_TRUE(stop.ok()) << stop.status().message();
  EXPECT_EQ(stop->reason, "a \"quoted\"\nline");
  EXPECT_EQ(stop->grace_ms, -5);
  // As the hand-written writer wrote them: strings first, then numbers.
  WriteFile(dir.path() + "/supervisor.json",
            "{\"output_dir\":\"/o\\\"ut\",\"child_pid\":56,\"child_start_time\":78,"
            "\"pid\":12,\"start_time\":34}\n");
  const auto record = ReadSupervisorRecord(dir.path());
  ASSERT_TRUE(record.ok()) << record.status().message();
  EXPECT_EQ(record->pid, 12);
  EXPECT_EQ(record->child_start_time, 78U);
  EXPECT_EQ(record->output_dir, "/o\"ut");
  WriteFile(dir.path() + "/status.json", "{\"ended_at\":2,\"exit_code\":0,\"started_at\":1}\n");
  EXPECT_EQ(ReadHostStatus(dir.path())->ended_at, 2);
}

TEST(HostFiles, MalformedFilesAreErrorsNotExceptions) {
  ScratchDir dir;
  const std::string kMalformed[] = {
      "",
      "{",
      "[1,2]",
      "null",
      "{\"a\":1} x",
      "\xff\xfe{}",
      "{\"pid\":\"12\"}",
      "{\"exit_code\":1.5,\"pid\":1e999,\"reason\":7,\"grace_ms\":\"1\"}",
      "{\"exit_code\":99999999999,\"pid\":-3,\"start_time\":-1,\"grace_ms\":true}",
      std::string(100000, '[') + std::string(100000, ']')};
  for (const std::string& text : kMalformed) {
    SCOPED_TRACE(text.substr(0, 40));
    for (const char* name : {"supervisor.json", "status.json", "stop.json"}) {
      WriteFile(dir.path() + "/" + name, text);
    }
    EXPECT_EQ(ReadSupervisorRecord(dir.path()).status().code(), StatusCode::kInternal);
    EXPECT_EQ(ReadHostStatus(dir.path()).status().code(), StatusCode::kInternal);
    EXPECT_EQ(ReadStopRequest(dir.path()).status().code(), StatusCode::kInternal);
  }
  EXPECT_EQ(ReadHostStatus(dir.path() + "/none").status().code(), StatusCode::kNotFound);
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

// ---------------------------------------------------------------------------------------------
// The supervisor on its own.

class SupervisorTest : public ::testing::Test {
 protected:
  // Starts `exec_supervise_main __supervise --dir D --output-dir D/out <extra> -- sh -c script`.
  pid_t Supervise(const std::string& script, std::vector<std::string> extra = {}) {
    return SuperviseCommand({"/bin/sh", "-c", script}, std::move(extra));
  }
  pid_t SuperviseCommand(const std::vector<std::string>& command, std::vector<std::string> extra) {
    SpawnRequest request;
    request.argv = {testing::SupervisorExe(), "__supervise", "--dir", dir_.path(),
                    "--output-dir",           Out()};
    request.argv.insert(request.argv.end(), extra.begin(), extra.end());
    request.argv.emplace_back("--");
    request.argv.insert(request.argv.end(), command.begin(), command.end());
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
  const pid_t pid = Supervise("trap 'echo reason=$(cat " + Out() +
                              "/stop-reason); exit 0' TERM; echo ready; "
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

// bwrap with the machine's system directories, `source` at /data read-only, running `script`.
std::vector<std::string> BwrapReading(const std::string& source, const std::string& script) {
  std::vector<std::string> args = {LayoutOptions{}.bwrap, "--proc", "/proc", "--dev", "/dev"};
  for (const RootEntry& entry : SystemRootEntries()) {
    if (entry.link_target.empty()) {
      args.insert(args.end(), {"--ro-bind", "/" + entry.name, "/" + entry.name});
    } else {
      args.insert(args.end(), {"--symlink", entry.link_target, "/" + entry.name});
    }
  }
  args.insert(args.end(), {"--ro-bind", source, "/data", "--", "/bin/sh", "-c", script});
  return args;
}

// The supervisor's test tree: a channel directory holding "mine" and another holding "theirs".
class ChannelBindTest : public SupervisorTest {
 protected:
  void SetUp() override {
    if (!SandboxAvailable(LayoutOptions{})) GTEST_SKIP() << "bubblewrap does not work here";
    std::filesystem::create_directory(channel_);
    std::filesystem::create_directory(secret_);
    WriteFile(channel_ + "/mine", "");
    WriteFile(secret_ + "/theirs", "");
  }
  std::string Stderr() const { return ReadFile(dir_.path() + "/stderr"); }

  const std::string channel_ = dir_.path() + "/train";
  const std::string secret_ = dir_.path() + "/secret";
  const std::vector<std::string> extra_ = {"--sandboxed", "--bind-by-fd", channel_};
};

// A channel's directory is bound from a descriptor the supervisor opened; bwrap closes it, so it
// does not reach the job.
TEST_F(ChannelBindTest, AChannelIsBoundFromADescriptorThatDoesNotReachTheJob) {
  const auto command = BwrapReading(channel_, "ls /data; echo fds $(ls /proc/self/fd)");
  ASSERT_EQ(Wait(SuperviseCommand(command, extra_)), 0) << Stderr();
  EXPECT_EQ(ReadHostStatus(dir_.path())->exit_code, 0) << Stderr();
  EXPECT_EQ(ReadFile(Stdout()), "mine\nfds 0 1 2 3\n");  // 3: ls's own, of /proc/self/fd
}

// A symbolic link put on the channel's path after the server checked it (under Slurm, hours
// before the start) is refused, not followed to where it leads.
TEST_F(ChannelBindTest, ALinkPutOnTheChannelsPathBeforeTheStartIsRefused) {
  std::filesystem::rename(channel_, channel_ + ".moved");
  std::filesystem::create_directory_symlink(secret_, channel_);
  EXPECT_EQ(Wait(SuperviseCommand(BwrapReading(channel_, "ls /data"), extra_)), 127);
  EXPECT_FALSE(ReadHostStatus(dir_.path()).ok());  // nothing ran
  EXPECT_EQ(ReadFile(Stdout()).find("theirs"), std::string::npos);
  EXPECT_NE(Stderr().find("is no longer the one the server checked"), std::string::npos)
      << Stderr();
}

// A link swapped in after the supervisor opened the directory, just before bwrap mounts it (a
// shell runs between the two and swaps it), changes nothing: bwrap mounts what the descriptor
// holds. By name, the job would list "theirs".
TEST_F(ChannelBindTest, ALinkSwappedInAfterTheSupervisorOpenedTheChannelChangesNothing) {
  std::vector<std::string> command = {"/bin/sh", "-c",
                                      "mv '" + channel_ + "' '" + channel_ + ".moved' && ln -s '" +
                                          secret_ + "' '" + channel_ + "' && exec \"$@\"",
                                      "sh"};
  const auto bwrap = BwrapReading(channel_, "ls /data");
  command.insert(command.end(), bwrap.begin(), bwrap.end());
  ASSERT_EQ(Wait(SuperviseCommand(command, extra_)), 0) << Stderr();
  EXPECT_TRUE(std::filesystem::is_symlink(channel_));  // the swap happened
  EXPECT_EQ(ReadHostStatus(dir_.path())->exit_code, 0) << Stderr();
  EXPECT_EQ(ReadFile(Stdout()), "mine\n");
}

// Two channels of one directory: each bind gets a descriptor of its own (bwrap closes each).
TEST_F(ChannelBindTest, TwoChannelsOfOneDirectoryAreBothBound) {
  std::vector<std::string> command = BwrapReading(channel_, "ls /data /data2");
  const auto tail = std::find(command.begin() + 1, command.end(), "--");
  command.insert(tail, {"--ro-bind", channel_, "/data2"});
  std::vector<std::string> extra = extra_;
  extra.insert(extra.end(), {"--bind-by-fd", channel_});
  ASSERT_EQ(Wait(SuperviseCommand(command, extra)), 0) << Stderr();
  EXPECT_EQ(ReadHostStatus(dir_.path())->exit_code, 0) << Stderr();
  EXPECT_EQ(ReadFile(Stdout()), "/data:\nmine\n\n/data2:\nmine\n");
}

// --bind-as: the channel is opened as the job's user. Below a directory that user may not pass
// (a team's 0700 directory under a file root) it is not bound, although the supervisor is root
// and the channel itself is world-readable; once the directory lets others through, it is.
TEST_F(ChannelBindTest, AChannelBelowADirectoryTheJobsUserMayNotPassIsNotBound) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: the supervisor takes the job's user";
  std::vector<std::string> extra = extra_;
  extra.insert(extra.end(), {"--bind-as", "200123:200123"});
  const auto command = BwrapReading(channel_, "ls /data");
  for (const auto mode : {std::filesystem::perms::owner_all,
                          std::filesystem::perms::owner_all | std::filesystem::perms::group_all}) {
    // 0700, then 0770 of root's group: root's own groups are dropped with its uid.
    std::filesystem::permissions(dir_.path(), mode);
    ASSERT_EQ(::chown(dir_.path().c_str(), 0, 0), 0);
    EXPECT_EQ(Wait(SuperviseCommand(command, extra)), 127) << static_cast<int>(mode);
    EXPECT_FALSE(ReadHostStatus(dir_.path()).ok());  // nothing ran
    EXPECT_NE(Stderr().find("the job's user (uid 200123) may not reach the channel directory '" +
                            channel_ + "'"),
              std::string::npos)
        << Stderr();
    EXPECT_EQ(ReadFile(Stdout()), "");
  }
  std::filesystem::permissions(
      dir_.path(), std::filesystem::perms::owner_all | std::filesystem::perms::others_exec);
  ASSERT_EQ(Wait(SuperviseCommand(command, extra)), 0) << Stderr();
  EXPECT_EQ(ReadHostStatus(dir_.path())->exit_code, 0) << Stderr();
  EXPECT_EQ(ReadFile(Stdout()), "mine\n");
}

// A --bind-as that is not two numbers, or names root, is refused as a bad argument.
TEST_F(ChannelBindTest, ABindAsThatIsNotAUserIsRefused) {
  for (const char* user : {"200123", "0:200123", "200123:0", "x:1", "1:2:3", ""}) {
    std::vector<std::string> extra = extra_;
    extra.insert(extra.end(), {"--bind-as", user});
    EXPECT_EQ(Wait(SuperviseCommand(BwrapReading(channel_, "ls /data"), extra)), 2) << user;
  }
}

// keep_fds: the program inherits each at its number; 0-2, or 3 beside pass_fd, are refused.
TEST(SpawnTest, KeptDescriptorsAreInheritedAtTheirNumbers) {
  ScratchDir dir;
  const int kept = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int moved = ::fcntl(kept, F_DUPFD_CLOEXEC, 20);
  ::close(kept);
  ASSERT_GE(moved, 20);
  SpawnRequest request;
  request.argv = {"/bin/sh", "-c", "test -e /proc/self/fd/" + std::to_string(moved)};
  request.environment = CurrentEnvironment();
  request.keep_fds = {moved};
  Result<pid_t> pid = SpawnProcess(request);
  ASSERT_TRUE(pid.ok()) << pid.status().message();
  int wstatus = 0;
  ASSERT_EQ(::waitpid(*pid, &wstatus, 0), *pid);
  EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) << wstatus;
  request.keep_fds.clear();  // without it, the close-on-exec descriptor is gone
  pid = SpawnProcess(request);
  ASSERT_TRUE(pid.ok());
  ASSERT_EQ(::waitpid(*pid, &wstatus, 0), *pid);
  EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 1) << wstatus;
  ::close(moved);

  for (const int fd : {0, 2}) {
    request.keep_fds = {fd};
    EXPECT_EQ(SpawnProcess(request).status().code(), StatusCode::kInvalidArgument) << fd;
  }
  request.keep_fds = {3};
  request.pass_fd = 4;
  EXPECT_EQ(SpawnProcess(request).status().code(), StatusCode::kInvalidArgument);
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
  static AdoptSpec AdoptOf(const LaunchSpec& spec, std::vector<HostProcess> recorded = {}) {
    return AdoptSpec{spec.job,           spec.attempt,
                     spec.attempt_dir,   spec.instance_count,
                     spec.job_dir,       spec.checkpoint_sync_dir,
                     std::move(recorded)};
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
  ASSERT_TRUE(executor->Launch(ShellSpec(5, 1, "echo ready; exec sleep 60", 1, Dir("a"))).ok());
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
  const std::uint64_t mine = env::RunningStartTime(::getpid()).value_or(0);
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

// The disk limit (sandbox.h JobLimits): the host's logs count, no single file outgrows it, what
// a job leaves at its end counts, and so does the number of files.
class DiskLimitTest : public SupervisedTest {
 protected:
  // Runs `script` as job `job` under `limits`; how its attempt ended.
  AttemptExit RunLimited(model::JobId job, const std::string& script, const JobLimits& limits,
                         const std::string& attempt_dir = "a") {
    auto executor = New(a_);
    LaunchSpec spec = ShellSpec(job, 1, script, 1, Dir(attempt_dir));
    spec.limits = limits;
    EXPECT_TRUE(executor->Launch(spec).ok());
    const auto exit = a_.WaitEnded(job, 1);
    EXPECT_TRUE(exit.has_value());
    return exit.value_or(AttemptExit{});
  }
  static std::string Exceeded(const std::string& limit) {
    return kReasonPrefix + "algo-1 exceeded its " + limit +
           " in /opt/ml, its logs and its checkpoint directory";
  }
  // The attempt failed for being over `limit` ("disk limit of 1 MiB").
  static void ExpectOver(const AttemptExit& exit, const std::string& limit) {
    EXPECT_FALSE(exit.succeeded);
    EXPECT_EQ(exit.reason, Exceeded(limit));
  }
};

TEST_F(DiskLimitTest, TheLogCountsAndNoFileOutgrowsTheLimit) {
  const AttemptExit exit = RunLimited(15, "head -c 3000000 /dev/zero; echo head=$? >&2; sleep 30",
                                      {.disk_bytes = 1 << 20});
  ExpectOver(exit, "disk limit of 1 MiB");
  // head died of SIGXFSZ (128 + 25) at the limit, not at 3 MB.
  EXPECT_NE(ReadFile(Host("a") + "/stderr").find("head=153"), std::string::npos)
      << ReadFile(Host("a") + "/stderr");
  EXPECT_EQ(std::filesystem::file_size(Host("a") + "/stdout"), std::uintmax_t{1} << 20);
}

TEST_F(DiskLimitTest, WhatAJobLeavesAtItsEndCounts) {
  // Three files, each under the limit, written and left before the first check (2 s).
  const AttemptExit exit = RunLimited(
      16, "for i in 1 2 3; do head -c 900000 /dev/zero > \"$SM_MODEL_DIR/f$i\"; done; exit 0",
      {.disk_bytes = 1 << 20});
  ExpectOver(exit, "disk limit of 1 MiB");
  EXPECT_NE(ReadFile(Host("a") + "/status.json").find("\"exit_code\":1"), std::string::npos);
}

// A job that exits 0 while a check finds it over its limit: the check's kill comes too late to
// fail it, and the end's check had nothing new to say, so it succeeded (once in a fresh clone's
// run of test_hostile_jobs). Made certain here: the job waits until the check opens its model
// directory, then exits at once, while the check still walks 5,000 empty files before it
// reaches the files that put the job over its limit, two levels down.
TEST_F(DiskLimitTest, AJobThatExitsZeroWhileACheckFindsItOverItsLimitFails) {
  const std::string job =
      "import ctypes, os\n"
      "m = os.environ['SM_MODEL_DIR']\n"
      "os.makedirs(m + '/x/y')\n"
      "for i in range(3):\n"
      "    with open(f'{m}/x/y/big{i}', 'wb') as f: f.write(b'z' * 500000)\n"
      "for i in range(5000): open(f'{m}/e{i}', 'w').close()\n"
      "libc = ctypes.CDLL(None, use_errno=True)\n"
      "fd = libc.inotify_init1(0)\n"
      "assert libc.inotify_add_watch(fd, m.encode(), 0x20) >= 0  # IN_OPEN\n"
      "os.read(fd, 4096)\n"
      "os._exit(0)\n";
  WriteFile(Dir("race.py"), job);
  const AttemptExit exit =
      RunLimited(22, "exec python3 " + Dir("race.py"), {.disk_bytes = 1 << 20});
  ExpectOver(exit, "disk limit of 1 MiB");
  // 1 (its 0, failed at the end), or SIGKILL's where the check's kill came first after all.
  EXPECT_EQ(ReadFile(Host("a") + "/status.json").find("\"exit_code\":0"), std::string::npos)
      << ReadFile(Host("a") + "/status.json");
}

// In the checkpoint directory a sparse file counts its length, not the blocks it holds: its
// copies' budget goes by length, so the job learns at once what would not be saved. Three holes
// of 900 kB under a limit of 1 MiB take no disk, and fail the job there; in /opt/ml/model (a
// database mapped with a large size, say) they count what they take.
TEST_F(DiskLimitTest, ASparseFileCountsItsLengthInTheCheckpointDirectoryAlone) {
  const AttemptExit in_checkpoints = RunLimited(
      23, "for i in 1 2 3; do truncate -s 900K \"$ALLOT_CHECKPOINT_DIR/s$i\"; done; exit 0",
      {.disk_bytes = 1 << 20});
  ExpectOver(in_checkpoints, "disk limit of 1 MiB");
  const AttemptExit in_model =
      RunLimited(24, "for i in 1 2 3; do truncate -s 900K \"$SM_MODEL_DIR/s$i\"; done; exit 0",
                 {.disk_bytes = 1 << 20}, "b");
  EXPECT_TRUE(in_model.succeeded) << in_model.reason;
}

TEST_F(DiskLimitTest, TheNumberOfFilesIsLimitedToo) {
  const AttemptExit exit = RunLimited(
      17, "mkdir \"$SM_MODEL_DIR/m\"; for i in $(seq 300); do : > \"$SM_MODEL_DIR/m/$i\"; done",
      {.files = 100});
  ExpectOver(exit, "limit of 100 files");
}

// Files deleted but held open take the disk until they are closed, and no walk sees them: three
// of 600 kB (each under the limit, together over it) held by a job that then sleeps. At the end
// the files are gone, so only a check while the job runs can catch it.
TEST_F(DiskLimitTest, FilesDeletedButHeldOpenCount) {
  const AttemptExit exit = RunLimited(
      20,
      "cd \"$SM_MODEL_DIR\"; for i in 3 4 5; do head -c 600000 /dev/urandom > h$i; done; "
      "exec 3<h3 4<h4 5<h5; rm h3 h4 h5; sleep 30",
      {.disk_bytes = 1 << 20});
  ExpectOver(exit, "disk limit of 1 MiB");
}

// A daemon that left the job's process tree (a double fork, a session of its own) still holds
// what it holds: with cgroups, it stays in the job's group, whose members count.
TEST_F(DiskLimitTest, FilesHeldByADaemonThatLeftTheTreeCount) {
  if (PlanOwnCgroups("probe", {.memory_bytes = 1 << 30}).kind == CgroupKind::kNone) {
    GTEST_SKIP() << "no cgroup hierarchy for the memory limit here";
  }
  const AttemptExit exit = RunLimited(
      21,
      "cd \"$SM_MODEL_DIR\"; for i in 3 4 5; do head -c 600000 /dev/urandom > d$i; done; "
      "(setsid sh -c 'exec 3<d3 4<d4 5<d5; rm d3 d4 d5; sleep 30' </dev/null >/dev/null 2>&1 &); "
      "sleep 30",
      {.memory_bytes = 1 << 30, .disk_bytes = 1 << 20});
  ExpectOver(exit, "disk limit of 1 MiB");
}

// A chain of directories deeper than the walk goes is not room to hide files in.
TEST_F(DiskLimitTest, ATreeTooDeepToCountIsOverTheLimit) {
  const AttemptExit exit = RunLimited(
      19, "d=\"$SM_MODEL_DIR\"; for i in $(seq 300); do d=\"$d/d\"; mkdir \"$d\"; done; exit 0",
      {.disk_bytes = 1 << 30});
  EXPECT_FALSE(exit.succeeded);
  EXPECT_NE(exit.reason.find("has directories deeper than 256 levels"), std::string::npos)
      << exit.reason;
}

TEST_F(DiskLimitTest, AJobWithinItsLimitsSucceeds) {
  const AttemptExit exit =
      RunLimited(18, "head -c 100000 /dev/zero > \"$SM_MODEL_DIR/f\"; echo done",
                 {.disk_bytes = 1 << 20, .files = 100});
  EXPECT_TRUE(exit.succeeded) << exit.reason;
}

TEST_F(SupervisedTest, CheckpointsWrittenByTheJobAreReported) {
  auto executor = New(a_);
  const std::string go = Dir("go");
  const LaunchSpec spec = ShellSpec(9, 1,
                                    "echo step > \"$ALLOT_CHECKPOINT_DIR/step-1\"; echo ready; "
                                    "until [ -e " +
                                        go + " ]; do sleep 0.05; done",
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

// ---------------------------------------------------------------------------------------------
// An exit status that cannot be written at once (issue 9, item 5).

// A tmpfs of 1 MiB mounted at `dir` (and lazily unmounted when the object goes); mounted() is
// false where mounting is not allowed.
class SmallDisk {
 public:
  explicit SmallDisk(const std::string& dir) : dir_(dir) {
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    mounted_ = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=1m") == 0;
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
  bool mounted() const { return mounted_; }

  // Writes <dir>/filler until the disk is full; Free() removes it.
  void Fill() {
    const std::string block(64 * 1024, 'x');
    std::FILE* out = std::fopen(Filler().c_str(), "w");
    if (out == nullptr) return;
    while (std::fwrite(block.data(), 1, block.size(), out) == block.size() &&
           std::fflush(out) == 0) {
    }
    std::fclose(out);
  }
  void Free() {
    std::error_code error;
    std::filesystem::remove(Filler(), error);
  }

 private:
  std::string Filler() const { return dir_ + "/filler"; }

  std::string dir_;
  bool mounted_ = false;
};

// "echo ready", then waits for `go` and exits 0.
std::string ExitZeroOn(const std::string& go) {
  return "echo ready; until [ -e " + go + " ]; do sleep 0.05; done; exit 0";
}

TEST_F(SupervisedTest, AnExitStatusWrittenOnAFullDiskArrivesWhenTheDiskFrees) {
  SmallDisk disk(Dir("disk"));
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (see the next test)";
  auto executor = New(a_);
  const LaunchSpec spec = ShellSpec(11, 1, ExitZeroOn(Dir("go")), 1, Dir("disk") + "/a");
  const std::string host = spec.attempt_dir + "/algo-1";
  ASSERT_TRUE(executor->Launch(spec).ok());
  ASSERT_TRUE(WaitForFileContaining(host + "/stdout", "ready"));
  const pid_t job = JobPid(host);
  ASSERT_GT(job, 0);
  disk.Fill();
  WriteFile(Dir("go"), "");
  ASSERT_TRUE(WaitUntilGone(job));
  // The job exited 0 but status.json cannot be written: the supervisor keeps it and retries.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_TRUE(a_.ended().empty());
  EXPECT_FALSE(std::filesystem::exists(host + "/status.json"));
  disk.Free();
  const auto exit = a_.WaitEnded(11, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->succeeded) << exit->reason;
  EXPECT_EQ(exit->exit_codes, (std::vector<int>{0}));
}

TEST_F(SupervisedTest, AnExitStatusThatCannotBeWrittenIsRetriedNotLost) {
  // Where no tmpfs can be mounted: a non-empty directory named status.json makes the rename fail.
  auto executor = New(a_);
  const LaunchSpec spec = ShellSpec(12, 1, ExitZeroOn(Dir("go")), 1, Dir("a"));
  ASSERT_TRUE(executor->Launch(spec).ok());
  ASSERT_TRUE(WaitForFileContaining(Host("a") + "/stdout", "ready"));
  const pid_t job = JobPid(Host("a"));
  ASSERT_GT(job, 0);
  ASSERT_TRUE(std::filesystem::create_directories(Host("a") + "/status.json/blocker"));
  WriteFile(Dir("go"), "");
  ASSERT_TRUE(WaitUntilGone(job));
  ASSERT_TRUE(WaitForFileContaining(Host("a") + "/stderr", "retrying"));
  EXPECT_TRUE(a_.ended().empty());
  std::filesystem::remove_all(Host("a") + "/status.json");
  const auto exit = a_.WaitEnded(12, 1);
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->succeeded) << exit->reason;
  EXPECT_EQ(ReadHostStatus(Host("a"))->exit_code, 0);
  const std::string stderr_text = ReadFile(Host("a") + "/stderr");
  EXPECT_EQ(stderr_text.find("retrying"), stderr_text.rfind("retrying"));  // said once
}

// ---------------------------------------------------------------------------------------------
// Adopting an attempt whose files are gone (issue 9, items 6 and 7).

TEST_F(SupervisedTest, ARecordedPidThatStartedAtAnotherTimeIsNeverSignalled) {
  // An unrelated process group now holds the pids the server recorded for the attempt.
  SpawnRequest request;
  request.argv = {"/bin/sleep", "60"};
  request.environment = CurrentEnvironment();
  const Result<pid_t> stranger = SpawnProcess(request);
  ASSERT_TRUE(stranger.ok()) << stranger.status().message();
  const std::uint64_t start = env::RunningStartTime(*stranger).value_or(0);
  ASSERT_GT(start, 0U);
  const HostProcess recorded{"algo-1", *stranger, start + 1, *stranger, start + 1};
  auto executor = New(a_);
  // The attempt's directory is gone ...
  EXPECT_EQ(executor->Adopt(AdoptSpec{13, 1, Dir("gone"), 1, "", "", {recorded}}).code(),
            StatusCode::kNotFound);
  // ... or its host's supervisor.json is.
  ASSERT_TRUE(std::filesystem::create_directories(Host("b")));
  ASSERT_TRUE(executor->Adopt(AdoptSpec{13, 2, Dir("b"), 1, "", "", {recorded}}).ok());
  const auto exit = a_.WaitEnded(13, 2);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->reason, HostVanishedReason("algo-1"));
  EXPECT_TRUE(env::SameProcessRunning(*stranger, start));
  ::kill(-*stranger, SIGKILL);
  int wstatus = 0;
  ASSERT_EQ(::waitpid(*stranger, &wstatus, 0), *stranger);
  EXPECT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL);  // it ran until now
}

TEST_F(SupervisedTest, ARemovedAttemptsTrainingProcessesAreKilledByTheirRecordedIdentity) {
  // --no-sandbox: nothing ties the training process to its supervisor but the group it leads.
  auto first = New(a_);
  const LaunchSpec spec =
      ShellSpec(14, 1, "sleep 60 & echo child=$!; echo ready; wait", 2, Dir("a"));
  ASSERT_TRUE(first->Launch(spec).ok());
  const auto started = a_.WaitStarted(14, 1);
  ASSERT_TRUE(started.has_value());
  std::vector<pid_t> training;
  for (int k = 1; k <= 2; ++k) {
    ASSERT_TRUE(WaitForFileContaining(Host("a", k) + "/stdout", "ready"));
    const HostProcess& h = started->hosts[static_cast<std::size_t>(k - 1)];
    EXPECT_EQ(h.child_pid, JobPid(Host("a", k)));
    EXPECT_EQ(h.start_time, env::RunningStartTime(h.pid));
    EXPECT_EQ(h.child_start_time, env::RunningStartTime(h.child_pid));
    training.push_back(h.child_pid);
    const auto child = testing::FindNumber(ReadFile(Host("a", k) + "/stdout"), "child");
    ASSERT_TRUE(child.has_value());
    training.push_back(static_cast<pid_t>(*child));
  }
  first->Detach();
  first.reset();
  std::filesystem::remove_all(Dir("a"));  // while no server ran

  auto second = New(b_);
  EXPECT_EQ(second->Adopt(AdoptOf(spec, started->hosts)).code(), StatusCode::kNotFound);
  for (const pid_t pid : training) EXPECT_TRUE(WaitUntilGone(pid)) << pid;
  for (const HostProcess& host : started->hosts) {  // this test's children
    if (!WaitUntilGone(host.pid)) {
      ADD_FAILURE() << "supervisor " << host.pid << " still runs";
      ::kill(-host.child_pid, SIGKILL);
      ::kill(host.pid, SIGKILL);
    }
    int wstatus = 0;
    ASSERT_EQ(::waitpid(host.pid, &wstatus, 0), host.pid);
    EXPECT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL) << wstatus;
  }
  EXPECT_TRUE(b_.log().empty());
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

// The executor has the supervisor bind each channel from a descriptor, not by its name, and
// checks it as the job's user (root's server: nobody, as the spec names no user): the scratch
// directory, 0700 from mkdtemp, keeps the channel from that user until it lets others through.
// (ChannelBindTest shows the supervisor's own check, which holds when this one passed.)
TEST_F(SupervisedTest, TheSandboxBindsChannelsFromDescriptors) {
  if (!SandboxAvailable(LayoutOptions{})) GTEST_SKIP() << "bubblewrap does not work here";
  std::filesystem::create_directories(Dir("data"));
  WriteFile(Dir("data") + "/a.txt", "hello\n");
  LaunchSpec spec = ShellSpec(
      11, 1, "cat /opt/ml/input/data/train/a.txt; echo ready; while :; do sleep 0.05; done", 1,
      Dir("a"));
  spec.channels = {{"train", Dir("data")}};
  auto executor = NewLocalExecutor(LocalOptions{}, LayoutOptions{}, a_.Callbacks());
  if (::geteuid() == 0) {
    const Status refused = executor->Launch(spec);
    EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition) << refused.message();
    EXPECT_NE(
        refused.message().find("the job's user (uid 65534) may not reach the channel directory '" +
                               Dir("data") + "'"),
        std::string::npos)
        << refused.message();
    std::filesystem::permissions(scratch_.path(), std::filesystem::perms::others_exec,
                                 std::filesystem::perm_options::add);
  }
  ASSERT_TRUE(executor->Launch(spec).ok());
  ASSERT_TRUE(WaitForFileContaining(Host("a") + "/stdout", "ready"))
      << ReadFile(Host("a") + "/stderr");
  const std::string bwrap_args =
      ReadFile("/proc/" + std::to_string(testing::JobPid(Host("a"))) + "/cmdline");
  EXPECT_NE(bwrap_args.find(std::string("--ro-bind-fd\0", 13)), std::string::npos);
  EXPECT_EQ(bwrap_args.find(std::string("--ro-bind\0", 10) + Dir("data") + '\0'),
            std::string::npos);
  if (::geteuid() == 0) {  // the supervisor opened it as the job's user
    const Result<SupervisorRecord> supervisor = ReadSupervisorRecord(Host("a"));
    ASSERT_TRUE(supervisor.ok());
    const std::string supervisor_args =
        ReadFile("/proc/" + std::to_string(supervisor->pid) + "/cmdline");
    EXPECT_NE(supervisor_args.find(std::string("--bind-as") + '\0' + "65534:65534" + '\0'),
              std::string::npos);
  }
  executor->Stop(11, 1, Seconds(600), model::StopKind::kTermination);
  ASSERT_TRUE(a_.WaitEnded(11, 1).has_value());
  EXPECT_EQ(ReadFile(Host("a") + "/stdout").find("hello"), 0U);
}

}  // namespace
}  // namespace allot::exec
