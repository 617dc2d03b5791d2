#include "model/event.h"

#include <type_traits>

namespace allot::model {

namespace {

std::string LimitsToString(const std::vector<CapacityLimit>& limits) {
  std::string s;
  for (const CapacityLimit& l : limits) {
    if (!s.empty()) s += ",";
    s += l.unit + "=" + std::to_string(l.max_capacity);
  }
  return s;
}

}  // namespace

std::string EventToString(const Event& e) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, PutServiceEnvironment>) {
          return "put-se " + x.config.name + " [" + LimitsToString(x.config.capacity_limits) +
                 "] " + std::string(ToString(x.config.state));
        } else if constexpr (std::is_same_v<T, DeleteServiceEnvironment>) {
          return "delete-se " + x.name;
        } else if constexpr (std::is_same_v<T, PutJobQueue>) {
          return "put-queue " + x.config.name + " se=" + x.config.service_environment + " " +
                 std::string(ToString(x.config.state));
        } else if constexpr (std::is_same_v<T, DeleteJobQueue>) {
          return "delete-queue " + x.name;
        } else if constexpr (std::is_same_v<T, PutQuotaShare>) {
          const QuotaShareConfig& c = x.config;
          return "put-share " + c.queue + "/" + c.name + " [" + LimitsToString(c.capacity_limits) +
                 "] " + std::string{ToString(c.strategy)} +
                 " borrow=" + std::to_string(c.borrow_limit) +
                 " inshare=" + (c.in_share_preemption ? "1" : "0") + " " +
                 std::string{ToString(c.state)};
        } else if constexpr (std::is_same_v<T, DeleteQuotaShare>) {
          return "delete-share " + x.queue + "/" + x.name;
        } else if constexpr (std::is_same_v<T, SubmitJob>) {
          const JobSpec& s = x.spec;
          return "submit " + std::to_string(s.id) + " " + s.queue + "/" + s.share +
                 " prio=" + std::to_string(s.priority) + " need=" + DemandToString(s.demand);
        } else if constexpr (std::is_same_v<T, RestoreJob>) {
          return "restore " + std::to_string(x.spec.id) + " " + x.spec.queue + "/" + x.spec.share +
                 " attempt=" + std::to_string(x.attempt);
        } else if constexpr (std::is_same_v<T, UpdateJobPriority>) {
          return "priority " + std::to_string(x.job) + " " + std::to_string(x.priority);
        } else if constexpr (std::is_same_v<T, TerminateJob>) {
          return "terminate " + std::to_string(x.job);
        } else if constexpr (std::is_same_v<T, AttemptStarting>) {
          return "starting " + std::to_string(x.job) + "#" + std::to_string(x.attempt);
        } else if constexpr (std::is_same_v<T, AttemptRunning>) {
          return "running " + std::to_string(x.job) + "#" + std::to_string(x.attempt);
        } else if constexpr (std::is_same_v<T, CheckpointObserved>) {
          return "checkpoint " + std::to_string(x.job) + "#" + std::to_string(x.attempt) + " at " +
                 std::to_string(x.at);
        } else if constexpr (std::is_same_v<T, AttemptEnded>) {
          return "ended " + std::to_string(x.job) + "#" + std::to_string(x.attempt) + " " +
                 std::to_string(static_cast<int>(x.outcome));
        } else if constexpr (std::is_same_v<T, HoldDispatches>) {
          return x.held ? "hold-dispatches " + x.reason : "release-dispatches";
        } else {
          return "tick";
        }
      },
      e);
}

}  // namespace allot::model
