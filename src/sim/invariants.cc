#include "sim/invariants.h"

#include <algorithm>

namespace allot::sim::internal {

namespace {

std::string At(Timestamp now) { return "at virtual time " + std::to_string(now) + " ms: "; }

}  // namespace

InvariantChecker::InvariantChecker(const Cluster& cluster, const Meter& meter, bool enabled,
                                   Duration stop_grace)
    : meter_(meter), enabled_(enabled), stop_grace_(stop_grace) {
  shares_.resize(meter.shares());
  for (const auto& q : cluster.queues) {
    const int qi = static_cast<int>(queue_names_.size());
    queue_names_.push_back(q.name);
    pool_.emplace_back(meter.units(), 0);
    for (const auto& e : cluster.environments) {
      if (e.name != q.service_environment) continue;
      for (const auto& l : e.capacity_limits) {
        pool_.back()[static_cast<std::size_t>(meter.UnitIndex(l.unit))] += l.max_capacity;
      }
    }
    for (const auto& s : cluster.shares) {
      const int si = meter.ShareIndex(s.queue, s.name);
      if (s.queue != q.name || si < 0) continue;
      ShareCaps& caps = shares_[static_cast<std::size_t>(si)];
      caps.queue = qi;
      caps.name = s.name;
      caps.lends = s.strategy != model::SharingStrategy::kReserve;
      caps.cap.assign(meter.units(), 0);
      if (s.strategy != model::SharingStrategy::kLendAndBorrow) continue;
      for (std::size_t u = 0; u < meter.units(); ++u) {
        const std::int64_t limit = meter.Limit(si, static_cast<int>(u));
        caps.cap[u] = s.borrow_limit == model::kUnlimitedBorrow ? -1 : limit * s.borrow_limit / 100;
      }
    }
  }
}

void InvariantChecker::Nominated(const model::Preemption& p) {
  if (!enabled_) return;
  std::set<model::JobId>& victims = nominees_[p.preemptor];
  released_at_.erase(p.preemptor);  // nominated anew
  for (const model::VictimRecord& v : p.victims) {
    victims.insert(v.victim);
    victim_of_[v.victim] = p.preemptor;
  }
}

void InvariantChecker::AttemptEnded(model::JobId job) {
  auto v = victim_of_.find(job);
  if (v == victim_of_.end()) return;
  auto n = nominees_.find(v->second);
  if (n != nominees_.end() && n->second.erase(job) == 1 && n->second.empty()) {
    released_.push_back(v->second);
  }
  victim_of_.erase(v);
}

Status InvariantChecker::CheckQueue(std::size_t queue, Timestamp now) const {
  for (std::size_t u = 0; u < meter_.units(); ++u) {
    std::int64_t held = 0, sum_b = 0, sum_i = 0;
    for (std::size_t s = 0; s < shares_.size(); ++s) {
      const ShareCaps& caps = shares_[s];
      if (static_cast<std::size_t>(caps.queue) != queue || caps.cap.empty()) continue;
      const std::int64_t used = meter_.Held(static_cast<int>(s), static_cast<int>(u));
      const std::int64_t limit = meter_.Limit(static_cast<int>(s), static_cast<int>(u));
      const std::int64_t borrowed = std::max<std::int64_t>(0, used - limit);
      held += used;
      sum_b += borrowed;
      if (caps.lends) sum_i += std::max<std::int64_t>(0, limit - used);
      if (caps.cap[u] >= 0 && borrowed > caps.cap[u]) {
        return Internal(At(now) + "invariant 2 broken: share " + caps.name + " borrows " +
                        std::to_string(borrowed) + " of unit #" + std::to_string(u) +
                        ", its cap is " + std::to_string(caps.cap[u]));
      }
    }
    if (held > pool_[queue][u]) {
      return Internal(At(now) + "invariant 1 broken: queue " + queue_names_[queue] + " holds " +
                      std::to_string(held) + " of unit #" + std::to_string(u) + ", the pool is " +
                      std::to_string(pool_[queue][u]));
    }
    if (sum_b > sum_i) {
      return Internal(At(now) + "invariant 3 broken: queue " + queue_names_[queue] + " borrows " +
                      std::to_string(sum_b) + " but lenders' idle is " + std::to_string(sum_i));
    }
  }
  return Status::Ok();
}

Status InvariantChecker::CheckEngineUsage(const engine::Engine& engine, Timestamp now) const {
  for (const std::string& queue : queue_names_) {
    Result<engine::QueueUsage> usage = engine.Usage(queue);
    if (!usage.ok()) return usage.status();
    for (const engine::ShareUsage& share : usage->shares) {
      const int s = meter_.ShareIndex(queue, share.name);
      if (s < 0) continue;  // an implicit share the cluster file does not list
      for (const engine::UnitUsage& unit : share.units) {
        const int u = meter_.UnitIndex(unit.unit);
        const std::int64_t world = u < 0 ? 0 : meter_.Held(s, u);
        if (unit.used != world) {
          return Internal(At(now) + "the engine says share " + share.name + " holds " +
                          std::to_string(unit.used) + " " + unit.unit + ", the world " +
                          std::to_string(world));
        }
      }
    }
  }
  return Status::Ok();
}

Status InvariantChecker::Check(const engine::Engine& engine, Timestamp now) {
  if (!enabled_) return Status::Ok();
  ++checks_;
  for (std::size_t q = 0; q < queue_names_.size(); ++q) ALLOT_RETURN_IF_ERROR(CheckQueue(q, now));
  ALLOT_RETURN_IF_ERROR(CheckEngineUsage(engine, now));
  for (model::JobId nominee : released_) {
    if (nominees_.count(nominee) != 0) released_at_.emplace(nominee, now);
  }
  released_.clear();
  for (const auto& [nominee, at] : released_at_) {
    if (now <= at + stop_grace_) continue;
    Result<model::WaitReason> why = engine.Explain(nominee);
    return Internal(At(now) + "invariant 4 broken: every victim of job " + std::to_string(nominee) +
                    " had ended at " + std::to_string(at) +
                    " ms but it was still not dispatched (" +
                    (why.ok() ? why->message : why.status().message()) + ")");
  }
  return Status::Ok();
}

Status InvariantChecker::CheckWorkLost(const model::PreemptedAttempt& p, std::int64_t expected,
                                       Timestamp now) {
  if (!enabled_ || p.work_lost == expected) return Status::Ok();
  return Internal(At(now) + "the engine says attempt " + std::to_string(p.attempt) + " of job " +
                  std::to_string(p.job) + " lost " + std::to_string(p.work_lost) +
                  " instance-ms, the world " + std::to_string(expected));
}

}  // namespace allot::sim::internal
