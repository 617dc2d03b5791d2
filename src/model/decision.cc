#include "model/decision.h"

#include <type_traits>

namespace allot::model {

std::string_view ToString(DispatchMode m) {
  switch (m) {
    case DispatchMode::kWithinQuota:
      return "WITHIN_QUOTA";
    case DispatchMode::kBorrowed:
      return "BORROWED";
    case DispatchMode::kPreemptor:
      return "PREEMPTOR";
  }
  return "WITHIN_QUOTA";
}

std::string_view ToString(StopKind k) {
  switch (k) {
    case StopKind::kPreemption:
      return "PREEMPTION";
    case StopKind::kTermination:
      return "TERMINATION";
    case StopKind::kTimeout:
      return "TIMEOUT";
  }
  return "TERMINATION";
}

namespace {

std::string Id(JobId id) { return std::to_string(id); }

std::string VictimToString(const VictimRecord& v) {
  return Id(v.victim) + "@" + v.share + "/" + std::string(ToString(v.rule)) +
         "{prio=" + std::to_string(v.key.priority) + ",lost=" + std::to_string(v.key.work_lost) +
         ",started=" + std::to_string(v.key.started_at) + "}";
}

}  // namespace

std::string DecisionToString(const Decision& d) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, StatusChanged>) {
          return "status " + Id(x.job) + " " + std::string(ToString(x.from)) + "->" +
                 std::string(ToString(x.to)) + (x.reason.empty() ? "" : " \"" + x.reason + "\"");
        } else if constexpr (std::is_same_v<T, Dispatch>) {
          return "dispatch " + Id(x.job) + " attempt=" + std::to_string(x.attempt) + " " +
                 std::string(ToString(x.mode));
        } else if constexpr (std::is_same_v<T, Stop>) {
          return "stop " + Id(x.job) + " attempt=" + std::to_string(x.attempt) + " " +
                 std::string(ToString(x.kind)) + " \"" + x.reason + "\"";
        } else if constexpr (std::is_same_v<T, Preemption>) {
          std::string s = "preempt by " + Id(x.preemptor) + ":";
          for (const VictimRecord& v : x.victims) s += " " + VictimToString(v);
          return s;
        } else {
          return "preempted " + Id(x.job) + " attempt=" + std::to_string(x.attempt) + " " +
                 std::string(ToString(x.rule)) + " lost=" + std::to_string(x.work_lost) +
                 " count=" + std::to_string(x.preempted_count);
        }
      },
      d);
}

}  // namespace allot::model
