#include "exec/sagemaker_layout.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace allot::exec {
namespace {

namespace fs = std::filesystem;

// A fresh directory, removed with everything in it at the end.
class Scratch {
 public:
  Scratch() {
    std::string templ = (fs::temp_directory_path() / "allot-layout-XXXXXX").string();
    if (::mkdtemp(templ.data()) != nullptr) path_ = templ;
  }
  ~Scratch() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

void SetMtime(const fs::path& path, std::int64_t seconds, long nanos) {
  const struct timespec times[2] = {{seconds, nanos}, {seconds, nanos}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

std::int64_t MtimeNs(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return -1;
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
}

// Runs the plan's command with its environment (plus PATH) and returns its exit code, or -1.
int RunPlan(const HostPlan& plan, const std::string& log_path) {
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : plan.environment) env_strings.push_back(k + "=" + v);
  if (plan.environment.count("PATH") == 0) env_strings.emplace_back("PATH=/usr/bin:/bin");
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings = plan.argv;
  std::vector<char*> argv;
  for (auto& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class SageMakerLayoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(scratch_.path().empty());
    // Without links (a TMPDIR may have one): channels must be paths the server resolved.
    root_ = fs::canonical(scratch_.path());
    // mkdtemp's 0700 would keep the channel from the job's user, who opens it (sandboxed).
    fs::permissions(root_, fs::perms::others_exec, fs::perm_options::add);
    Write(root_ / "data" / "train" / "a.txt", "hello\n");
  }

  LaunchSpec TwoHostSpec() const {
    LaunchSpec spec;
    spec.job = 7;
    spec.attempt = 1;
    spec.name = "my-job";
    spec.argv = {"/bin/sh", "-c", "exit 0"};
    spec.environment = {{"FOO", "bar"}, {"CUDA_VISIBLE_DEVICES", "0,1"}};
    spec.instance_type = "ml.m5.large";
    spec.instance_count = 2;
    spec.attempt_dir = (root_ / "job" / "attempts" / "1").string();
    spec.job_dir = (root_ / "job").string();
    spec.hyperparameters = {
        {"epochs", "10"}, {"lr", "0.1"}, {"program", "\"train.py\""}, {"mode", "fast"}};
    spec.channels = {{"train", (root_ / "data" / "train").string()}};
    spec.checkpoint_sync_dir = (root_ / "sync").string();
    // The sandbox's exec step (`__jobexec`) is the stand-in's, never this test program's.
    spec.self_exe =
        (fs::read_symlink("/proc/self/exe").parent_path() / "exec_supervise_main").string();
    return spec;
  }

  static LayoutOptions NoSandbox() {
    LayoutOptions options;
    options.sandbox = false;
    return options;
  }

  Scratch scratch_;
  fs::path root_;
};

TEST_F(SageMakerLayoutTest, ConfigFilesOfATwoHostJob) {
  const LaunchSpec spec = TwoHostSpec();
  const auto plan = PrepareHost(spec, 2, NoSandbox());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const fs::path ml = root_ / "job" / "attempts" / "1" / "algo-2" / "ml";
  EXPECT_EQ(plan->ml_dir, ml.string());
  EXPECT_EQ(plan->output_dir, (ml / "output").string());
  EXPECT_FALSE(plan->sandboxed);
  const fs::path config = ml / "input" / "config";
  EXPECT_EQ(Read(config / "hyperparameters.json"),
            R"({"epochs": "10", "lr": "0.1", "mode": "fast", "program": "\"train.py\""})");
  EXPECT_EQ(Read(config / "resourceconfig.json"),
            R"({"current_host": "algo-2", "hosts": ["algo-1", "algo-2"], )"
            R"("network_interface_name": "lo"})");
  EXPECT_EQ(Read(config / "inputdataconfig.json"),
            R"({"train": {"TrainingInputMode": "File", "S3DistributionType": "FullyReplicated", )"
            R"("RecordWrapperType": "None"}})");
  EXPECT_EQ(Read(config / "checkpointconfig.json"),
            R"({"LocalPath": ")" + (root_ / "job" / "checkpoints").string() +
                R"(", "S3Uri": "file://)" + (root_ / "sync").string() + R"("})");

  // Host 1 differs only in current_host.
  ASSERT_TRUE(PrepareHost(spec, 1, NoSandbox()).ok());
  EXPECT_EQ(Read(root_ / "job" / "attempts" / "1" / "algo-1" / "ml" / "input" / "config" /
                 "resourceconfig.json"),
            R"({"current_host": "algo-1", "hosts": ["algo-1", "algo-2"], )"
            R"("network_interface_name": "lo"})");
}

TEST_F(SageMakerLayoutTest, NoChannelsNoHyperparametersNoSync) {
  LaunchSpec spec = TwoHostSpec();
  spec.instance_count = 1;
  spec.hyperparameters.clear();
  spec.channels.clear();
  spec.checkpoint_sync_dir.clear();
  const auto plan = PrepareHost(spec, 1, NoSandbox());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const fs::path config = fs::path(plan->ml_dir) / "input" / "config";
  EXPECT_EQ(Read(config / "hyperparameters.json"), "{}");
  EXPECT_EQ(Read(config / "inputdataconfig.json"), "{}");
  EXPECT_EQ(Read(config / "checkpointconfig.json"),
            R"({"LocalPath": ")" + (root_ / "job" / "checkpoints").string() + R"("})");
  EXPECT_EQ(plan->environment.at("SM_CHANNELS"), "[]");
  EXPECT_EQ(plan->environment.at("SM_HPS"), "{}");
  EXPECT_EQ(plan->environment.at("SM_HOSTS"), R"(["algo-1"])");
}

