#include "exec/sandbox.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace allot::exec {
namespace {

// The position of the first `--op a b` triple, or npos.
std::size_t Find(const std::vector<std::string>& args, const std::vector<std::string>& seq) {
  const auto it = std::search(args.begin(), args.end(), seq.begin(), seq.end());
  return it == args.end() ? std::string::npos : static_cast<std::size_t>(it - args.begin());
}

BwrapPlan APlan() {
  BwrapPlan plan;
  plan.bwrap = "/usr/bin/bwrap";
  plan.hostname = "algo-2";
  plan.system = {{"usr", ""}, {"bin", "usr/bin"}, {"lib64", ""}};
  plan.etc_files = {"/etc/resolv.conf"};
  plan.generated = {{"/data/j/a/algo-2/etc/passwd", "/etc/passwd"}};
  plan.readonly_paths = {"/root/.pyenv/versions/3.11.7"};
  plan.devices = {"/dev/nvidia0"};
  plan.tmp_bytes = 1 << 20;
  plan.ml_dir = "/data/j/a/algo-2/ml";
  plan.checkpoint_dir = "/data/j/checkpoints";
  plan.checkpoint_seen = "/opt/checkpoints/run";
  plan.channels = {{"/srv/train", "/opt/ml/input/data/train"}};
  plan.exec = "/usr/local/bin/allot";
  plan.environment_file = "/data/j/a/algo-2/job-env";
  plan.user = JobUser{200001, 200001};
  plan.command = {"/bin/sh", "-c", "exit 0"};
  return plan;
}

TEST(BwrapArgsTest, NamespacesSessionAndNoSharedRoot) {
  const auto args = BwrapArgs(APlan());
  EXPECT_EQ(args.front(), "/usr/bin/bwrap");
  for (const char* flag :
       {"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--new-session", "--die-with-parent"}) {
    EXPECT_NE(Find(args, {flag}), std::string::npos) << flag;
  }
  EXPECT_NE(Find(args, {"--hostname", "algo-2"}), std::string::npos);
  // The network is shared (hosts talk over loopback); the machine's root is never bound.
  EXPECT_EQ(Find(args, {"--unshare-net"}), std::string::npos);
  EXPECT_EQ(Find(args, {"--ro-bind", "/", "/"}), std::string::npos);
  EXPECT_EQ(Find(args, {"--bind", "/", "/"}), std::string::npos);
}

TEST(BwrapArgsTest, SystemDirectoriesReadOnlyAndLinksAsLinks) {
  const auto args = BwrapArgs(APlan());
  EXPECT_NE(Find(args, {"--ro-bind", "/usr", "/usr"}), std::string::npos);
  EXPECT_NE(Find(args, {"--symlink", "usr/bin", "/bin"}), std::string::npos);
  EXPECT_NE(Find(args, {"--ro-bind", "/lib64", "/lib64"}), std::string::npos);
  EXPECT_NE(Find(args, {"--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf"}),
            std::string::npos);
  EXPECT_NE(Find(args, {"--ro-bind", "/data/j/a/algo-2/etc/passwd", "/etc/passwd"}),
            std::string::npos);
  EXPECT_NE(
      Find(args, {"--ro-bind", "/root/.pyenv/versions/3.11.7", "/root/.pyenv/versions/3.11.7"}),
      std::string::npos);
  EXPECT_NE(Find(args, {"--dev-bind", "/dev/nvidia0", "/dev/nvidia0"}), std::string::npos);
}

TEST(BwrapArgsTest, DirectoriesOnTheWayAreMadeReadableBeforeTheirMounts) {
  const auto args = BwrapArgs(APlan());
  for (const char* dir : {"/etc", "/root", "/root/.pyenv", "/root/.pyenv/versions", "/opt",
                          "/opt/checkpoints", "/run", "/run/allot"}) {
    SCOPED_TRACE(dir);
    EXPECT_NE(Find(args, {"--perms", "0755", "--dir", dir}), std::string::npos);
  }
  EXPECT_LT(Find(args, {"--dir", "/etc"}), Find(args, {"--ro-bind-try", "/etc/resolv.conf"}));
  // Nothing is made under a read-only system directory or inside the job's own /opt/ml.
  EXPECT_EQ(Find(args, {"--dir", "/usr"}), std::string::npos);
  EXPECT_EQ(Find(args, {"--dir", "/opt/ml/input"}), std::string::npos);
  EXPECT_EQ(Find(args, {"--dir", "/opt/ml/input/data"}), std::string::npos);
}

TEST(BwrapArgsTest, JobTreeTmpAndTheExecStep) {
  const auto args = BwrapArgs(APlan());
  EXPECT_NE(Find(args, {"--bind", "/data/j/a/algo-2/ml", "/opt/ml"}), std::string::npos);
  EXPECT_NE(Find(args, {"--bind", "/data/j/checkpoints", "/opt/checkpoints/run"}),
            std::string::npos);
  EXPECT_NE(Find(args, {"--ro-bind", "/srv/train", "/opt/ml/input/data/train"}), std::string::npos);
  EXPECT_NE(Find(args, {"--perms", "1777", "--size", "1048576", "--tmpfs", "/tmp"}),
            std::string::npos);
  // POSIX shared memory (multiprocessing, DataLoader workers) gets a tmpfs of the same size,
  // after /dev, which would hide it.
  EXPECT_GT(Find(args, {"--perms", "1777", "--size", "1048576", "--tmpfs", "/dev/shm"}),
            Find(args, {"--dev", "/dev"}));
  EXPECT_NE(Find(args, {"--perms", "1777", "--size", "1048576", "--tmpfs", "/dev/shm"}),
            std::string::npos);
  EXPECT_LT(Find(args, {"--bind", "/data/j/a/algo-2/ml", "/opt/ml"}),
            Find(args, {"--ro-bind", "/srv/train"}));  // channels go over the job's tree
  const std::vector<std::string> tail = {
      "--",      kSandboxExec, "__jobexec", "--env-file", kSandboxEnvironment,
      "--uid",   "200001",     "--gid",     "200001",     "--",
      "/bin/sh", "-c",         "exit 0"};
  ASSERT_GE(args.size(), tail.size());
  EXPECT_EQ(
      std::vector<std::string>(args.end() - static_cast<std::ptrdiff_t>(tail.size()), args.end()),
      tail);
}

// The supervisor binds each channel from a descriptor: it finds the channel's pair among
// bwrap's own arguments, never in the job's command after bwrap's `--`.
TEST(BwrapArgsTest, FindReadOnlyBindLooksAtBwrapsOwnArgumentsOnly) {
  BwrapPlan plan = APlan();
  plan.command = {"/bin/echo", "--ro-bind", "/srv/other", "/x"};
  std::vector<std::string> args = BwrapArgs(plan);
  const std::size_t at = FindReadOnlyBind(args, "/srv/train");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(at, Find(args, {"--ro-bind", "/srv/train", "/opt/ml/input/data/train"}));
  EXPECT_EQ(FindReadOnlyBind(args, "/srv/other"), std::string::npos);
  EXPECT_EQ(FindReadOnlyBind(args, "/srv"), std::string::npos);
  args[at] = "--ro-bind-fd";  // what the supervisor makes of it: found no more
  EXPECT_EQ(FindReadOnlyBind(args, "/srv/train"), std::string::npos);
}

TEST(BwrapArgsTest, UncappedTmpAndNoUser) {
  BwrapPlan plan = APlan();
  plan.tmp_bytes = 0;
  plan.user.reset();
  const auto args = BwrapArgs(plan);
  EXPECT_EQ(Find(args, {"--size"}), std::string::npos);
  EXPECT_EQ(Find(args, {"--uid"}), std::string::npos);
}

TEST(SizesTest, ParseAndFormat) {
  struct Case {
    const char* text;
    std::int64_t bytes;
  };
  const Case kCases[] = {
      {"0", 0},          {"1048576", 1 << 20}, {"512M", 512LL << 20}, {"512MiB", 512LL << 20},
      {"8g", 8LL << 30}, {"1T", 1LL << 40},    {" 16K ", 16 << 10}};
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.text);
    const auto parsed = ParseBytes(c.text);
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(*parsed, c.bytes);
  }
  for (const char* bad : {"", "-1", "12Q", "G", "99999999999T"}) {
    EXPECT_EQ(ParseBytes(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(FormatBytes(10LL << 30), "10 GiB");
  EXPECT_EQ(FormatBytes(1536 << 10), "1536 KiB");
  EXPECT_EQ(FormatBytes(100), "100 B");
  EXPECT_EQ(DescribeLimits(
                JobUser{200001, 200001},
                {.memory_bytes = 8LL << 30, .pids = 4096, .tmp_bytes = 1 << 30, .disk_bytes = 0}),
            "uid=200001 gid=200001 memory=8 GiB pids=4096 tmp=1 GiB");
}

TEST(EnvironmentFileTest, RoundTripAndRefusals) {
  const std::map<std::string, std::string> env = {
      {"A", "1"}, {"EMPTY", ""}, {"JSON", R"({"a": "b=c"})"}, {"NL", "x\ny"}};
  const auto encoded = EncodeEnvironment(env);
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(DecodeEnvironment(*encoded), env);
  EXPECT_FALSE(EncodeEnvironment({{"A=B", "1"}}).ok());
  EXPECT_FALSE(EncodeEnvironment({{"A", std::string("a\0b", 3)}}).ok());
  EXPECT_EQ(CleanEnvironment().count("LD_PRELOAD"), 0U);
  EXPECT_EQ(CleanEnvironment().size(), 2U);  // PATH and LANG, nothing else
}

TEST(CgroupPlanTest, V1NestsUnderTheOwnGroups) {
  const std::string own = "8:pids:/svc\n4:memory:/process_api/abc\n0::/\n";
  const JobLimits limits{.memory_bytes = 256 << 20, .pids = 64};
  const CgroupPlan plan =
      PlanCgroups(own, true, true, "", "/sys/fs/cgroup", "j1-a1-algo-1-77", limits);
  EXPECT_EQ(plan.kind, CgroupKind::kV1);
  EXPECT_EQ(plan.dirs, (std::vector<std::string>{
                           "/sys/fs/cgroup/memory/process_api/abc/allot-jobs/j1-a1-algo-1-77",
                           "/sys/fs/cgroup/pids/svc/allot-jobs/j1-a1-algo-1-77"}));
  EXPECT_NE(std::find(plan.writes.begin(), plan.writes.end(),
                      std::pair<std::string, std::string>(
                          "/sys/fs/cgroup/memory/process_api/abc/allot-jobs/j1-a1-algo-1-77/"
                          "memory.limit_in_bytes",
                          "268435456")),
            plan.writes.end());
  EXPECT_NE(std::find(plan.writes.begin(), plan.writes.end(),
                      std::pair<std::string, std::string>(
                          "/sys/fs/cgroup/pids/svc/allot-jobs/j1-a1-algo-1-77/pids.max", "64")),
            plan.writes.end());
  EXPECT_EQ(plan.procs.size(), 2U);
}

TEST(CgroupPlanTest, V2WhereMemoryAndPidsAreThereAndNoneWithoutLimits) {
  const JobLimits limits{.memory_bytes = 1 << 30, .pids = 100};
  const CgroupPlan v2 = PlanCgroups("0::/system.slice/allot.service\n", false, false,
                                    "cpuset cpu io memory pids\n", "/sys/fs/cgroup", "h", limits);
  EXPECT_EQ(v2.kind, CgroupKind::kV2);
  EXPECT_EQ(v2.dirs,
            (std::vector<std::string>{"/sys/fs/cgroup/system.slice/allot.service/allot-jobs/h"}));
  EXPECT_EQ(v2.oom_events, "/sys/fs/cgroup/system.slice/allot.service/allot-jobs/h/memory.events");
  EXPECT_EQ(PlanCgroups("0::/x\n", false, false, "cpu io\n", "/sys/fs/cgroup", "h", limits).kind,
            CgroupKind::kNone);
  EXPECT_EQ(PlanCgroups("0::/x\n", true, true, "", "/sys/fs/cgroup", "h", JobLimits{}).kind,
            CgroupKind::kNone);
  EXPECT_EQ(OomKills("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n"), 3);
  EXPECT_EQ(OomKills("low 0\nhigh 0\n"), 0);
}

TEST(EtcTest, PasswdAndGroupNameTheJobsUser) {
  const JobUser user{200007, 200007};
  EXPECT_NE(PasswdFor(user).find("job:x:200007:200007:"), std::string::npos);
  EXPECT_NE(GroupFor(user).find("job:x:200007:"), std::string::npos);
  for (const std::string& file : EtcFiles()) {
    EXPECT_EQ(file.find("shadow"), std::string::npos);
    EXPECT_NE(file, "/etc/passwd");
  }
}

}  // namespace
}  // namespace allot::exec
