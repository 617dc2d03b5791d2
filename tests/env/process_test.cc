// Process identity: pid and start time (env/process.h).

#include "env/process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace allot::env {
namespace {

TEST(ProcessTest, StartTimesTellProcessesApart) {
  const auto mine = RunningStartTime(::getpid());
  ASSERT_TRUE(mine.has_value());
  EXPECT_EQ(StartTime(::getpid()), mine);
  EXPECT_TRUE(SameProcessRunning(::getpid(), *mine));
  EXPECT_FALSE(SameProcessRunning(::getpid(), *mine + 1));
  EXPECT_FALSE(RunningStartTime(0).has_value());
  EXPECT_FALSE(RunningStartTime(-1).has_value());
}

TEST(ProcessTest, AZombieHasAStartTimeButDoesNotRun) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  // Until reaped the child is a zombie.
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT) < 0 &&
         errno == EINTR) {
  }
  EXPECT_TRUE(StartTime(child).has_value());
  EXPECT_FALSE(RunningStartTime(child).has_value());
  while (::waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
  }
  EXPECT_FALSE(StartTime(child).has_value());
}

}  // namespace
}  // namespace allot::env