// SM_HPS decodes a value that is JSON, as the training toolkit does, but only to a bounded
// depth: a value nested deeper is the caller's string (no recursion follows the caller's text).
TEST_F(SageMakerLayoutTest, HyperparametersThatAreJsonAndOnesTooDeep) {
  LaunchSpec spec = TwoHostSpec();
  const std::string deep = std::string(5000, '[') + std::string(5000, ']');
  spec.hyperparameters = {{"deep", deep},
                          {"list", " [1, \"a\"] "},
                          {"name", "caf\xC3\xA9 \"x\""},
                          {"quoted", "\"text\""}};
  const auto plan = PrepareHost(spec, 1, NoSandbox());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const nlohmann::json hps = nlohmann::json::parse(plan->environment.at("SM_HPS"));
  EXPECT_EQ(hps.at("deep"), deep);
  EXPECT_EQ(hps.at("list"), nlohmann::json::parse(R"([1, "a"])"));
  EXPECT_EQ(hps.at("name"), "caf\xC3\xA9 \"x\"");
  EXPECT_EQ(hps.at("quoted"), "text");
  EXPECT_EQ(plan->environment.at("SM_HP_QUOTED"), "text");
  EXPECT_EQ(plan->environment.at("SM_HP_DEEP"), deep);
  const fs::path config = fs::path(plan->ml_dir) / "input" / "config";
  EXPECT_EQ(nlohmann::json::parse(Read(config / "hyperparameters.json")).at("name"),
            "caf\xC3\xA9 \"x\"");
}

TEST_F(SageMakerLayoutTest, EnvironmentWithoutSandbox) {
  const LaunchSpec spec = TwoHostSpec();
  const auto plan = PrepareHost(spec, 2, NoSandbox());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const auto& env = plan->environment;
  const std::string ml = plan->ml_dir;
  const std::string checkpoints = (root_ / "job" / "checkpoints").string();
  const std::string data_config =
      R"({"train": {"TrainingInputMode": "File", "S3DistributionType": "FullyReplicated", )"
      R"("RecordWrapperType": "None"}})";
  const std::string resource =
      R"({"current_host": "algo-2", "hosts": ["algo-1", "algo-2"], "network_interface_name": "lo"})";
  const std::string hps = R"({"epochs": 10, "lr": 0.1, "mode": "fast", "program": "train.py"})";
  const unsigned hw = std::thread::hardware_concurrency();
  const std::string cpus = std::to_string(hw == 0 ? 1 : hw);

  const std::map<std::string, std::string> expected = {
      {"FOO", "bar"},
      {"CUDA_VISIBLE_DEVICES", "0,1"},
      {"SM_HOSTS", R"(["algo-1", "algo-2"])"},
      {"SM_CURRENT_HOST", "algo-2"},
      {"SM_NUM_HOSTS", "2"},
      {"SM_NETWORK_INTERFACE_NAME", "lo"},
      {"SM_CURRENT_INSTANCE_TYPE", "ml.m5.large"},
      {"SM_MODEL_DIR", ml + "/model"},
      {"SM_INPUT_DIR", ml + "/input"},
      {"SM_INPUT_CONFIG_DIR", ml + "/input/config"},
      {"SM_INPUT_DATA_CONFIG", data_config},
      {"SM_OUTPUT_DIR", ml + "/output"},
      {"SM_OUTPUT_DATA_DIR", ml + "/output/data"},
      {"SM_OUTPUT_INTERMEDIATE_DIR", ml + "/output/intermediate"},
      {"SM_CHANNELS", R"(["train"])"},
      {"SM_CHANNEL_TRAIN", ml + "/input/data/train"},
      {"SM_HPS", hps},
      {"SM_HP_EPOCHS", "10"},
      {"SM_HP_LR", "0.1"},
      {"SM_HP_MODE", "fast"},
      {"SM_HP_PROGRAM", "train.py"},
      {"SM_NUM_GPUS", "2"},
      {"SM_NUM_CPUS", cpus},
      {"SM_RESOURCE_CONFIG", resource},
      {"TRAINING_JOB_NAME", "my-job"},
      {"ALLOT_CHECKPOINT_DIR", checkpoints},
  };
  for (const auto& [key, value] : expected) {
    ASSERT_TRUE(env.count(key)) << key;
    EXPECT_EQ(env.at(key), value) << key;
  }
  ASSERT_TRUE(env.count("SM_TRAINING_ENV"));
  const std::string training = env.at("SM_TRAINING_ENV");
  EXPECT_NE(training.find(R"("channel_input_dirs": {"train": ")" + ml + R"(/input/data/train"})"),
            std::string::npos)
      << training;
  EXPECT_NE(training.find(R"("hyperparameters": )" + hps), std::string::npos) << training;
  EXPECT_NE(training.find(R"("is_master": false)"), std::string::npos) << training;
  EXPECT_NE(training.find(R"("resource_config": )" + resource), std::string::npos) << training;
  // Nothing but the payload's variables, the layout's and the base every job starts from
  // (nothing of this process's environment).
  const auto base = BaseJobEnvironment();
  for (const auto& [key, value] : env) {
    EXPECT_TRUE(expected.count(key) || key == "SM_TRAINING_ENV" || base.count(key))
        << key << "=" << value;
  }
}

