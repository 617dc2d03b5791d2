#include "exec/ipc_scope.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace allot::exec {
namespace {

// linux/landlock.h of Linux 6.12; Debian 12's headers (6.1) lack the scopes, so the ABI's
// fields are written out here, as the kernel defines them.
struct LandlockRulesetAttr {
  std::uint64_t handled_access_fs = 0;
  std::uint64_t handled_access_net = 0;
  std::uint64_t scoped = 0;
};
constexpr std::uint32_t kCreateRulesetVersion = 1U << 0;
constexpr std::uint64_t kScopeAbstractUnixSocket = 1ULL << 0;
constexpr std::uint64_t kScopeSignal = 1ULL << 1;
constexpr long kScopesAbi = 6;

long LandlockAbi() {
  return ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
}

}  // namespace

bool JobIpcScopeAvailable() { return LandlockAbi() >= kScopesAbi; }

Result<bool> ScopeJobIpc() {
  // ENOSYS: no Landlock in this kernel; EOPNOTSUPP: not enabled at boot.
  if (LandlockAbi() < kScopesAbi) return false;
  LandlockRulesetAttr attr;
  attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;  // no file or network rule: scopes only
  const long fd = ::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0U);
  if (fd < 0) return Internal(std::string("landlock_create_ruleset: ") + std::strerror(errno));
  const long restricted = ::syscall(SYS_landlock_restrict_self, fd, 0U);
  const int error = errno;
  ::close(static_cast<int>(fd));
  if (restricted != 0) {
    return Internal(std::string("landlock_restrict_self: ") + std::strerror(error));
  }
  return true;
}

}  // namespace allot::exec
