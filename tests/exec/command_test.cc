// RunCommand: argv only, output captured, a deadline that kills what the command started.

#include "exec/command.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

namespace allot::exec {
namespace {

TEST(RunCommandTest, CapturesOutputAndExitCode) {
  Result<CommandOutput> out =
      RunCommand({.argv = {"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(out->out, "out\n");
  EXPECT_EQ(out->err, "err\n");
  EXPECT_EQ(out->exit_code, 3);
}

TEST(RunCommandTest, NoShellBetweenArguments) {
  Result<CommandOutput> out = RunCommand({.argv = {"/bin/echo", "a; rm -rf /", "$HOME"}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->out, "a; rm -rf / $HOME\n");
}

TEST(RunCommandTest, EnvironmentIsAddedToOurs) {
  Result<CommandOutput> out = RunCommand({.argv = {"/bin/sh", "-c", "printf %s \"$SLURM_CONF\""},
                                          .environment = {{"SLURM_CONF", "/x"}}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->out, "/x");
}

TEST(RunCommandTest, WithoutInheritingTheEnvironmentIsTheCommandsWhole) {
  ::setenv("ALLOT_TEST_OURS", "ours", 1);
  Result<CommandOutput> out = RunCommand(
      {.argv = {"/usr/bin/env"}, .environment = {{"ONLY", "this"}}, .inherit_environment = false});
  ::unsetenv("ALLOT_TEST_OURS");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->out, "ONLY=this\n");
}

TEST(RunCommandTest, MissingProgramIsNotFound) {
  Result<CommandOutput> out = RunCommand({.argv = {"no-such-program-allot"}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kNotFound);
  EXPECT_NE(out.status().message().find("no-such-program-allot"), std::string::npos);
}

TEST(RunCommandTest, DeadlineKillsTheCommandAndWhatItStarted) {
  const auto start = std::chrono::steady_clock::now();
  // The grandchild holds the pipe open: only killing the whole group ends the wait.
  Result<CommandOutput> out =
      RunCommand({.argv = {"/bin/sh", "-c", "sleep 30 & sleep 30"}, .timeout = 300});
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(out.status().message().find("did not finish"), std::string::npos);
  EXPECT_LT(took, std::chrono::seconds(10));
}

}  // namespace
}  // namespace allot::exec