TEST_F(SageMakerLayoutTest, GpuCount) {
  LaunchSpec spec = TwoHostSpec();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"0", "1"}, {"0,1,2,3", "4"}, {"", "0"}, {"-1", "0"}, {"GPU-abc,GPU-def", "2"}};
  for (const auto& [devices, count] : cases) {
    spec.environment["CUDA_VISIBLE_DEVICES"] = devices;
    const auto plan = PrepareHost(spec, 1, NoSandbox());
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->environment.at("SM_NUM_GPUS"), count) << devices;
  }
  spec.environment.erase("CUDA_VISIBLE_DEVICES");
  const auto plan = PrepareHost(spec, 1, NoSandbox());
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->environment.at("SM_NUM_GPUS"), "0");
}

TEST_F(SageMakerLayoutTest, TreeWithoutSandboxAndTheJobRunsInIt) {
  LaunchSpec spec = TwoHostSpec();
  spec.argv = {"/bin/sh", "-c",
               "echo model > \"$SM_MODEL_DIR/model.bin\" && "
               "echo ck > \"$ALLOT_CHECKPOINT_DIR/ck.txt\" && "
               "cat \"$SM_CHANNEL_TRAIN/a.txt\" > \"$SM_OUTPUT_DATA_DIR/copy.txt\" && "
               "test -f \"$SM_INPUT_CONFIG_DIR/resourceconfig.json\""};
  const auto plan = PrepareHost(spec, 1, NoSandbox());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->argv, spec.argv);
  EXPECT_EQ(plan->working_dir, plan->ml_dir);
  const fs::path ml = plan->ml_dir;
  EXPECT_TRUE(fs::is_directory(ml / "model"));
  EXPECT_TRUE(fs::is_directory(ml / "output" / "data"));
  EXPECT_TRUE(fs::is_directory(root_ / "job" / "checkpoints"));
  ASSERT_TRUE(fs::is_symlink(ml / "input" / "data" / "train"));
  EXPECT_EQ(fs::read_symlink(ml / "input" / "data" / "train"), root_ / "data" / "train");

  const std::string log = (root_ / "log").string();
  EXPECT_EQ(RunPlan(*plan, log), 0) << Read(log);
  EXPECT_EQ(Read(ml / "model" / "model.bin"), "model\n");
  EXPECT_EQ(Read(root_ / "job" / "checkpoints" / "ck.txt"), "ck\n");
  EXPECT_EQ(Read(ml / "output" / "data" / "copy.txt"), "hello\n");

  // Preparing again (the same attempt) is harmless.
  EXPECT_TRUE(PrepareHost(spec, 1, NoSandbox()).ok());
  EXPECT_EQ(Read(ml / "model" / "model.bin"), "model\n");
}

TEST_F(SageMakerLayoutTest, RejectsBadInput) {
  LaunchSpec spec = TwoHostSpec();
  EXPECT_FALSE(PrepareHost(spec, 0, NoSandbox()).ok());
  EXPECT_FALSE(PrepareHost(spec, 3, NoSandbox()).ok());
  LaunchSpec no_argv = spec;
  no_argv.argv.clear();
  EXPECT_FALSE(PrepareHost(no_argv, 1, NoSandbox()).ok());
  LaunchSpec bad_name = spec;
  bad_name.channels = {{"../etc", (root_ / "data" / "train").string()}};
  EXPECT_EQ(PrepareHost(bad_name, 1, NoSandbox()).status().code(), StatusCode::kInvalidArgument);
  LaunchSpec twice = spec;
  twice.channels.push_back(twice.channels.front());
  EXPECT_EQ(PrepareHost(twice, 1, NoSandbox()).status().code(), StatusCode::kInvalidArgument);
  LaunchSpec missing = spec;
  missing.channels = {{"train", (root_ / "nowhere").string()}};
  const auto result = PrepareHost(missing, 1, NoSandbox());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("nowhere"), std::string::npos);
}

// The server hands over each channel's path with its links resolved (as it checked it against
// its file roots). A link on the path now was put there since and is never followed.
TEST_F(SageMakerLayoutTest, AChannelWithALinkOnItsPathIsNotBound) {
  fs::create_directory_symlink(root_ / "data", root_ / "alias");
  LaunchSpec spec = TwoHostSpec();
  spec.channels = {{"train", (root_ / "alias" / "train").string()}};
  const auto result = PrepareHost(spec, 1, NoSandbox());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(result.status().message().find("channel 'train'"), std::string::npos);
  EXPECT_NE(result.status().message().find("symbolic link"), std::string::npos);
  spec.channels = {{"train", (root_ / "data" / "train" / "").string()}};  // a trailing '/'
  EXPECT_TRUE(PrepareHost(spec, 1, NoSandbox()).ok());
}

