#include "exec/syscall_filter.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

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
#if defined(SYS_pipe)
  int fds[2];
  if (::syscall(SYS_pipe, fds) != 0) return 7;  // the old call (glibc's pipe() takes pipe2)
  ::close(fds[0]);
  ::close(fds[1]);
#endif
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

// The filter's program, run by the kernel's own interpreter of classic BPF, for system calls of
// every ABI it covers, whatever this machine serves (this VM faults on int 0x80, and its kernel
// has no x32): as a socket filter over a datagram that holds a seccomp_data. A socket filter's
// answer is how many bytes of the datagram are kept, so each return of the program is rewritten
// to a small code first (the jumps and comparisons that choose it run unchanged), and the
// received length is the code. A socket filter's absolute loads read in network byte order, so
// the seccomp_data's 32-bit words are written big-endian.
class ProgramRun {
 public:
  static constexpr int kAllow = 3000;
  static constexpr int kKillProcess = 2001;
  static constexpr int kOther = 2003;

  explicit ProgramRun(std::vector<sock_filter> program) : program_(std::move(program)) {
    for (sock_filter& op : program_) {
      if (BPF_CLASS(op.code) != BPF_RET) continue;
      returns_by_value_ = returns_by_value_ && BPF_RVAL(op.code) == BPF_K;
      const std::uint32_t action = op.k & SECCOMP_RET_ACTION_FULL;
      if (action == SECCOMP_RET_ALLOW) {
        op.k = kAllow;
      } else if (action == SECCOMP_RET_ERRNO) {
        op.k = 1000 + (op.k & SECCOMP_RET_DATA);  // 1000 + errno
      } else if (action == SECCOMP_RET_KILL_PROCESS) {
        op.k = kKillProcess;
      } else {
        op.k = kOther;
      }
    }
  }
  bool returns_by_value() const { return returns_by_value_; }

  // What the filter does with system call `nr` of `arch`: kAllow, kKillProcess, kOther, or
  // 1000 + the errno it answers; -1 when the run itself failed.
  int Run(std::uint32_t arch, std::uint32_t nr, std::uint64_t arg0 = 0) const {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_DGRAM, 0, fds) != 0) return -1;
    sock_fprog fprog{static_cast<unsigned short>(program_.size()),
                     const_cast<sock_filter*>(program_.data())};
    int code = -1;
    if (::setsockopt(fds[1], SOL_SOCKET, SO_ATTACH_FILTER, &fprog, sizeof fprog) == 0) {
      std::vector<unsigned char> datagram(4096, 0);
      auto put = [&datagram](std::size_t at, std::uint32_t word) {
        const std::uint32_t big = htonl(word);
        std::memcpy(datagram.data() + at, &big, sizeof big);
      };
      put(offsetof(seccomp_data, nr), nr);
      put(offsetof(seccomp_data, arch), arch);
      // args[0] as a little-endian machine holds it: its low word first.
      put(offsetof(seccomp_data, args), static_cast<std::uint32_t>(arg0));
      put(offsetof(seccomp_data, args) + 4, static_cast<std::uint32_t>(arg0 >> 32));
      if (::send(fds[0], datagram.data(), datagram.size(), 0) ==
          static_cast<ssize_t>(datagram.size())) {
        std::vector<unsigned char> got(datagram.size());
        const ssize_t n = ::recv(fds[1], got.data(), got.size(), MSG_DONTWAIT);
        code = static_cast<int>(n);
      }
    }
    ::close(fds[0]);
    ::close(fds[1]);
    return code;
  }

 private:
  std::vector<sock_filter> program_;
  bool returns_by_value_ = true;
};

#if defined(__x86_64__)
TEST(SyscallFilterTest, EveryAbiOfTheMachineMeetsTheSameRules) {
  const Result<std::vector<sock_filter>> program = JobSyscallFilterProgram();
  ASSERT_TRUE(program.ok()) << program.status().message();
  const ProgramRun run(*program);
  ASSERT_TRUE(run.returns_by_value());
  constexpr std::uint32_t kX8664 = AUDIT_ARCH_X86_64;
  constexpr std::uint32_t kI386 = AUDIT_ARCH_I386;
  constexpr std::uint32_t kX32Bit = 0x40000000;  // __X32_SYSCALL_BIT: x32 calls under x86_64
  constexpr int kEnosys = 1000 + ENOSYS;
  constexpr int kEperm = 1000 + EPERM;
  // x86_64 (what the tests above call for real), then 32-bit x86 and x32.
  EXPECT_EQ(run.Run(kX8664, 425), kEnosys);                // io_uring_setup
  EXPECT_EQ(run.Run(kX8664, 272, CLONE_NEWUSER), kEperm);  // unshare
  EXPECT_EQ(run.Run(kX8664, 272, CLONE_FILES), ProgramRun::kAllow);
  EXPECT_EQ(run.Run(kX8664, 39), ProgramRun::kAllow);               // getpid
  EXPECT_EQ(run.Run(kX8664, 22), ProgramRun::kAllow);               // pipe
  EXPECT_EQ(run.Run(kI386, 42), ProgramRun::kAllow);                // pipe
  EXPECT_EQ(run.Run(kI386, 425), kEnosys);                          // io_uring_setup
  EXPECT_EQ(run.Run(kI386, 310, CLONE_NEWUSER), kEperm);            // unshare
  EXPECT_EQ(run.Run(kI386, 120, CLONE_NEWUSER | SIGCHLD), kEperm);  // clone
  EXPECT_EQ(run.Run(kI386, 120, SIGCHLD), ProgramRun::kAllow);
  EXPECT_EQ(run.Run(kI386, 288), kEperm);                            // keyctl
  EXPECT_EQ(run.Run(kI386, 22), kEperm);                             // umount, 32-bit only
  EXPECT_EQ(run.Run(kI386, 357), kEperm);                            // bpf
  EXPECT_EQ(run.Run(kI386, 20), ProgramRun::kAllow);                 // getpid
  EXPECT_EQ(run.Run(kX8664, kX32Bit | 425), kEnosys);                // io_uring_setup
  EXPECT_EQ(run.Run(kX8664, kX32Bit | 272, CLONE_NEWUSER), kEperm);  // unshare
  EXPECT_EQ(run.Run(kX8664, kX32Bit | 250), kEperm);                 // keyctl
  EXPECT_EQ(run.Run(kX8664, kX32Bit | 39), ProgramRun::kAllow);      // getpid
  // Another architecture's call ends the process.
  EXPECT_EQ(run.Run(AUDIT_ARCH_AARCH64, 39), ProgramRun::kKillProcess);
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
