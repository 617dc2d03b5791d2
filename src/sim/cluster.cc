#include "sim/cluster.h"

#include <utility>

namespace allot::sim {

namespace {

// Static partitions: no share lends or borrows. The engine accepts a borrow limit only on
// LEND_AND_BORROW shares, so the limit goes back to "not set".
void MakeReserve(model::QuotaShareConfig* share) {
  share->strategy = model::SharingStrategy::kReserve;
  share->borrow_limit = model::kUnlimitedBorrow;
}

// Kueue's cohort: every share lends and borrows. A share that already borrowed keeps its limit;
// one that did not gets no limit, as a Kueue ClusterQueue without borrowingLimit.
void MakeLendAndBorrow(model::QuotaShareConfig* share) {
  if (share->strategy == model::SharingStrategy::kLendAndBorrow) return;
  share->strategy = model::SharingStrategy::kLendAndBorrow;
  share->borrow_limit = model::kUnlimitedBorrow;
}

}  // namespace

Result<Policy> DerivePolicy(const Cluster& base, std::string_view kind) {
  Policy policy;
  policy.name = std::string(kind);
  policy.cluster = base;
  if (kind == "configured") return policy;
  if (kind == "reserve") {
    for (model::QuotaShareConfig& share : policy.cluster.shares) MakeReserve(&share);
    return policy;
  }
  if (kind == "kueue" || kind == "allot") {
    for (model::QuotaShareConfig& share : policy.cluster.shares) MakeLendAndBorrow(&share);
    if (kind == "kueue") policy.victim_order = engine::VictimOrder::kNewestFirst;
    return policy;
  }
  return InvalidArgument("unknown policy \"" + std::string(kind) +
                         "\" (allowed: configured, reserve, kueue, allot)");
}

}  // namespace allot::sim
