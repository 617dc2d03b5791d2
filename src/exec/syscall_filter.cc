#include "exec/syscall_filter.h"

#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>

// unshare's and clone's flags are their first argument on these; on s390 clone's are its
// second, and the rules below would miss them.
#if !defined(__x86_64__) && !defined(__aarch64__)
#error "the job system call filter is written for x86_64 and arm64"
#endif

namespace allot::exec {
namespace {

struct ErrnoRule {
  const char* name;
  int error;
};

// ENOSYS where the caller should carry on without the call (it looks absent), EPERM where the
// job is refused something it asked for.
constexpr ErrnoRule kRefused[] = {
    {"io_uring_setup", ENOSYS},
    {"io_uring_enter", ENOSYS},
    {"io_uring_register", ENOSYS},
    {"clone3", ENOSYS},  // its flags lie in memory, out of a filter's sight: libc uses clone
    {"setns", EPERM},
    {"bpf", EPERM},
    {"perf_event_open", EPERM},
    {"userfaultfd", EPERM},
    {"keyctl", EPERM},
    {"add_key", EPERM},
    {"request_key", EPERM},
    {"init_module", EPERM},
    {"finit_module", EPERM},
    {"delete_module", EPERM},
    {"kexec_load", EPERM},
    {"kexec_file_load", EPERM},
    {"mount", EPERM},
    {"umount2", EPERM},
    {"pivot_root", EPERM},
    {"fsopen", EPERM},
    {"fsmount", EPERM},
    {"fspick", EPERM},
    {"fsconfig", EPERM},
    {"move_mount", EPERM},
    {"open_tree", EPERM},
    {"mount_setattr", EPERM},
    {"swapon", EPERM},
    {"swapoff", EPERM},
    {"reboot", EPERM},
    {"acct", EPERM},
    {"syslog", EPERM},
    {"open_by_handle_at", EPERM},
};

// A call of the 32-bit x86 ABI alone (x86_64 has no such number). Its rule is added by name:
// libseccomp's number for it on the native ABI is a pseudo-number, which it translates for each
// ABI of the filter that has the call. The x86 number itself would be read as a native one (22
// is x86_64's `pipe`, which every job then lost, while the 32-bit umount stayed open).
constexpr ErrnoRule kRefusedX86[] = {{"umount", EPERM}};

// The flag that makes unshare and clone start a user namespace.
constexpr scmp_datum_t kNewUser = CLONE_NEWUSER;

Status Failed(const char* what, int rc) {
  return Internal(std::string("system call filter: ") + what + ": " + std::strerror(-rc));
}

}  // namespace

const std::vector<std::string>& RefusedSyscalls() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> out;
    for (const ErrnoRule& rule : kRefused) out.emplace_back(rule.name);
    return out;
  }();
  return kNames;
}

namespace {

using FilterContext = std::unique_ptr<void, void (*)(scmp_filter_ctx)>;

// The filter, built and not yet loaded.
Result<FilterContext> BuildFilter() {
  FilterContext ctx(seccomp_init(SCMP_ACT_ALLOW), seccomp_release);
  if (ctx == nullptr) return Internal("system call filter: seccomp_init failed");
  // A system call of an architecture the filter does not name ends the process.
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
      rc != 0) {
    return Failed("the action for other architectures", rc);
  }
#if defined(__x86_64__)
  // The same rules for the 32-bit and x32 entry points, which a 64-bit process can call too.
  for (const uint32_t arch :
       {static_cast<uint32_t>(SCMP_ARCH_X86), static_cast<uint32_t>(SCMP_ARCH_X32)}) {
    if (int rc = seccomp_arch_add(ctx.get(), arch); rc != 0 && rc != -EEXIST) {
      return Failed("adding an architecture", rc);
    }
  }
#endif
  for (const ErrnoRule& rule : kRefused) {
    // Every name is a system call of x86_64 and arm64. One this libseccomp does not know (older
    // than the call, as 2.4 is for clone3 and io_uring) would leave the call open: the filter
    // is refused then, and so is the job.
    const int nr = seccomp_syscall_resolve_name(rule.name);
    if (nr == __NR_SCMP_ERROR) {
      return Internal(std::string("system call filter: this libseccomp does not know ") +
                      rule.name + " (2.5 or later is needed)");
    }
    if (int rc =
            seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(static_cast<uint32_t>(rule.error)), nr, 0);
        rc != 0) {
      return Failed(rule.name, rc);
    }
  }