TEST(SandboxAvailableTest, OffOrMissingBinary) {
  LayoutOptions off;
  off.sandbox = false;
  EXPECT_FALSE(SandboxAvailable(off));
  LayoutOptions missing;
  missing.bwrap = "/nonexistent/bwrap";
  EXPECT_FALSE(SandboxAvailable(missing));
  EXPECT_FALSE(SandboxAvailable(missing));  // cached
}

// Channels are bound from descriptors: a bubblewrap without --ro-bind-fd (before 0.10, unless
// backported) would fail every job that reads one, so it is no sandbox.
TEST_F(SageMakerLayoutTest, ABubblewrapWithoutRoBindFdIsNoSandbox) {
  const LayoutOptions real;
  if (!SandboxAvailable(real)) GTEST_SKIP() << "bubblewrap is not available";
  // A stand-in that runs the real one, refusing `refused` (an option bwrap does not know).
  const auto stand_in = [&](const std::string& name, const std::string& refused) {
    const fs::path path = root_ / name;
    std::ofstream(path) << "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = " << refused
                        << " ] && exit 1; done\nexec " << real.bwrap << " \"$@\"\n";
    fs::permissions(path, fs::perms::owner_all);
    LayoutOptions options;
    options.bwrap = path.string();
    return options;
  };
  EXPECT_TRUE(SandboxAvailable(stand_in("new-bwrap", "--no-such-option")));
  const LayoutOptions old = stand_in("old-bwrap", "--ro-bind-fd");
  EXPECT_FALSE(SandboxAvailable(old));
  const auto refused = PrepareHost(TwoHostSpec(), 1, old);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("lacks --ro-bind-fd"), std::string::npos);
}

