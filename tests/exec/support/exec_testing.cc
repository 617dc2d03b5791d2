#include "exec/support/exec_testing.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "exec/host_files.h"

namespace allot::exec::testing {

exec::Callbacks Recorder::Callbacks() {
  exec::Callbacks callbacks;
  callbacks.started = [this](model::JobId job, int attempt, const std::vector<HostProcess>& hosts) {
    std::lock_guard<std::mutex> lock(mu_);
    started_.push_back(StartedEvent{job, attempt, hosts, std::this_thread::get_id()});
    log_.push_back("started " + std::to_string(job) + "/" + std::to_string(attempt));
    cv_.notify_all();
  };
  callbacks.checkpoint = [this](model::JobId job, int attempt, Timestamp newest) {
    std::lock_guard<std::mutex> lock(mu_);
    checkpoints_.emplace_back(job, attempt, newest);
    log_.push_back("checkpoint " + std::to_string(job) + "/" + std::to_string(attempt));
    cv_.notify_all();
  };
  callbacks.ended = [this](const AttemptExit& exit) {
    std::lock_guard<std::mutex> lock(mu_);
    ended_.push_back(exit);
    log_.push_back("ended " + std::to_string(exit.job) + "/" + std::to_string(exit.attempt));
    cv_.notify_all();
  };
  return callbacks;
}

std::optional<AttemptExit> Recorder::WaitEnded(model::JobId job, int attempt) {
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<AttemptExit> found;
  cv_.wait_for(lock, kWaitLimit, [&] {
    for (const AttemptExit& e : ended_) {
      if (e.job == job && e.attempt == attempt) found = e;
    }
    return found.has_value();
  });
  return found;
}

std::optional<StartedEvent> Recorder::WaitStarted(model::JobId job, int attempt) {
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<StartedEvent> found;
  cv_.wait_for(lock, kWaitLimit, [&] {
    for (const StartedEvent& e : started_) {
      if (e.job == job && e.attempt == attempt) found = e;
    }
    return found.has_value();
  });
  return found;
}

std::optional<Timestamp> Recorder::WaitCheckpoint(model::JobId job, int attempt,
                                                  Timestamp at_least) {
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<Timestamp> found;
  cv_.wait_for(lock, kWaitLimit, [&] {
    for (const auto& [j, a, t] : checkpoints_) {
      if (j == job && a == attempt && t >= at_least) found = t;
    }
    return found.has_value();
  });
  return found;
}

std::vector<StartedEvent> Recorder::started() const {
  std::lock_guard<std::mutex> lock(mu_);
  return started_;
}

std::vector<AttemptExit> Recorder::ended() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ended_;
}

std::vector<std::string> Recorder::log() const {
  std::lock_guard<std::mutex> lock(mu_);
  return log_;
}

ScratchDir::ScratchDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/allot-exec-test-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) != nullptr) path_ = buffer.data();
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  std::error_code error;
  std::filesystem::remove_all(path_, error);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

bool WaitForFileContaining(const std::string& path, const std::string& text) {
  const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ReadFile(path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

bool WaitUntilGone(pid_t pid) {
  const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
  const std::string stat_path = "/proc/" + std::to_string(pid) + "/stat";
  while (std::chrono::steady_clock::now() < deadline) {
    if (::kill(pid, 0) < 0 && errno == ESRCH) return true;
    // "pid (comm) S ...": the state follows the last ')'.
    const std::string stat = ReadFile(stat_path);
    const std::size_t paren = stat.rfind(')');
    if (stat.empty()) return true;
    if (paren != std::string::npos && paren + 2 < stat.size() &&
        (stat[paren + 2] == 'Z' || stat[paren + 2] == 'X')) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

std::optional<std::int64_t> FindNumber(const std::string& text, const std::string& key) {
  const std::size_t at = text.find(key + "=");
  if (at == std::string::npos) return std::nullopt;
  std::size_t i = at + key.size() + 1;
  std::int64_t value = 0;
  bool any = false;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    value = value * 10 + (text[i] - '0');
    any = true;
    ++i;
  }
  if (!any) return std::nullopt;
  return value;
}

std::string SupervisorExe() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return (self.parent_path() / "exec_supervise_main").string();
}

LayoutOptions NoSandbox() {
  LayoutOptions options;
  options.sandbox = false;
  return options;
}

pid_t JobPid(const std::string& host_dir) {
  const Result<SupervisorRecord> record = ReadSupervisorRecord(host_dir);
  return record.ok() ? record->child_pid : 0;
}

void KillHost(const std::string& host_dir, pid_t supervisor) {
  const pid_t job = JobPid(host_dir);
  if (job > 0) ::kill(-job, SIGKILL);
  int wstatus = 0;
  while (::waitpid(supervisor, &wstatus, 0) < 0 && errno == EINTR) {
  }
}

LaunchSpec ShellSpec(model::JobId job, int attempt, const std::string& script, int hosts,
                     const std::string& attempt_dir) {
  LaunchSpec spec;
  spec.job = job;
  spec.attempt = attempt;
  spec.name = "job-" + std::to_string(job);
  spec.argv = {"/bin/sh", "-c", script};
  spec.instance_type = "ml.m5.large";
  spec.instance_count = hosts;
  spec.attempt_dir = attempt_dir;
  spec.job_dir = attempt_dir + ".job";
  spec.self_exe = SupervisorExe();
  return spec;
}

}  // namespace allot::exec::testing
