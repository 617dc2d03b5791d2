#pragma once

// The calling thread's filesystem identity made another user's for a while: a root process
// (the server, a supervisor) asks the file system a question on behalf of a job's user, and the
// kernel answers as it would answer that user. Every directory on a path is then checked
// against that uid, its gid and no supplementary group: a team's 0700 directory hides what lies
// below it, as it would from that user's own processes.
//
// setfsuid, setfsgid and the raw setgroups system call change the calling thread only (glibc's
// setgroups would change every thread of the process), so other threads of a server go on as
// root meanwhile (a thread started while acting would inherit the identity). The capabilities
// that pass permission checks (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER) are taken out
// of the thread's effective set meanwhile: the kernel does so on a change of fsuid, except under
// SECBIT_NO_SETUID_FIXUP, so it is done here too, and checked.

#include <linux/capability.h>
#include <sys/types.h>

#include <array>
#include <vector>

namespace allot::env {

class ActingAs {
 public:
  // Takes the identity; acting() says whether it was taken (it needs root, or CAP_SETUID and
  // CAP_SETGID). Whatever was changed before a failure is restored at once.
  ActingAs(uid_t uid, gid_t gid);
  // Restores the thread's own identity. A thread that cannot get it back must not go on as
  // another user: the process is aborted, saying why on stderr.
  ~ActingAs();
  ActingAs(const ActingAs&) = delete;
  ActingAs& operator=(const ActingAs&) = delete;

  bool acting() const { return acting_; }

  // The thread's capability sets, as capget and capset take them (version 3: two words).
  using Capabilities = std::array<__user_cap_data_struct, 2>;

 private:
  void Restore();

  std::vector<gid_t> groups_;    // the thread's supplementary groups, given back at the end
  Capabilities capabilities_{};  // given back at the end
  bool changed_ = false;         // groups dropped: Restore has something to do
  bool acting_ = false;
};

}  // namespace allot::env
