#include "cli/shares.h"

#include <iostream>
#include <map>
#include <set>

#include "cli/commands.h"
#include "cli/format.h"
#include "cli/jobs.h"

namespace allot::cli {

namespace {

// {unit: quantity} from [{capacityUnit, quantity}].
std::map<std::string, std::string> ByUnit(const Json& list, const char* field = "quantity") {
  std::map<std::string, std::string> out;
  if (!list.is_array()) return out;
  for (const Json& u : list) {
    out[u.value("capacityUnit", "")] = FormatNumber(u.value(field, Json()));
  }
  return out;
}

std::string Get(const std::map<std::string, std::string>& m, const std::string& k,
                const std::string& missing = "0") {
  auto it = m.find(k);
  return it == m.end() ? missing : it->second;
}

}  // namespace

void PrintShares(const std::string& queue, const Json& shares, const Json& snapshot,
                 const Json& environment, std::ostream& out) {
  const Json util = snapshot.value("queueUtilization", Json::object());
  if (!util.contains("quotaShareUtilization")) {
    out << "job queue " << queue << " has no quota shares (its scheduling policy has no "
        << "quotaSharePolicy)\n";
  } else {
    std::map<std::string, Json> usage;  // share -> topCapacityUtilization entry
    for (const Json& e :
         util["quotaShareUtilization"].value("topCapacityUtilization", Json::array())) {
      usage[e.value("quotaShareName", "")] = e;
    }
    Table table(
        {"SHARE", "STRATEGY", "PREEMPT", "UNIT", "LIMIT", "USED", "BORROWED", "LENT", "WAITING"});
    std::set<std::string> listed;
    auto add = [&](const std::string& name, const Json& share) {
      listed.insert(name);
      const Json use = usage.count(name) ? usage[name] : Json::object();
      const auto limits = ByUnit(share.value("capacityLimits", Json::array()), "maxCapacity");
      const auto used = ByUnit(use.value("capacityUsage", Json::array()));
      const auto borrowed = ByUnit(use.value("borrowed", Json::array()));
      const auto lent = ByUnit(use.value("lent", Json::array()));
      std::set<std::string> units;
      for (const auto* m : {&limits, &used}) {
        for (const auto& [u, v] : *m) units.insert(u);
      }
      if (units.empty()) units.insert("-");
      const Json sharing = share.value("resourceSharingConfiguration", Json::object());
      std::string strategy = sharing.value("strategy", "-");
      if (sharing.contains("borrowLimit") && strategy == "LEND_AND_BORROW") {
        const std::int64_t b = sharing.value("borrowLimit", std::int64_t{-1});
        strategy += b < 0 ? " (unlimited)" : " (" + std::to_string(b) + "%)";
      }
      const std::string preempt =
          share.value("preemptionConfiguration", Json::object()).value("inSharePreemption", "-") ==
                  "ENABLED"
              ? "in-share"
              : "-";
      std::string label = name;
      if (share.value("state", "ENABLED") == "DISABLED") label += " (DISABLED)";
      bool first = true;
      for (const std::string& u : units) {
        table.Add({first ? label : "", first ? strategy : "", first ? preempt : "", u,
                   Get(limits, u, "-"), Get(used, u), Get(borrowed, u), Get(lent, u),
                   first ? FormatNumber(use.value("waitingJobs", Json(0))) : ""});
        first = false;
      }
    };
    for (const Json& s : shares) add(s.value("quotaShareName", ""), s);
    for (const auto& [name, use] : usage) {
      if (!listed.count(name)) add(name, Json::object());
    }
    if (table.empty()) {
      out << "job queue " << queue << " has no quota shares yet\n";
    } else {
      table.Print(out);
    }
  }
  const auto total = ByUnit(util.value("totalCapacityUsage", Json::array()));
  const auto capacity = ByUnit(environment.value("capacityLimits", Json::array()), "maxCapacity");
  std::string line;
  std::set<std::string> units;
  for (const auto* m : {&total, &capacity}) {
    for (const auto& [u, v] : *m) units.insert(u);
  }
  for (const std::string& u : units) {
    line += (line.empty() ? "" : ", ") + u + " " + Get(total, u) + " of " + Get(capacity, u, "?");
  }
  out << "in use in " << queue;
  if (environment.contains("serviceEnvironmentName")) {
    out << " (service environment " << environment["serviceEnvironmentName"].get<std::string>()
        << ")";
  }
  out << ": " << (line.empty() ? "nothing" : line) << '\n';
}

void AddSharesCommand(CLI::App& app, Runner* run) {
  auto queue = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand(
      "shares", "quota-share usage of a queue: limit, used, borrowed, lent, waiting");
  auto endpoint = AddEndpointOption(sub);
  sub->add_option("queue", *queue, "job queue")->required();
  sub->callback([queue, endpoint, run] {
    *run = [queue, endpoint] {
      Client client(LoadClientConfig(*endpoint));
      const Json q = client.Call("DescribeJobQueues", {{"jobQueues", Json::array({*queue})}});
      if (q.value("jobQueues", Json::array()).empty())
        throw CliError("job queue " + *queue + " does not exist");
      Json environment = Json::object();
      const Json order = q["jobQueues"][0].value("serviceEnvironmentOrder", Json::array());
      if (!order.empty()) {
        const Json e = client.Call(
            "DescribeServiceEnvironments",
            {{"serviceEnvironments", Json::array({order[0].value("serviceEnvironment", "")})}});
        if (!e.value("serviceEnvironments", Json::array()).empty())
          environment = e["serviceEnvironments"][0];
      }
      const Json snapshot = client.Call("GetJobQueueSnapshot", {{"jobQueue", *queue}});
      Json shares = Json::array();
      if (snapshot.value("queueUtilization", Json::object()).contains("quotaShareUtilization")) {
        shares = ListAll(client, "ListQuotaShares", {{"jobQueue", *queue}}, "quotaShares");
      }
      PrintShares(*queue, shares, snapshot, environment, std::cout);
      return 0;
    };
  });
}

}  // namespace allot::cli