// The job's checkpoint directory (what an earlier attempt left, what another host of this
// attempt is writing) is given to the job's user without following a link to anything else, and
// a chain of directories too deep to walk is refused, not walked.
TEST_F(SageMakerLayoutTest, TheJobsTreeIsGivenToItsUserAndNothingALinkLeadsTo) {
  if (!SandboxAvailable(LayoutOptions{}) || ::geteuid() != 0) {
    GTEST_SKIP() << "needs root and bubblewrap";
  }
  LaunchSpec spec = TwoHostSpec();
  spec.user = JobUser{200001, 200001};
  const fs::path checkpoints = root_ / "job" / "checkpoints";
  fs::create_directories(checkpoints / "sub");
  Write(checkpoints / "sub" / "model.pt", "m");
  Write(root_ / "secret", "s");
  fs::create_symlink(root_ / "secret", checkpoints / "link");
  fs::create_hard_link(root_ / "secret", checkpoints / "hard");
  ASSERT_TRUE(PrepareHost(spec, 1, LayoutOptions{}).ok());
  struct stat st {};
  ASSERT_EQ(::stat((checkpoints / "sub" / "model.pt").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 200001U);
  ASSERT_EQ(::lstat((checkpoints / "link").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 200001U);  // the link itself
  ASSERT_EQ(::stat((root_ / "secret").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0U);  // neither through the link nor through the hard link

  fs::path deep = checkpoints / "sub";
  for (int i = 0; i < 300; ++i) deep /= "d";
  fs::create_directories(deep);
  const auto refused = PrepareHost(spec, 1, LayoutOptions{});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("deeper than 256 levels"), std::string::npos)
      << refused.status().message();
}

// The newest checkpoint file, found without walking below the walk's cap: a job's chain of
// thousands of directories took the server's memory and descriptors.
TEST_F(SageMakerLayoutTest, NewestFileTimeLooksNoDeeperThanTheCap) {
  const fs::path dir = root_ / "ck";
  fs::path deep = dir;
  for (int i = 0; i < 300; ++i) deep /= "d";
  fs::create_directories(deep);
  Write(dir / "near", "n");
  Write(deep / "far", "f");
  const auto set_mtime = [](const fs::path& path, std::time_t seconds) {
    const struct timespec times[2] = {{seconds, 0}, {seconds, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0);
  };
  set_mtime(dir / "near", 1'000'000);
  set_mtime(deep / "far", 2'000'000);
  EXPECT_EQ(NewestFileTime(dir.string()), 1'000'000'000);
}

TEST_F(SageMakerLayoutTest, SandboxIsolatesTheJob) {
  const LayoutOptions options;
  if (!SandboxAvailable(options)) GTEST_SKIP() << "bubblewrap is not available";
  const std::string tmp_name = "allot-sandbox-" + std::to_string(::getpid());
  // Outside /tmp (private in the sandbox), so only the read-only host file system stops it.
  const std::string host_probe = "/var/tmp/" + tmp_name;
  const std::string script =
      "r=/opt/ml/output/data/results; : > $r\n"
      "check() { if eval \"$2\" >/dev/null 2>&1; then echo \"$1=yes\" >> $r; "
      "else echo \"$1=no\" >> $r; fi; }\n"
      "check etc 'touch /etc/allot-sandbox-probe'\n"
      "check root 'touch /allot-sandbox-probe'\n"
      "check host_dir 'touch " +
      host_probe +
      "'\n"
      "check model 'echo model > /opt/ml/model/model.bin'\n"
      "check tmp 'echo t > /tmp/" +
      tmp_name + " && test -f /tmp/" + tmp_name +
      "'\n"
      "check resourceconfig 'grep -q algo-2 /opt/ml/input/config/resourceconfig.json'\n"
      "check checkpoint 'echo ck > /opt/ml/checkpoints/ck.txt'\n"
      "check checkpoint_env 'test \"$ALLOT_CHECKPOINT_DIR\" = /opt/ml/checkpoints'\n"
      "check channel_read 'grep -q hello /opt/ml/input/data/train/a.txt'\n"
      "check channel_write 'touch /opt/ml/input/data/train/new'\n"
      "check cwd 'test \"$(pwd)\" = /opt/ml'\n"
      "check hosts 'grep -q algo-2 /etc/hosts'\n";
  LaunchSpec spec = TwoHostSpec();
  spec.argv = {"/bin/sh", "-c", script};
  const auto plan = PrepareHost(spec, 1, options);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_TRUE(plan->sandboxed);
  ASSERT_GE(plan->argv.size(), 4U);
  EXPECT_EQ(plan->argv.front(), options.bwrap);
  EXPECT_EQ(std::vector<std::string>(plan->argv.end() - 4, plan->argv.end()),
            (std::vector<std::string>{"--", "/bin/sh", "-c", script}));

  // In-sandbox paths in the environment and the config files.
  const auto& env = plan->environment;
  EXPECT_EQ(env.at("SM_MODEL_DIR"), "/opt/ml/model");
  EXPECT_EQ(env.at("SM_INPUT_DIR"), "/opt/ml/input");
  EXPECT_EQ(env.at("SM_INPUT_CONFIG_DIR"), "/opt/ml/input/config");
  EXPECT_EQ(env.at("SM_OUTPUT_DIR"), "/opt/ml/output");
  EXPECT_EQ(env.at("SM_OUTPUT_DATA_DIR"), "/opt/ml/output/data");
  EXPECT_EQ(env.at("SM_CHANNEL_TRAIN"), "/opt/ml/input/data/train");
  EXPECT_EQ(env.at("ALLOT_CHECKPOINT_DIR"), "/opt/ml/checkpoints");
  const fs::path ml = plan->ml_dir;
  EXPECT_EQ(Read(ml / "input" / "config" / "checkpointconfig.json"),
            R"({"LocalPath": "/opt/ml/checkpoints", "S3Uri": "file://)" +
                (root_ / "sync").string() + R"("})");
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(ml / "input" / "data" / "train")));

  const std::string log = (root_ / "log").string();
  ASSERT_EQ(RunPlan(*plan, log), 0) << Read(log);
  EXPECT_EQ(Read(ml / "output" / "data" / "results"),
            "etc=no\nroot=no\nhost_dir=no\nmodel=yes\ntmp=yes\nresourceconfig=yes\n"
            "checkpoint=yes\ncheckpoint_env=yes\nchannel_read=yes\nchannel_write=no\ncwd=yes\n"
            "hosts=yes\n")
      << Read(log);
  EXPECT_EQ(Read(ml / "model" / "model.bin"), "model\n");
  EXPECT_EQ(Read(root_ / "job" / "checkpoints" / "ck.txt"), "ck\n");
  EXPECT_FALSE(fs::exists("/etc/allot-sandbox-probe"));
  EXPECT_FALSE(fs::exists(host_probe));
  EXPECT_FALSE(fs::exists(fs::temp_directory_path() / tmp_name));
  EXPECT_FALSE(fs::exists(root_ / "data" / "train" / "new"));
}

TEST_F(SageMakerLayoutTest, SandboxCustomCheckpointPathAndExitCode) {
  const LayoutOptions options;
  if (!SandboxAvailable(options)) GTEST_SKIP() << "bubblewrap is not available";
  LaunchSpec spec = TwoHostSpec();
  spec.checkpoint_local_path = "/opt/checkpoints/";
  spec.argv = {"/bin/sh", "-c",
               "test \"$ALLOT_CHECKPOINT_DIR\" = /opt/checkpoints || exit 9; "
               "echo x > /opt/checkpoints/c.txt || exit 8; exit 3"};
  const auto plan = PrepareHost(spec, 2, options);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const std::string log = (root_ / "log").string();
  EXPECT_EQ(RunPlan(*plan, log), 3) << Read(log);
  EXPECT_EQ(Read(root_ / "job" / "checkpoints" / "c.txt"), "x\n");

  LaunchSpec bad = spec;
  bad.checkpoint_local_path = "relative/dir";
  EXPECT_EQ(PrepareHost(bad, 1, options).status().code(), StatusCode::kInvalidArgument);
  bad.checkpoint_local_path = "/opt/ml";
  EXPECT_EQ(PrepareHost(bad, 1, options).status().code(), StatusCode::kInvalidArgument);
  // Over a directory shared read-only from the machine: refused by the paths alone.
  bad.readonly_paths = {(root_ / "shared").string()};
  bad.checkpoint_local_path = (root_ / "shared" / "ck").string();
  EXPECT_EQ(PrepareHost(bad, 1, options).status().code(), StatusCode::kInvalidArgument);
  bad.checkpoint_local_path = root_.string();
  EXPECT_EQ(PrepareHost(bad, 1, options).status().code(), StatusCode::kInvalidArgument);

  // Anywhere else the sandbox makes the directory, whether or not the machine has it, so the
  // answer tells nothing of what the machine holds.
  LaunchSpec elsewhere = TwoHostSpec();
  elsewhere.checkpoint_local_path = "/no-such-top-level-dir/ck";
  elsewhere.argv = {"/bin/sh", "-c", "echo y > /no-such-top-level-dir/ck/d.txt"};
  const auto made = PrepareHost(elsewhere, 2, options);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(RunPlan(*made, log), 0) << Read(log);
  EXPECT_EQ(Read(root_ / "job" / "checkpoints" / "d.txt"), "y\n");
}

TEST_F(SageMakerLayoutTest, RestoreAndSyncRoundTrip) {
  const fs::path sync = root_ / "sync";
  const fs::path job = root_ / "job";
  // Nothing to restore: no error, the directory is there.
  EXPECT_TRUE(RestoreCheckpoints(job.string(), "").ok());
  EXPECT_TRUE(RestoreCheckpoints(job.string(), sync.string()).ok());
  const auto dir = JobCheckpointDir(job.string());
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(*dir, (job / "checkpoints").string());
  EXPECT_TRUE(fs::is_directory(*dir));
  EXPECT_TRUE(fs::is_empty(*dir));

  Write(sync / "epoch-1.pt", "one");
  Write(sync / "sub" / "state.json", "{}");
  SetMtime(sync / "epoch-1.pt", 1700000000, 123456789);
  SetMtime(sync / "sub" / "state.json", 1700000100, 5);
  ASSERT_TRUE(RestoreCheckpoints(job.string(), sync.string()).ok());
  const fs::path ck = *dir;
  EXPECT_EQ(Read(ck / "epoch-1.pt"), "one");
  EXPECT_EQ(Read(ck / "sub" / "state.json"), "{}");
  EXPECT_EQ(MtimeNs(ck / "epoch-1.pt"), 1700000000LL * 1000000000LL + 123456789);
  EXPECT_EQ(MtimeNs(ck / "sub" / "state.json"), 1700000100LL * 1000000000LL + 5);

  // The job writes more and changes a file; the sync copies it all to a new directory.
  Write(ck / "epoch-2.pt", "two");
  Write(ck / "sub" / "state.json", "{\"epoch\": 2}");
  SetMtime(ck / "epoch-2.pt", 1700000200, 0);
  SetMtime(ck / "sub" / "state.json", 1700000300, 0);
  const fs::path fresh = root_ / "other" / "sync";
  ASSERT_TRUE(SyncCheckpoints(job.string(), fresh.string()).ok());
  ASSERT_TRUE(SyncCheckpoints(job.string(), sync.string()).ok());
  for (const fs::path& target : {fresh, sync}) {
    EXPECT_EQ(Read(target / "epoch-1.pt"), "one");
    EXPECT_EQ(Read(target / "epoch-2.pt"), "two");
    EXPECT_EQ(Read(target / "sub" / "state.json"), "{\"epoch\": 2}");
    EXPECT_EQ(MtimeNs(target / "epoch-2.pt"), 1700000200LL * 1000000000LL);
    EXPECT_EQ(MtimeNs(target / "sub" / "state.json"), 1700000300LL * 1000000000LL);
  }
  // No temporary files are left behind.
  for (const auto& entry : fs::recursive_directory_iterator(sync)) {
    EXPECT_EQ(entry.path().filename().string().find(".allot-partial-"), std::string::npos)
        << entry.path();
  }
  // Back into a fresh job.
  const fs::path job2 = root_ / "job2";
  ASSERT_TRUE(RestoreCheckpoints(job2.string(), sync.string()).ok());
  EXPECT_EQ(Read(job2 / "checkpoints" / "epoch-2.pt"), "two");
  EXPECT_EQ(NewestFileTime((job2 / "checkpoints").string()), 1700000300LL * 1000);
  EXPECT_TRUE(SyncCheckpoints(job.string(), "").ok());
}

// With a user, a copy is a process of that user (issue 10): it reads and writes only what the
// job's uid may, so a CheckpointConfig.S3Uri cannot make the server read or overwrite root's
// files. Needs root, to become another user.
TEST_F(SageMakerLayoutTest, CheckpointCopiesRunAsTheJobsUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch users";
  const std::string exe =
      (fs::read_symlink("/proc/self/exe").parent_path() / "exec_supervise_main").string();
  const CopyIdentity nobody{exe, JobUser{65534, 65534}};
  fs::permissions(root_, fs::perms::owner_all | fs::perms::others_exec |
                             fs::perms::group_exec);  // others may pass through
  // The job's directory lies in a tree its user cannot pass through, as a data directory is.
  fs::create_directories(root_ / "data");
  fs::permissions(root_ / "data", fs::perms::owner_all);
  const fs::path job = root_ / "data" / "job";
  const fs::path shared = root_ / "shared";  // an admin's file root: everyone may write
  fs::create_directories(shared);
  fs::permissions(shared, fs::perms::all);
  Write(shared / "epoch-1.pt", "one");
  fs::permissions(shared / "epoch-1.pt", fs::perms::owner_read | fs::perms::others_read);
  ASSERT_TRUE(RestoreCheckpoints(job.string(), shared.string(), nobody).ok());
  const fs::path ck = job / "checkpoints";
  EXPECT_EQ(Read(ck / "epoch-1.pt"), "one");
  struct stat st {};
  ASSERT_EQ(::stat((ck / "epoch-1.pt").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);  // written by the job's user
  // A root-only tree cannot be read in, and root's file in the shared root is not overwritten.
  const fs::path secret = root_ / "secret";
  fs::create_directories(secret);
  Write(secret / "key", "root's");
  fs::permissions(secret, fs::perms::owner_all);
  const Status read_in = RestoreCheckpoints(job.string(), secret.string(), nobody);
  EXPECT_FALSE(read_in.ok());
  EXPECT_NE(read_in.message().find("as uid 65534 failed"), std::string::npos) << read_in.message();
  EXPECT_FALSE(fs::exists(ck / "key"));
  // Whether there is something to restore is asked as the job's user too: below a directory it
  // may not pass, what root would find (a directory or nothing) is not looked at.
  fs::create_directories(secret / "saved");
  for (const fs::path& below : {secret / "saved", secret / "absent"}) {
    const Status behind = RestoreCheckpoints(job.string(), below.string(), nobody);
    EXPECT_EQ(behind.code(), StatusCode::kFailedPrecondition) << behind.message();
    EXPECT_NE(behind.message().find("cannot be read as the job's user (uid 65534): Permission "
                                    "denied"),
              std::string::npos)
        << behind.message();
  }
  // Nothing there, where the user may look: nothing to restore.
  EXPECT_TRUE(RestoreCheckpoints(job.string(), (shared / "none").string(), nobody).ok());
  Write(shared / "root-file", "root's");
  fs::permissions(shared / "root-file", fs::perms::owner_read | fs::perms::owner_write);
  Write(ck / "root-file", "the job's");
  fs::permissions(shared, fs::perms::all | fs::perms::sticky_bit);  // like /tmp
  EXPECT_FALSE(SyncCheckpoints(job.string(), shared.string(), nobody).ok());
  EXPECT_EQ(Read(shared / "root-file"), "root's");
  // Without a user (no sandbox) the copy runs here, as before.
  EXPECT_TRUE(SyncCheckpoints(job.string(), (root_ / "plain").string(), {exe, std::nullopt}).ok());
  EXPECT_EQ(Read(root_ / "plain" / "root-file"), "the job's");
}

// A copy holds no more than the job could: its disk limit by the files' full lengths (a sparse
// file is written out whole: twenty files of 15 MiB made by truncate took no disk in the job and
// 300 MiB in its checkpoint location), its file limit, and the depth the disk check walks. Over
// any, nothing is copied, and the copy says why. Both ways: the sync, and the restore.
TEST_F(SageMakerLayoutTest, CheckpointCopiesStayWithinTheJobsLimits) {
  const fs::path job = root_ / "job";
  const auto dir = JobCheckpointDir(job.string());
  ASSERT_TRUE(dir.ok());
  const fs::path ck = *dir;
  for (const char* name : {"s1", "s2", "s3"}) {
    Write(ck / name, "");
    fs::resize_file(ck / name, std::uintmax_t{1} << 20);  // a hole: no block
  }
  const std::string exe =
      (fs::read_symlink("/proc/self/exe").parent_path() / "exec_supervise_main").string();
  const CopyIdentity two_mib{exe, std::nullopt, {.bytes = 2 << 20, .files = 100}};
  const fs::path sync = root_ / "sync";
  Status synced = SyncCheckpoints(job.string(), sync.string(), two_mib);
  EXPECT_EQ(synced.code(), StatusCode::kFailedPrecondition) << synced.message();
  EXPECT_NE(synced.message().find("saving the checkpoints to '" + sync.string() +
                                  "' failed: the checkpoints hold more than the job's disk limit "
                                  "of 2 MiB (files counted at their full length): not copied"),
            std::string::npos)
      << synced.message();
  EXPECT_FALSE(fs::exists(sync));
  if (::geteuid() == 0) {  // the same in the copy process of the job's user
    const CopyIdentity nobody{exe, JobUser{65534, 65534}, two_mib.budget};
    synced = SyncCheckpoints(job.string(), sync.string(), nobody);
    EXPECT_NE(synced.message().find("as uid 65534 failed (exit 1: the checkpoints hold more than "
                                    "the job's disk limit of 2 MiB"),
              std::string::npos)
        << synced.message();
    EXPECT_FALSE(fs::exists(sync));
  }
  const CopyIdentity four_mib{exe, std::nullopt, {.bytes = 4 << 20, .files = 100}};
  ASSERT_TRUE(SyncCheckpoints(job.string(), sync.string(), four_mib).ok());
  EXPECT_EQ(fs::file_size(sync / "s2"), std::uintmax_t{1} << 20);
  // The restore into another job meets its budget too.
  const fs::path job2 = root_ / "job2";
  const Status restored = RestoreCheckpoints(job2.string(), sync.string(), two_mib);
  EXPECT_EQ(restored.code(), StatusCode::kFailedPrecondition) << restored.message();
  EXPECT_FALSE(fs::exists(job2 / "checkpoints" / "s1"));
  // The number of files (and directories), and the depth.
  const CopyIdentity two_files{exe, std::nullopt, {.bytes = 4 << 20, .files = 2}};
  synced = SyncCheckpoints(job.string(), (root_ / "sync2").string(), two_files);
  EXPECT_NE(synced.message().find(
                "the checkpoints hold more than the job's limit of 2 files: not copied"),
            std::string::npos)
      << synced.message();
  fs::path deep = ck;
  for (int i = 0; i < kMaxDiskWalkDepth + 2; ++i) deep /= "d";
  fs::create_directories(deep);
  const CopyIdentity unlimited{exe, std::nullopt, {}};
  synced = SyncCheckpoints(job.string(), (root_ / "sync3").string(), unlimited);
  EXPECT_NE(
      synced.message().find("the checkpoints have directories deeper than 256 levels: not copied"),
      std::string::npos)
      << synced.message();
  EXPECT_FALSE(fs::exists(root_ / "sync3" / "d"));
}

// A copy that runs past its deadline is stopped, with whatever it started, and the sync says so:
// it holds a sync worker and the attempt's capacity, which a reclaim may be waiting for. Here
// the copy process is a stand-in that never ends.
TEST_F(SageMakerLayoutTest, ACopyPastItsDeadlineIsStopped) {
  const fs::path job = root_ / "job";
  const auto dir = JobCheckpointDir(job.string());
  ASSERT_TRUE(dir.ok());
  Write(fs::path(*dir) / "epoch-1.pt", "one");
  const fs::path stuck = root_ / "stuck-copy";
  const fs::path pid_file = root_ / "child.pid";
  // It begins a file in the destination (its last argument), as a copy would, then hangs.
  Write(stuck,
        "#!/bin/sh\neval to=\\${$#}\nmkdir -p \"$to\"\nchmod 777 \"$to\"\n"
        ": > \"$to/.allot-partial-epoch-1.pt\"\nsleep 60 &\necho $! > " +
            pid_file.string() + "\nsleep 60\n");
  fs::permissions(stuck, fs::perms::owner_all);
  CopyIdentity as{stuck.string(), JobUser{65534, 65534}, {}, 1000};
  const Status synced = SyncCheckpoints(job.string(), (root_ / "sync").string(), as);
  EXPECT_NE(synced.message().find("failed (it ran past its deadline of 1 s and was stopped)"),
            std::string::npos)
      << synced.message();
  const pid_t child = static_cast<pid_t>(std::stol(Read(pid_file)));
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {  // dead: gone, or a zombie its adopter has not reaped
    const std::string stat = Read("/proc/" + std::to_string(child) + "/stat");
    gone = ::kill(child, 0) != 0 || stat.find(") Z ") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "the copy's own child outlived it";
  if (::geteuid() == 0) {  // removed as the job's user, which needs root to act as
    EXPECT_FALSE(fs::exists(root_ / "sync" / ".allot-partial-epoch-1.pt"));
  }
  EXPECT_TRUE(fs::exists(root_ / "sync"));  // the stand-in did begin
}

// A job sets what time it likes on its files: one past 2262 does not overflow the nanoseconds
// (it did, in the server, as root; UBSan stops there).
TEST_F(SageMakerLayoutTest, AFileTimeFarInTheFutureIsHeldAtTheLargestTime) {
  const fs::path dir = root_ / "ck";
  Write(dir / "future", "x");
  SetMtime(dir / "future", 13569465600, 0);  // 2400-01-01
  struct stat st {};
  ASSERT_EQ(::stat((dir / "future").c_str(), &st), 0);
  if (st.st_mtim.tv_sec != 13569465600) GTEST_SKIP() << "this file system cannot hold 2400";
  EXPECT_EQ(NewestFileTime(dir.string()), 9223372035LL * 1000);
}

TEST_F(SageMakerLayoutTest, NewestFileTime) {
  const fs::path dir = root_ / "ck";
  EXPECT_EQ(NewestFileTime(dir.string()), 0);  // missing
  fs::create_directories(dir / "a" / "b");
  EXPECT_EQ(NewestFileTime(dir.string()), 0);  // only directories
  Write(dir / "x", "x");
  Write(dir / "a" / "b" / "y", "y");
  SetMtime(dir / "x", 1700000000, 999999999);
  SetMtime(dir / "a" / "b" / "y", 1700000005, 250000000);
  SetMtime(dir / "a", 1800000000, 0);  // directories do not count
  EXPECT_EQ(NewestFileTime(dir.string()), 1700000005LL * 1000 + 250);
}

TEST_F(SageMakerLayoutTest, FailureMessage) {
  const fs::path out = root_ / "output";
  EXPECT_EQ(FailureMessage(out.string()), "");
  Write(out / "failure", "\n  CUDA out of memory\nat step 12\n\n");
  EXPECT_EQ(FailureMessage(out.string()), "CUDA out of memory\nat step 12");
  Write(out / "failure", std::string(5000, 'x'));
  EXPECT_EQ(FailureMessage(out.string()), std::string(1024, 'x'));
  // Not cut inside a UTF-8 character: 1023 bytes, then a 2-byte one.
  Write(out / "failure", std::string(1023, 'y') + "\xc3\xa9" + "tail");
  EXPECT_EQ(FailureMessage(out.string()), std::string(1023, 'y'));
  Write(out / "failure", "   \n");
  EXPECT_EQ(FailureMessage(out.string()), "");
}

}  // namespace
}  // namespace allot::exec
