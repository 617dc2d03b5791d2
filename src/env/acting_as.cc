#include "env/acting_as.h"

#include <linux/capability.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace allot::env {
namespace {

// 32-bit group ids where the plain call takes 16-bit ones (i386, 32-bit ARM).
#ifdef SYS_setgroups32
constexpr long kSetGroups = SYS_setgroups32;
#else
constexpr long kSetGroups = SYS_setgroups;
#endif

// The capabilities that pass a permission check on a file or a directory.
constexpr unsigned kPermissionCapabilities =
    (1U << CAP_DAC_OVERRIDE) | (1U << CAP_DAC_READ_SEARCH) | (1U << CAP_FOWNER);

// setfsuid and setfsgid return the previous value whether or not they changed it; -1 is no
// valid id, so asking for it changes nothing and tells the current one.
uid_t FsUid() { return static_cast<uid_t>(::setfsuid(static_cast<uid_t>(-1))); }
gid_t FsGid() { return static_cast<gid_t>(::setfsgid(static_cast<gid_t>(-1))); }

// Whether the process was dumpable before any thread acted as another user. It is one flag
// for the whole process, which each change of fsuid clears: read once (before the first
// change, whichever thread makes it), so threads acting at once do not hand each other's
// cleared flag back as the original.
int ProcessDumpable() {
  static const int kDumpable = ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
  return kDumpable;
}

bool SetThreadGroups(const std::vector<gid_t>& groups) {
  return ::syscall(kSetGroups, groups.size(), groups.empty() ? nullptr : groups.data()) == 0;
}

// The calling thread's capability sets (raw calls: pid 0 is this thread).
bool GetCapabilities(ActingAs::Capabilities& out) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  return ::syscall(SYS_capget, &header, out.data()) == 0;
}
bool SetCapabilities(const ActingAs::Capabilities& sets) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  return ::syscall(SYS_capset, &header, sets.data()) == 0;
}

}  // namespace

ActingAs::ActingAs(uid_t uid, gid_t gid) {
  const int count = ::getgroups(0, nullptr);
  if (count < 0) return;
  groups_.resize(static_cast<std::size_t>(count));
  if (::getgroups(count, groups_.data()) != count) return;
  if (!GetCapabilities(capabilities_)) return;
  ProcessDumpable();  // read before this thread changes anything
  // None to drop (root's usual case): no call, which a user namespace may refuse.
  if (!groups_.empty() && !SetThreadGroups({})) return;
  changed_ = true;
  ::setfsgid(gid);
  ::setfsuid(uid);
  // The kernel clears these when fsuid leaves 0, unless SECBIT_NO_SETUID_FIXUP keeps them:
  // cleared here either way, and checked.
  Capabilities lowered = capabilities_;
  lowered[0].effective &= ~kPermissionCapabilities;
  Capabilities now{};
  acting_ = SetCapabilities(lowered) && GetCapabilities(now) &&
            (now[0].effective & kPermissionCapabilities) == 0 && FsUid() == uid && FsGid() == gid;
  if (!acting_) Restore();
}

ActingAs::~ActingAs() { Restore(); }

void ActingAs::Restore() {
  if (!changed_) return;
  ::setfsuid(::geteuid());
  ::setfsgid(::getegid());
  const bool groups = groups_.empty() || SetThreadGroups(groups_);
  const bool capabilities = SetCapabilities(capabilities_);
  // A change of fsuid made the process undumpable (and so its /proc entries root's).
  if (ProcessDumpable() >= 0) ::prctl(PR_SET_DUMPABLE, ProcessDumpable(), 0, 0, 0);
  if (!groups || !capabilities || FsUid() != ::geteuid() || FsGid() != ::getegid()) {
    std::fputs(
        "allot: cannot take back this thread's own file system identity after acting as "
        "a job's user; stopping\n",
        stderr);
    std::abort();
  }
  changed_ = false;
  acting_ = false;
}

}  // namespace allot::env