#if defined(__x86_64__)
  for (const ErrnoRule& rule : kRefusedX86) {
    const int nr = seccomp_syscall_resolve_name(rule.name);
    if (nr == __NR_SCMP_ERROR) return Failed(rule.name, -ENOSYS);
    if (int rc =
            seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(static_cast<uint32_t>(rule.error)), nr, 0);
        rc != 0) {
      return Failed(rule.name, rc);
    }
  }
#endif
  // vsock reaches the hypervisor of a virtual machine, which a job has no business with.
  if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
                                SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(AF_VSOCK)));
      rc != 0) {
    return Failed("socket", rc);
  }
  for (const char* name : {"unshare", "clone"}) {
    const int nr = seccomp_syscall_resolve_name(name);
    // unshare's flags and clone's (on x86 and arm64 alike) are the first argument.
    if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), nr, 1,
                                  SCMP_A0(SCMP_CMP_MASKED_EQ, kNewUser, kNewUser));
        rc != 0) {
      return Failed(name, rc);
    }
  }
  return ctx;
}

}  // namespace

Status LoadJobSyscallFilter() {
  Result<FilterContext> ctx = BuildFilter();
  if (!ctx.ok()) return ctx.status();
  if (int rc = seccomp_load(ctx->get()); rc != 0) return Failed("loading it", rc);
  return Status::Ok();
}

Result<std::vector<sock_filter>> JobSyscallFilterProgram() {
  Result<FilterContext> ctx = BuildFilter();
  if (!ctx.ok()) return ctx.status();
  const int fd = ::memfd_create("allot-seccomp-bpf", MFD_CLOEXEC);
  if (fd < 0) return Internal(std::string("memfd_create: ") + std::strerror(errno));
  std::vector<sock_filter> program;
  Status status = Status::Ok();
  if (int rc = seccomp_export_bpf(ctx->get(), fd); rc != 0) {
    status = Failed("exporting it", rc);
  } else {
    const off_t size = ::lseek(fd, 0, SEEK_END);
    program.resize(static_cast<std::size_t>(std::max<off_t>(size, 0)) / sizeof(sock_filter));
    const auto bytes = static_cast<ssize_t>(program.size() * sizeof(sock_filter));
    if (size < 0 || ::pread(fd, program.data(), static_cast<std::size_t>(bytes), 0) != bytes) {
      status = Internal("system call filter: the exported program could not be read back");
    }
  }
  ::close(fd);
  if (!status.ok()) return status;
  return program;
}

Status ProbeJobSyscallFilter() {
  Status result = Status::Ok();
  try {
    // no_new_privs and the filter are the calling thread's (no TSYNC): both end with it.
    std::thread([&result] {
      if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        result = Internal(std::string("system call filter: no_new_privs: ") + std::strerror(errno));
        return;
      }
      result = LoadJobSyscallFilter();
      if (!result.ok()) return;
      std::array<char, 120> params{};  // struct io_uring_params, zeroed
      if (::syscall(SYS_io_uring_setup, 1, params.data()) >= 0 || errno != ENOSYS) {
        result = Internal("system call filter: loaded, but io_uring_setup was not refused");
      } else if (::syscall(SYS_keyctl, 0, -3, 0) >= 0 || errno != EPERM) {  // the session ring
        result = Internal("system call filter: loaded, but keyctl was not refused");
      }
    }).join();
  } catch (const std::exception& e) {
    return Internal(std::string("system call filter: no thread to probe it on: ") + e.what());
  }
  return result;
}

}  // namespace allot::exec
