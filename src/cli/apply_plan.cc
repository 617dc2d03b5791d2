// CapacityWarnings: what `allot apply` says about the configuration a file leaves behind.

#include <map>
#include <set>

#include "cli/apply.h"

namespace allot::cli {

namespace {

using Limits = std::map<std::string, std::int64_t>;  // capacity unit -> maxCapacity

Limits ToLimits(const Json& capacity_limits) {
  Limits out;
  if (!capacity_limits.is_array()) return out;
  for (const Json& l : capacity_limits) {
    out[l.value("capacityUnit", "")] = l.value("maxCapacity", std::int64_t{0});
  }
  return out;
}

std::string LastPart(const std::string& arn) {
  const auto slash = arn.rfind('/');
  return slash == std::string::npos ? arn : arn.substr(slash + 1);
}

// The service environment of `queue`: the file's entry, else the server's queue.
std::string EnvironmentOf(Client& client, const ClusterSpec& spec, const std::string& queue) {
  for (const Json& q : spec.job_queues) {
    if (q["name"] == queue) return LastPart(q["serviceEnvironment"].get<std::string>());
  }
  const Json found = client.Call("DescribeJobQueues", {{"jobQueues", Json::array({queue})}});
  for (const Json& q : found.value("jobQueues", Json::array())) {
    const Json order = q.value("serviceEnvironmentOrder", Json::array());
    if (!order.empty()) return LastPart(order[0].value("serviceEnvironment", ""));
  }
  return "";
}

// The capacity of environment `name`: the file's entry, else the server's.
Limits EnvironmentLimits(Client& client, const ClusterSpec& spec, const std::string& name) {
  for (const Json& e : spec.service_environments) {
    if (e["name"] == name) return ToLimits(e["capacityLimits"]);
  }
  const Json found =
      client.Call("DescribeServiceEnvironments", {{"serviceEnvironments", Json::array({name})}});
  for (const Json& e : found.value("serviceEnvironments", Json::array())) {
    return ToLimits(e.value("capacityLimits", Json::array()));
  }
  return {};
}

// Share name -> limits for `queue`: the server's shares, with the file's over them.
std::map<std::string, Limits> ShareLimits(Client& client, const ClusterSpec& spec,
                                          const std::string& queue) {
  std::map<std::string, Limits> out;
  const Json found = client.Call("DescribeJobQueues", {{"jobQueues", Json::array({queue})}});
  if (!found.value("jobQueues", Json::array()).empty()) {
    for (const Json& s : ListAll(client, "ListQuotaShares", {{"jobQueue", queue}}, "quotaShares")) {
      out[s.value("quotaShareName", "")] = ToLimits(s.value("capacityLimits", Json::array()));
    }
  }
  for (const Json& s : spec.quota_shares) {
    if (s["jobQueue"] == queue) out[s["name"].get<std::string>()] = ToLimits(s["capacityLimits"]);
  }
  return out;
}

}  // namespace

std::vector<std::string> CapacityWarnings(Client& client, const ClusterSpec& spec) {
  std::set<std::string> queues;
  for (const Json& s : spec.quota_shares) queues.insert(s["jobQueue"].get<std::string>());
  for (const Json& q : spec.job_queues) queues.insert(q["name"].get<std::string>());
  std::vector<std::string> warnings;
  for (const std::string& queue : queues) {
    const std::string env = EnvironmentOf(client, spec, queue);
    if (env.empty()) continue;
    const Limits pool = EnvironmentLimits(client, spec, env);
    Limits total;
    for (const auto& [share, limits] : ShareLimits(client, spec, queue)) {
      for (const auto& [unit, n] : limits) total[unit] += n;
    }
    for (const auto& [unit, sum] : total) {
      const auto it = pool.find(unit);
      const std::int64_t have = it == pool.end() ? 0 : it->second;
      if (sum <= have) continue;
      warnings.push_back("job queue " + queue + ": the quota shares' limits on " + unit +
                         " add up to " + std::to_string(sum) + ", more than service environment " +
                         env + "'s " + std::to_string(have) +
                         "; the shares cannot all use their full quota at once");
    }
  }
  return warnings;
}

}  // namespace allot::cli
