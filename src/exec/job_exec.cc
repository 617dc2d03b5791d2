#include "exec/job_exec.h"

#include <grp.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "env/files.h"
#include "exec/ipc_scope.h"
#include "exec/sandbox.h"
#include "exec/syscall_filter.h"

extern "C" char** environ;  // NOLINT(readability-redundant-declaration)

namespace allot::exec {
namespace {

struct JobExecArgs {
  std::string env_file;
  std::optional<JobUser> user;
  std::vector<std::string> command;
};

bool ParseId(const char* text, unsigned& out) {
  const char* end = text + std::strlen(text);
  const auto [ptr, error] = std::from_chars(text, end, out);
  return error == std::errc() && ptr == end && end != text;
}

std::optional<JobExecArgs> ParseJobExecArgs(int argc, char** argv) {
  JobExecArgs args;
  std::optional<unsigned> uid;
  std::optional<unsigned> gid;
  int i = 0;
  for (; i + 1 < argc && std::strcmp(argv[i], "--") != 0; i += 2) {
    const std::string flag = argv[i];
    unsigned id = 0;
    if (flag == "--env-file") {
      args.env_file = argv[i + 1];
    } else if (flag == "--uid" && ParseId(argv[i + 1], id)) {
      uid = id;
    } else if (flag == "--gid" && ParseId(argv[i + 1], id)) {
      gid = id;
    } else {
      return std::nullopt;
    }
  }
  if (i >= argc || std::strcmp(argv[i], "--") != 0) return std::nullopt;
  for (++i; i < argc; ++i) args.command.emplace_back(argv[i]);
  if (args.env_file.empty() || args.command.empty() || uid.has_value() != gid.has_value()) {
    return std::nullopt;
  }
  if (uid) args.user = JobUser{static_cast<uid_t>(*uid), static_cast<gid_t>(*gid)};
  return args;
}

Status Errno(const std::string& what) { return Internal(what + ": " + std::strerror(errno)); }

// Every capability set but the bounding set, emptied (effective, permitted, inheritable).
Status ClearCapabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &header, data) != 0) return Errno("capset");
  return Status::Ok();
}

Status CheckNoCapabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return Errno("capget");
  for (const auto& d : data) {
    if (d.effective != 0 || d.permitted != 0 || d.inheritable != 0) {
      return Internal("capabilities are left after dropping privileges");
    }
  }
  return Status::Ok();
}

// Becomes `user` for good: no groups, no capabilities, and none to be had again.
Status DropTo(const JobUser& user) {
  if (user.uid == 0 || user.gid == 0) return InvalidArgument("a job never runs as uid or gid 0");
  for (int cap = 0; cap <= 63; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
      return Errno("cannot empty the capability bounding set");
    }
  }
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);  // EINVAL before Linux 4.3
  if (::setgroups(0, nullptr) != 0) return Errno("setgroups");
  if (::setresgid(user.gid, user.gid, user.gid) != 0) return Errno("setresgid");
  if (::setresuid(user.uid, user.uid, user.uid) != 0) return Errno("setresuid");
  ALLOT_RETURN_IF_ERROR(ClearCapabilities());
  uid_t r = 0;
  uid_t e = 0;
  uid_t s = 0;
  if (::getresuid(&r, &e, &s) != 0 || r != user.uid || e != user.uid || s != user.uid) {
    return Internal("the uid did not change");
  }
  return Status::Ok();
}

Status Seal(const JobExecArgs& args) {
  if (args.user) ALLOT_RETURN_IF_ERROR(DropTo(*args.user));
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Errno("no_new_privs");
  if (args.user || ::geteuid() != 0) ALLOT_RETURN_IF_ERROR(CheckNoCapabilities());
  // Its abstract UNIX sockets and signals are its own (where the kernel offers the scopes).
  if (const Result<bool> scoped = ScopeJobIpc(); !scoped.ok()) return scoped.status();
  return LoadJobSyscallFilter();  // last: the steps above need calls it refuses
}

}  // namespace

Status BecomeJobUser(const JobUser& user) {
  ALLOT_RETURN_IF_ERROR(DropTo(user));
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Errno("no_new_privs");
  return CheckNoCapabilities();
}

int JobExecMain(int argc, char** argv) {
  const std::optional<JobExecArgs> args = ParseJobExecArgs(argc, argv);
  if (!args) {
    std::fprintf(stderr,
                 "usage: allot __jobexec --env-file FILE [--uid U --gid G] -- COMMAND...\n");
    return 2;
  }
  // Read while still privileged: the file is root's, not the job's.
  const Result<std::string> text = env::ReadFile(args->env_file);
  if (!text.ok()) {
    std::fprintf(stderr, "allot: cannot start the job: %s\n", text.status().message().c_str());
    return 127;
  }
  const Status sealed = Seal(*args);
  if (!sealed.ok()) {
    std::fprintf(stderr, "allot: cannot start the job: %s\n", sealed.message().c_str());
    return 127;
  }
  const std::map<std::string, std::string> environment = DecodeEnvironment(*text);
  std::vector<std::string> env_storage;
  env_storage.reserve(environment.size());
  for (const auto& [name, value] : environment) env_storage.push_back(name + "=" + value);
  std::vector<char*> envp;
  envp.reserve(env_storage.size() + 1);
  for (std::string& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_storage = args->command;
  std::vector<char*> command;
  command.reserve(argv_storage.size() + 1);
  for (std::string& a : argv_storage) command.push_back(a.data());
  command.push_back(nullptr);
  // bwrap was started with SIGTERM ignored (spawn.h); the job gets the default disposition.
  ::signal(SIGTERM, SIG_DFL);
  environ = envp.data();  // execvp searches the job's PATH
  ::execvp(command[0], command.data());
  std::fprintf(stderr, "allot: cannot run '%s': %s\n", command[0], std::strerror(errno));
  return 127;
}

}  // namespace allot::exec
