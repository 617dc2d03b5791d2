#include "exec/syscall_filter.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <string>
#include <thread>

namespace allot::exec {
namespace {

// The errno of a raw system call, 0 when it succeeded.
int ErrnoOf(long result) { return result < 0 ? errno : 0; }

// Runs `check` in a child with the filter loaded (as `allot __jobexec` loads it: no_new_privs
// first) and returns the child's exit status: 0 when every expectation held, else the number
// of the first that did not.
int InFilteredChild(int (*check)()) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(100);
    if (!LoadJobSyscallFilter().ok()) ::_exit(101);
    ::_exit(check());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

int RefusedCalls() {
  char params[120] = {};
  if (ErrnoOf(::syscall(SYS_io_uring_setup, 1, params)) != ENOSYS) return 1;
  if (ErrnoOf(::syscall(SYS_clone3, nullptr, 0)) != ENOSYS) return 2;
  if (ErrnoOf(::unshare(CLONE_NEWUSER)) != EPERM) return 3;
  if (ErrnoOf(::unshare(CLONE_NEWUSER | CLONE_NEWNS)) != EPERM) return 4;
  if (ErrnoOf(::syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)) != EPERM) return 5;
  if (ErrnoOf(::syscall(SYS_keyctl, 0, -3, 0)) != EPERM) return 6;
  if (ErrnoOf(::syscall(SYS_userfaultfd, 1)) != EPERM) return 7;
  if (ErrnoOf(::syscall(SYS_bpf, 0, nullptr, 0)) != EPERM) return 8;
  if (ErrnoOf(::syscall(SYS_perf_event_open, nullptr, 0, -1, -1, 0)) != EPERM) return 9;
  if (ErrnoOf(::syscall(SYS_setns, 0, 0)) != EPERM) return 10;
  if (ErrnoOf(::socket(AF_VSOCK, SOCK_STREAM, 0)) != EPERM) return 11;
  return 0;
}

// What a job needs still works: processes, threads, and unshare without a user namespace.
int OrdinaryCalls() {
  const pid_t pid = ::fork();
  if (pid < 0) return 1;
  if (pid == 0) ::_exit(7);
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 7) {
    return 2;
  }
  bool ran = false;
  std::thread([&ran] { ran = true; }).join();  // the C library falls back from clone3 to clone
  if (!ran) return 3;
  if (::unshare(CLONE_FILES) != 0) return 4;
  if (::getpid() <= 0) return 5;
  const int tcp = ::socket(AF_INET, SOCK_STREAM, 0);  // other socket families stay open
  if (tcp < 0) return 6;
  ::close(tcp);
  return 0;
}

TEST(SyscallFilterTest, RefusesTheKernelInterfacesAJobHasNoNeedOf) {
  EXPECT_EQ(InFilteredChild(&RefusedCalls), 0);
}

TEST(SyscallFilterTest, LeavesProcessesAndThreadsAlone) {
  EXPECT_EQ(InFilteredChild(&OrdinaryCalls), 0);
}

// A 32-bit x86 system call (int 0x80) meets the same rules: io_uring_setup is 425 there too.
#if defined(__x86_64__)
int Int80IoUringSetup() {
  long result = 0;
  asm volatile("int $0x80" : "=a"(result) : "a"(425L), "b"(1L), "c"(0L) : "memory");
  return result == -ENOSYS ? 0 : 1;
}

// Whether this machine serves 32-bit system calls at all (some VMs fault on int 0x80).
bool Int80Works() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    long result = 0;
    asm volatile("int $0x80" : "=a"(result) : "a"(20L) : "memory");  // getpid
    ::_exit(result > 0 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(SyscallFilterTest, TheThirtyTwoBitEntryMeetsTheSameRules) {
  if (!Int80Works()) GTEST_SKIP() << "this machine does not serve int 0x80";
  EXPECT_EQ(InFilteredChild(&Int80IoUringSetup), 0);
}
#endif

// The start's probe loads the filter on a thread of its own and leaves the rest of the process
// as it was: here, after it, the calls it refused answer as they did before it.
int IoUringSetupErrno() {
  char params[120] = {};
  const long ring = ::syscall(SYS_io_uring_setup, 1, params);
  if (ring < 0) return errno;
  ::close(static_cast<int>(ring));
  return 0;
}

TEST(SyscallFilterTest, TheStartsProbeLeavesTheProcessUnfiltered) {
  // A container runtime's own filter may refuse these already: compare with before.
  const int keyctl_before = ErrnoOf(::syscall(SYS_keyctl, 0, -3, 0));  // the session key ring
  const int io_uring_before = IoUringSetupErrno();
  const Status probe = ProbeJobSyscallFilter();
  ASSERT_TRUE(probe.ok()) << probe.message();
  EXPECT_EQ(ErrnoOf(::syscall(SYS_keyctl, 0, -3, 0)), keyctl_before);
  EXPECT_EQ(IoUringSetupErrno(), io_uring_before);
  std::printf("keyctl errno %d, io_uring_setup errno %d, before and after the probe\n",
              keyctl_before, io_uring_before);
}

TEST(SyscallFilterTest, NamesWhatItRefuses) {
  const auto& names = RefusedSyscalls();
  for (const char* name : {"io_uring_setup", "bpf", "keyctl", "userfaultfd", "perf_event_open"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

}  // namespace
}  // namespace allot::exec
