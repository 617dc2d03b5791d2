// Process identity: pid and start time (env/process.h).

#include "env/process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

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

namespace allot::env {
namespace {

// The processes of a user, as the eviction's measure finds a sandboxed share's: this one is among
// its own user's, and among no other user's.
TEST(ProcessTest, ProcessesOfUserListTheUsersOwn) {
  const std::vector<pid_t> mine = ProcessesOfUser(::geteuid());
  EXPECT_TRUE(std::binary_search(mine.begin(), mine.end(), ::getpid()));
  EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
  const std::vector<pid_t> nobody = ProcessesOfUser(::geteuid() == 65534 ? 65533 : 65534);
  EXPECT_FALSE(std::binary_search(nobody.begin(), nobody.end(), ::getpid()));
}

}  // namespace
}  // namespace allot::env
