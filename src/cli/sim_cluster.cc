#include "cli/sim_cluster.h"

namespace allot::cli {

namespace {

std::vector<model::CapacityLimit> Limits(const Json& limits) {
  std::vector<model::CapacityLimit> out;
  for (const Json& l : limits) out.push_back({l.at("capacityUnit"), l.at("maxCapacity")});
  return out;
}

model::State StateOf(const Json& entry) {
  return entry.value("state", "ENABLED") == "DISABLED" ? model::State::kDisabled
                                                       : model::State::kEnabled;
}

}  // namespace

sim::Cluster ToSimCluster(const ClusterSpec& spec, const std::string& origin) {
  sim::Cluster c;
  for (const Json& e : spec.service_environments) {
    c.environments.push_back({e.at("name"), Limits(e.at("capacityLimits")), StateOf(e)});
  }
  for (const Json& q : spec.job_queues) {
    if (!q.contains("schedulingPolicy")) {
      throw CliError(origin + ": jobQueue " + q.at("name").get<std::string>() +
                     " has no schedulingPolicy; the simulator replays quota-share queues only");
    }
    model::JobQueueConfig queue{q.at("name"), q.at("serviceEnvironment"), StateOf(q), {}};
    for (const Json& a : q.value("jobStateTimeLimitActions", Json::array())) {
      queue.time_limit_actions.push_back({a.at("reason"), a.at("maxTimeSeconds")});
    }
    c.queues.push_back(std::move(queue));
  }
  for (const Json& s : spec.quota_shares) {
    model::QuotaShareConfig share;
    share.queue = s.at("jobQueue");
    share.name = s.at("name");
    share.capacity_limits = Limits(s.at("capacityLimits"));
    share.strategy = *model::ParseSharingStrategy(s.at("strategy").get<std::string>());
    share.borrow_limit = s.value("borrowLimit", model::kUnlimitedBorrow);
    share.in_share_preemption = s.value("inSharePreemption", false);
    share.state = StateOf(s);
    c.shares.push_back(std::move(share));
  }
  return c;
}

}  // namespace allot::cli
