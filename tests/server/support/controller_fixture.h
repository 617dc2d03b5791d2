#pragma once

// The controller over a real SQLite store behind store::FaultyStore (fails on demand), with the
// real local executor and no sandbox: what the controller's C++ tests share.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/decode.h"
#include "env/process.h"
#include "server/api_error.h"
#include "server/config_codec.h"
#include "server/controller.h"
#include "server/job_codec.h"
#include "server/support/test_dir.h"
#include "server/wire_call.h"
#include "store/faulty_store.h"

namespace allot::server {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The stand-in for `allot __supervise`, built next to the test programs.
inline std::string SupervisorExe() {
  return (fs::read_symlink("/proc/self/exe").parent_path() / "exec_supervise_main").string();
}

inline std::string Payload(const std::string& script) {
  return Json{{"AlgorithmSpecification",
               {{"ContainerEntrypoint", {"/bin/sh", "-c"}}, {"ContainerArguments", {script}}}},
              {"ResourceConfig", {{"InstanceType", "ml.g5.xlarge"}, {"InstanceCount", 1}}}}
      .dump();
}

// A controller over a real SQLite store in `dir`, behind a FaultyStore (`*store` gets it).
inline std::unique_ptr<Controller> StartOverFaultyStore(const Options& options, const fs::path& dir,
                                                        store::FaultyStore** store) {
  fs::create_directories(dir);
  auto inner = store::OpenSqliteStore({.path = (dir / "allot.db").string()});
  EXPECT_TRUE(inner.ok()) << inner.status().ToString();
  if (!inner.ok()) return nullptr;
  auto faulty = std::make_unique<store::FaultyStore>(std::move(inner).value());
  *store = faulty.get();
  auto c = Controller::Start(options, std::move(faulty));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : nullptr;
}

// CreateQuotaShare of share "team" in queue q: one ml.g5.xlarge, RESERVE.
inline Json TeamShareInQ() {
  return {{"quotaShareName", "team"},
          {"jobQueue", "q"},
          {"capacityLimits", {{{"capacityUnit", "ml.g5.xlarge"}, {"maxCapacity", 1}}}},
          {"resourceSharingConfiguration", {{"strategy", "RESERVE"}}},
          {"preemptionConfiguration", {{"inSharePreemption", "DISABLED"}}}};
}

// Kills what a test's jobs left running (one whose stop the test dropped, then ended in its
// record, is never stopped): every process whose command line or working directory is under
// `dir`, with its process group. Without it such a job outlived the test, and its directory.
inline void KillProcessesUnder(const fs::path& dir) {
  const std::string prefix = dir.string() + "/";
  for (const pid_t pid : env::AllProcesses()) {
    const std::string proc = "/proc/" + std::to_string(pid);
    std::ifstream in(proc + "/cmdline", std::ios::binary);
    const std::string cmdline((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    std::error_code ec;
    const std::string cwd = fs::read_symlink(proc + "/cwd", ec).string();
    if (cmdline.find(prefix) == std::string::npos && !cwd.starts_with(prefix)) continue;
    const pid_t group = ::getpgid(pid);
    if (group > 1 && group != ::getpgrp()) ::kill(-group, SIGKILL);
    ::kill(pid, SIGKILL);
  }
}

class ControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("allot-controller");
    Start();
    ASSERT_TRUE(Call("createserviceenvironment",
                     {{"serviceEnvironmentName", "env"},
                      {"serviceEnvironmentType", "SAGEMAKER_TRAINING"},
                      {"capacityLimits", {{{"capacityUnit", "ml.g5.xlarge"}, {"maxCapacity", 2}}}}})
                    .ok());
    ASSERT_TRUE(Call("createjobqueue",
                     {{"jobQueueName", "q"},
                      {"priority", 1},
                      {"serviceEnvironmentOrder", {{{"order", 1}, {"serviceEnvironment", "env"}}}}})
                    .ok());
  }
  void TearDown() override {
    controller_.reset();
    KillProcessesUnder(dir_);
    // A job's supervisor outlives the controller (a restart adopts it) and may still be writing
    // its status file: a removal that races with it is tried again, and a leftover temporary
    // directory is no failure.
    std::error_code ec;
    for (int tries = 0; tries < 20 && (fs::remove_all(dir_, ec), ec); ++tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  void Start() {
    Options options = options_;
    options.data_dir = dir_.string();
    options.sandbox = false;
    options.stop_grace = Seconds(2);
    options.supervisor_exe = SupervisorExe();
    options.list_scan_budget = list_scan_budget_;
    options.wrap_executor = wrap_executor_;
    controller_ = StartOverFaultyStore(options, dir_, &store_);
    ASSERT_NE(controller_, nullptr);
  }

  // One call, as the HTTP layer makes it: the answer counts once its batch is durable.
  Result<Json> Call(const std::string& action, const Json& request) {
    Result<WireReply> answer = CallAction(*controller_, action, request);
    if (!answer.ok()) return answer.status();
    WireReply reply = std::move(answer).value();
    if (reply.durable.valid()) {
      const Status s = reply.durable.get();
      if (!s.ok()) return s;
    }
    return reply.body;
  }

  // Job queue `name` under scheduling `policy`, on a service environment of its own (`name`-env,
  // two ml.g5.xlarge): an environment serves one queue.
  void MakePolicyQueue(const std::string& name, const std::string& policy) {
    const std::string env = name + "-env";
    ASSERT_TRUE(Call("createserviceenvironment",
                     {{"serviceEnvironmentName", env},
                      {"serviceEnvironmentType", "SAGEMAKER_TRAINING"},
                      {"capacityLimits", {{{"capacityUnit", "ml.g5.xlarge"}, {"maxCapacity", 2}}}}})
                    .ok());
    Result<Json> made =
        Call("createjobqueue",
             {{"jobQueueName", name},
              {"priority", 2},
              {"schedulingPolicyArn", policy},
              {"serviceEnvironmentOrder", {{{"order", 1}, {"serviceEnvironment", env}}}}});
    ASSERT_TRUE(made.ok()) << made.status().ToString();
  }

  std::string Submit(const std::string& name, const std::string& script,
                     const std::string& queue = "q") {
    Result<Json> r = Call("submitservicejob", {{"jobName", name},
                                               {"jobQueue", queue},
                                               {"serviceJobType", "SAGEMAKER_TRAINING"},
                                               {"serviceRequestPayload", Payload(script)}});
    return r.ok() ? r.value()["jobId"].get<std::string>() : "";
  }

  std::string StatusOf(const std::string& id) {
    Result<Json> d = Call("describeservicejob", {{"jobId", id}});
    return d.ok() ? d.value()["status"].get<std::string>() : "unavailable";
  }

  bool WaitFor(const std::function<bool()>& done, int seconds = 20) {
    const auto deadline = Clock::now() + std::chrono::seconds(seconds);
    while (Clock::now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  std::vector<std::string> ListedNames(const std::string& status) {
    Result<Json> r = Call("listservicejobs", {{"jobQueue", "q"}, {"jobStatus", status}});
    std::vector<std::string> names;
    if (r.ok()) {
      for (const Json& j : r.value()["jobSummaryList"]) names.push_back(j["jobName"]);
    }
    return names;
  }

  fs::path dir_;
  Options options_;  // the base of each Start()'s options
  std::size_t list_scan_budget_ = 20'000;
  std::function<std::unique_ptr<exec::Executor>(std::unique_ptr<exec::Executor>)> wrap_executor_;
  store::FaultyStore* store_ = nullptr;
  std::unique_ptr<Controller> controller_;
};

}  // namespace allot::server
