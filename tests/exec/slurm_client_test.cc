// The command-line Slurm client against a stand-in sbatch that records what it was given: the
// parsers have their own tests (slurm_parse_test.cc), the real cluster the integration suites.

#include "exec/slurm_client.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/strings.h"
#include "support/exec_testing.h"

namespace allot::exec {
namespace {

using testing::ReadFile;
using testing::ScratchDir;
using testing::WriteFile;

// Sets an environment variable of this process for one test, and puts back what it was.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name) {
    if (const char* before = std::getenv(name)) before_ = before;
    ::setenv(name, value, 1);
  }
  ~ScopedVariable() {
    if (before_) {
      ::setenv(name_, before_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  const char* name_;
  std::optional<std::string> before_;
};

// `sbatch` in `dir` that writes the environment it was started with (not what the shell adds)
// and its arguments beside itself, and prints a job id.
void WriteRecordingSbatch(const std::string& dir) {
  const std::string path = dir + "/sbatch";
  WriteFile(path,
            "#!/bin/sh\n"
            "/usr/bin/tr '\\0' '\\n' < /proc/$$/environ > \"$(/usr/bin/dirname \"$0\")/env\"\n"
            "printf '%s\\n' \"$@\" > \"$(/usr/bin/dirname \"$0\")/args\"\n"
            "echo '42;cluster'\n");
  ASSERT_EQ(::chmod(path.c_str(), 0755), 0);
}

std::map<std::string, std::string> ParseEnv(std::string_view text) {
  std::map<std::string, std::string> env;
  for (std::string_view line : Split(text, '\n')) {
    const std::size_t eq = line.find('=');
    if (eq != std::string_view::npos) env.emplace(line.substr(0, eq), line.substr(eq + 1));
  }
  return env;
}

// With --export=NONE (or a list of names), sbatch has slurmd run a login shell of the job's
// user on the node for every job, to build its environment: the job is submitted with
// --export=ALL, and sbatch gets an environment made for the job, holding none of the server's
// own variables.
TEST(SlurmCliTest, SubmitGivesTheJobSlurmsVariablesAndPathOnly) {
  ScratchDir bin;
  WriteRecordingSbatch(bin.path());
  ScopedVariable secret("ALLOT_TEST_SERVER_SECRET", "must-not-reach-the-job");
  ScopedVariable home("HOME", "/root-of-the-server");
  ScopedVariable slurm("SLURM_ALLOT_TEST", "kept");
  ScopedVariable sbatch("SBATCH_ALLOT_TEST", "kept too");
  std::unique_ptr<SlurmClient> client =
      NewSlurmCli({.slurm_conf = "/etc/allot-test/slurm.conf", .bin_dir = bin.path()});

  Result<std::string> id = client->Submit(
      {.script_path = "/shared/a/batch.sh", .name = "train", .comment = "job-1", .partition = "p"});

  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_EQ(*id, "42");
  const std::string args = ReadFile(bin.path() + "/args");
  EXPECT_NE(args.find("\n--export=ALL\n"), std::string::npos) << args;
  EXPECT_EQ(args.find("--export=NONE"), std::string::npos) << args;
  EXPECT_TRUE(args.ends_with("--no-requeue\n--export=ALL\n/shared/a/batch.sh\n")) << args;

  const std::map<std::string, std::string> env = ParseEnv(ReadFile(bin.path() + "/env"));
  EXPECT_EQ(env.count("ALLOT_TEST_SERVER_SECRET"), 0U);
  EXPECT_EQ(env.count("HOME"), 0U);
  EXPECT_EQ(env.at("SLURM_CONF"), "/etc/allot-test/slurm.conf");
  EXPECT_EQ(env.at("SLURM_ALLOT_TEST"), "kept");
  EXPECT_EQ(env.at("SBATCH_ALLOT_TEST"), "kept too");
  EXPECT_EQ(env.at("PATH"),
            std::getenv("PATH") != nullptr ? std::getenv("PATH") : "/usr/local/bin:/usr/bin:/bin");
  for (const auto& [name, value] : env) {
    const bool allowed = name == "PATH" || name == "LD_LIBRARY_PATH" ||
                         name.starts_with("SLURM_") || name.starts_with("SBATCH_");
    EXPECT_TRUE(allowed) << name << "=" << value << " reached sbatch";
  }
}

// The other commands (squeue, scancel, ...) run in the server's environment, as before.
TEST(SlurmCliTest, OtherCommandsKeepTheServersEnvironment) {
  ScratchDir bin;
  const std::string path = bin.path() + "/scancel";
  WriteFile(path, "#!/bin/sh\n/usr/bin/env > \"$(/usr/bin/dirname \"$0\")/env\"\n");
  ASSERT_EQ(::chmod(path.c_str(), 0755), 0);
  ScopedVariable home("HOME", "/root-of-the-server");
  std::unique_ptr<SlurmClient> client = NewSlurmCli({.bin_dir = bin.path()});

  ASSERT_TRUE(client->Cancel("42").ok());

  EXPECT_EQ(ParseEnv(ReadFile(bin.path() + "/env")).at("HOME"), "/root-of-the-server");
}

}  // namespace
}  // namespace allot::exec
