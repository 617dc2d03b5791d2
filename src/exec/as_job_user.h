#pragma once

// The calling thread acting as a job's user for a scope (env/acting_as.h: this thread only, and
// the kernel then answers as it would answer that user's processes). The server, the executor
// and the supervisor each ask the file system about a job's paths this way.

#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "env/acting_as.h"
#include "exec/sandbox.h"

namespace allot::exec {

class AsJobUser {
 public:
  // Takes `user`'s identity when one is given; without one the thread stays itself.
  explicit AsJobUser(const std::optional<JobUser>& user);
  AsJobUser(const AsJobUser&) = delete;
  AsJobUser& operator=(const AsJobUser&) = delete;

  // OK when no user was given or its identity was taken. Otherwise an Internal error that says
  // it could not be taken `to` do what: the question must not be answered as root instead.
  Status Taken(std::string_view to) const;

 private:
  std::optional<JobUser> user_;
  std::optional<env::ActingAs> acting_;
};

// Why a channel's directory `dir` is not bound when the job's `user` may not reach it (errno
// EACCES or EPERM on the way, `opened` the failure). `what` prefixes the message.
Status ChannelUnreachable(std::string_view what, const JobUser& user, const std::string& dir,
                          const Status& opened);

}  // namespace allot::exec
