#include "model/reason.h"

namespace allot::model {

std::string MisconfigurationReason(Misconfiguration m) {
  const std::string quota(kReasonQuotaLimitExceeded);
  switch (m) {
    case Misconfiguration::kNone:
      return "";
    case Misconfiguration::kServiceEnvironmentMax:
      return std::string(kReasonServiceEnvironmentMax) +
             " - Service environment(s) associated with the job queue cannot meet the capacity "
             "requirement of the job.";
    case Misconfiguration::kShareLimit:
      return quota + " - Job requirements exceed quota share capacity limits.";
    case Misconfiguration::kShareAndBorrowLimit:
      return quota + " - Job requirements exceed quota share capacity limits and borrow limits.";
    case Misconfiguration::kBorrowableCapacity:
      return quota + " - Job requires borrowing that exceeds all configured borrowable capacity.";
  }
  return "";
}

std::string_view ToString(PreemptionRule r) {
  switch (r) {
    case PreemptionRule::kReclaim:
      return "RECLAIM";
    case PreemptionRule::kInShare:
      return "IN_SHARE";
    case PreemptionRule::kLimitLowered:
      return "LIMIT_LOWERED";
  }
  return "RECLAIM";
}

std::string PreemptionReason(PreemptionRule r) {
  switch (r) {
    case PreemptionRule::kReclaim:
      return "Cross-share preemption triggered to reclaim borrowed capacity";
    case PreemptionRule::kInShare:
      return "In-share preemption triggered by a higher-priority job";
    case PreemptionRule::kLimitLowered:
      return "Cross-share preemption triggered to reclaim capacity above a lowered share limit";
  }
  return "";
}

std::string_view ToString(WaitRule r) {
  switch (r) {
    case WaitRule::kNotWaiting:
      return "NOT_WAITING";
    case WaitRule::kMisconfigured:
      return "MISCONFIGURED";
    case WaitRule::kNominated:
      return "NOMINATED";
    case WaitRule::kShareLimit:
      return "SHARE_LIMIT";
    case WaitRule::kBorrowLimit:
      return "BORROW_LIMIT";
    case WaitRule::kNoLendableCapacity:
      return "NO_LENDABLE_CAPACITY";
    case WaitRule::kPoolFull:
      return "POOL_FULL";
    case WaitRule::kReservedForPreemptor:
      return "RESERVED_FOR_PREEMPTOR";
    case WaitRule::kCapacityStopping:
      return "CAPACITY_STOPPING";
    case WaitRule::kServiceEnvironmentDisabled:
      return "SERVICE_ENVIRONMENT_DISABLED";
    case WaitRule::kDispatchesHeld:
      return "DISPATCHES_HELD";
    case WaitRule::kFitsNextPass:
      return "FITS_NEXT_PASS";
  }
  return "UNKNOWN";
}

}  // namespace allot::model
