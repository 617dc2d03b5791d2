// How a Slurm attempt's end is told to the server (MakeSlurmExit): Slurm's own doing is named as
// such; otherwise the host that failed on its own, as the local executor does.

#include "exec/slurm_attempt.h"

#include <gtest/gtest.h>

#include <string>

namespace allot::exec {
namespace {

constexpr char kAlgorithm[] = "Received status from SageMaker: AlgorithmError: ";

SlurmAttempt TwoHosts(std::optional<int> first, std::optional<int> second) {
  SlurmAttempt a;
  a.job = 7;
  a.attempt = 1;
  a.slurm_id = "42";
  a.started = true;
  a.state = "COMPLETED";
  a.hosts = {SlurmHost{.dir = "/nonexistent/algo-1", .node = "n1", .exit_code = first},
             SlurmHost{.dir = "/nonexistent/algo-2", .node = "n2", .exit_code = second}};
  return a;
}

TEST(SlurmExitTest, EveryHostExitingZeroSucceeds) {
  const AttemptExit exit = MakeSlurmExit(TwoHosts(0, 0));
  EXPECT_TRUE(exit.succeeded);
  EXPECT_EQ(exit.job, 7);
  EXPECT_EQ(exit.exit_codes, (std::vector<int>{0, 0}));
  EXPECT_EQ(exit.reason, "");
}

TEST(SlurmExitTest, TheHostThatFailedOnItsOwnIsNamed) {
  SlurmAttempt a = TwoHosts(143, 3);
  a.state = "FAILED";
  a.stopping = true;  // the executor stopped algo-1 because algo-2 failed
  a.signalled = true;
  a.hosts[1].failed_on_its_own = true;
  const AttemptExit exit = MakeSlurmExit(a);
  EXPECT_FALSE(exit.succeeded);
  EXPECT_EQ(exit.reason, std::string(kAlgorithm) + "algo-2 exited with code 3");
}

TEST(SlurmExitTest, ADeadNodeIsNodeFailOnThatNode) {
  SlurmAttempt a = TwoHosts(143, std::nullopt);
  a.state = "NODE_FAIL";
  EXPECT_EQ(MakeSlurmExit(a).reason,
            std::string(kPlatformError) + "Slurm job 42 ended with NODE_FAIL on n2");
}

TEST(SlurmExitTest, ANodeSeenNotRespondingIsNamedWhenSlurmSaidFailed) {
  SlurmAttempt a = TwoHosts(std::nullopt, std::nullopt);
  a.state = "FAILED";
  a.failed_node = "n2";
  EXPECT_NE(MakeSlurmExit(a).reason.find("node n2 stopped responding (NODE_FAIL on n2)"),
            std::string::npos);
}

TEST(SlurmExitTest, AnOutsideScancelIsSaid) {
  SlurmAttempt a = TwoHosts(-15, -15);
  a.state = "CANCELLED";
  EXPECT_EQ(MakeSlurmExit(a).reason,
            std::string(kPlatformError) + "Slurm job 42 was cancelled outside Allot (scancel)");
}

TEST(SlurmExitTest, AllotsOwnCancelIsNotCalledOutside) {
  SlurmAttempt a = TwoHosts(-9, -9);
  a.state = "CANCELLED";
  a.stopping = true;
  a.signalled = true;
  a.cancelled = true;
  EXPECT_EQ(MakeSlurmExit(a).reason, std::string(kAlgorithm) + "algo-1 was killed by signal 9");
}

TEST(SlurmExitTest, ASlurmLimitIsSaid) {
  SlurmAttempt a = TwoHosts(std::nullopt, std::nullopt);
  a.state = "TIMEOUT";
  EXPECT_EQ(MakeSlurmExit(a).reason,
            std::string(kPlatformError) + "Slurm job 42 ended with TIMEOUT (Slurm's own limit)");
}

TEST(SlurmExitTest, AJobSlurmWillNeverStartIsSaid) {
  SlurmAttempt a = TwoHosts(std::nullopt, std::nullopt);
  a.started = false;
  a.state = "CANCELLED";
  a.cancelled = true;
  a.hopeless = "PartitionConfig";
  const AttemptExit exit = MakeSlurmExit(a);
  EXPECT_FALSE(exit.succeeded);
  EXPECT_NE(exit.reason.find("Slurm cannot run job 42: it waited with reason PartitionConfig"),
            std::string::npos);
  EXPECT_TRUE(HopelessPendingReason("PartitionConfig"));
  EXPECT_TRUE(HopelessPendingReason("BadConstraints"));
  EXPECT_FALSE(HopelessPendingReason("Resources"));
  EXPECT_FALSE(HopelessPendingReason("Priority"));
}

TEST(SlurmExitTest, AStopBeforeSlurmStartedIt) {
  SlurmAttempt a = TwoHosts(std::nullopt, std::nullopt);
  a.started = false;
  a.stopping = true;
  a.cancelled = true;
  a.state = "CANCELLED";
  EXPECT_EQ(MakeSlurmExit(a).reason,
            std::string(kPlatformError) + "stopped before Slurm started it");
}

TEST(SlurmExitTest, ALaunchErrorOnANodeIsItsReason) {
  SlurmAttempt a = TwoHosts(0, 127);
  a.state = "FAILED";
  a.hosts[1].launch_error = "cannot start algo-2 on node n2: no bubblewrap";
  a.hosts[1].failed_on_its_own = true;
  EXPECT_EQ(MakeSlurmExit(a).reason,
            std::string(kPlatformError) + "cannot start algo-2 on node n2: no bubblewrap");
}

}  // namespace
}  // namespace allot::exec
