#include "exec/as_job_user.h"

namespace allot::exec {

AsJobUser::AsJobUser(const std::optional<JobUser>& user) : user_(user) {
  if (user_) acting_.emplace(user_->uid, user_->gid);
}

Status AsJobUser::Taken(std::string_view to) const {
  if (!acting_ || acting_->acting()) return {};
  return Internal("cannot act as the job's user (uid " + std::to_string(user_->uid) + ") to " +
                  std::string(to));
}

Status ChannelUnreachable(std::string_view what, const JobUser& user, const std::string& dir,
                          const Status& opened) {
  return FailedPrecondition(std::string(what) + "the job's user (uid " + std::to_string(user.uid) +
                            ") may not reach the channel directory '" + dir + "' (" +
                            opened.message() +
                            "): every directory above a channel must let the job's user through");
}

}  // namespace allot::exec
