#include "exec/ipc_scope.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

namespace allot::exec {
namespace {

// An abstract address: a NUL, then the name (no file, no permission).
sockaddr_un Abstract(const std::string& name, socklen_t& length) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return address;
}

int Listen(const std::string& name) {
  socklen_t length = 0;
  const sockaddr_un address = Abstract(name, length);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0 ||
      ::listen(fd, 4) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The errno of a connect to the abstract socket `name`, 0 when it connected.
int ConnectErrno(const std::string& name) {
  socklen_t length = 0;
  const sockaddr_un address = Abstract(name, length);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return errno;
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), length);
  const int error = rc == 0 ? 0 : errno;
  ::close(fd);
  return error;
}

// In a scoped child (as `allot __jobexec` scopes a job: no_new_privs first): another process's
// abstract socket, another team's say, refuses it, and a process outside cannot be signalled;
// its own socket and its own child still work.
TEST(IpcScopeTest, AJobReachesOnlyItsOwnAbstractSocketsAndProcesses) {
  if (!JobIpcScopeAvailable()) {
    GTEST_SKIP() << "this kernel has no Landlock scopes (Linux 6.12, Landlock enabled)";
  }
  const std::string outside = "allot-ipc-test-outside-" + std::to_string(::getpid());
  const int listener = Listen(outside);
  ASSERT_GE(listener, 0) << std::strerror(errno);
  ASSERT_EQ(ConnectErrno(outside), 0);  // open to all before the scope
  const pid_t bystander = ::fork();
  if (bystander == 0) {
    ::pause();
    ::_exit(0);
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(100);
    const Result<bool> scoped = ScopeJobIpc();
    if (!scoped.ok() || !*scoped) ::_exit(101);
    if (ConnectErrno(outside) != EPERM) ::_exit(1);
    if (::kill(bystander, 0) == 0 || errno != EPERM) ::_exit(2);
    const std::string own = "allot-ipc-test-own-" + std::to_string(::getpid());
    const int mine = Listen(own);
    if (mine < 0 || ConnectErrno(own) != 0) ::_exit(3);
    const pid_t child = ::fork();  // its own processes it may still signal
    if (child == 0) {
      ::pause();
      ::_exit(0);
    }
    if (::kill(child, SIGKILL) != 0) ::_exit(4);
    ::waitpid(child, nullptr, 0);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ::kill(bystander, SIGKILL);
  ::waitpid(bystander, nullptr, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "1: another's socket reached, 2: another process signalled, 3: its own socket refused, "
         "4: its own child not signalled";
  EXPECT_EQ(ConnectErrno(outside), 0);  // the test itself is not scoped
  ::close(listener);
}

}  // namespace
}  // namespace allot::exec
