// `allot delete -f FILE [--dry-run]`: removes what `allot apply -f FILE` creates. Quota shares go
// first, then job queues, scheduling policies and service environments, each disabled first as
// the API requires. Nothing is deleted while a queue or share of the file still holds
// unfinished jobs (they would lose their queue): the command names them and changes nothing.

#include <iostream>
#include <set>

#include "cli/apply.h"
#include "cli/commands.h"
#include "cli/jobs.h"
#include "common/strings.h"

namespace allot::cli {

namespace {

const std::vector<std::string> kUnfinished = {"SUBMITTED", "PENDING",  "RUNNABLE",
                                              "SCHEDULED", "STARTING", "RUNNING"};

// What the file names that exists on the server, in deletion order.
struct Doomed {
  std::vector<std::pair<std::string, Json>> shares;           // "queue/share", the share's summary
  std::vector<Json> queues;                                   // DescribeJobQueues entries
  std::vector<std::pair<std::string, std::string>> policies;  // name, ARN
  std::vector<Json> environments;                             // DescribeServiceEnvironments entries
  int absent = 0;
};

// The entry of answer[list] whose `key` is `name`; points into `answer` (not into a copy, as
// Json::value would make).
const Json* Named(const Json& answer, const char* list, const char* key, const std::string& name) {
  const auto it = answer.find(list);
  if (it == answer.end() || !it->is_array()) return nullptr;
  for (const Json& item : *it) {
    if (item.value(key, "") == name) return &item;
  }
  return nullptr;
}

Doomed Find(Client& client, const ClusterSpec& spec) {
  Doomed d;
  for (const Json& s : spec.quota_shares) {
    const std::string queue = s["jobQueue"];
    const std::string name = s["name"];
    const Json q = client.Call("DescribeJobQueues", {{"jobQueues", Json::array({queue})}});
    const Json* found = nullptr;
    Json shares = Json::array();
    if (Named(q, "jobQueues", "jobQueueName", queue) != nullptr) {
      shares = ListAll(client, "ListQuotaShares", {{"jobQueue", queue}}, "quotaShares");
      for (const Json& share : shares) {
        if (share.value("quotaShareName", "") == name) found = &share;
      }
    }
    if (found == nullptr) {
      ++d.absent;
    } else {
      d.shares.emplace_back(queue + "/" + name, *found);
    }
  }
  for (const Json& spec_q : spec.job_queues) {
    const std::string name = spec_q["name"];
    const Json q = client.Call("DescribeJobQueues", {{"jobQueues", Json::array({name})}});
    if (const Json* found = Named(q, "jobQueues", "jobQueueName", name)) {
      d.queues.push_back(*found);
    } else {
      ++d.absent;
    }
  }
  const Json policies =
      ListAll(client, "ListSchedulingPolicies", Json::object(), "schedulingPolicies");
  for (const Json& p : spec.scheduling_policies) {
    const std::string name = p["name"];
    std::string arn;
    for (const Json& have : policies) {
      const std::string a = have.value("arn", "");
      if (a.ends_with(":scheduling-policy/" + name)) arn = a;
    }
    if (arn.empty()) {
      ++d.absent;
    } else {
      d.policies.emplace_back(name, arn);
    }
  }
  for (const Json& e : spec.service_environments) {
    const std::string name = e["name"];
    const Json found =
        client.Call("DescribeServiceEnvironments", {{"serviceEnvironments", Json::array({name})}});
    if (const Json* env = Named(found, "serviceEnvironments", "serviceEnvironmentName", name)) {
      d.environments.push_back(*env);
    } else {
      ++d.absent;
    }
  }
  return d;
}

// "queue" or "queue/share" -> unfinished jobs there (ids, at most a few named).
std::vector<std::string> Unfinished(Client& client, const std::string& queue,
                                    const std::string& share) {
  std::vector<std::string> ids;
  for (const std::string& status : kUnfinished) {
    Json req = {{"jobQueue", queue}, {"jobStatus", status}, {"maxResults", 100}};
    if (!share.empty()) {
      req["filters"] =
          Json::array({{{"name", "QUOTA_SHARE_NAME"}, {"values", Json::array({share})}}});
    }
    for (const Json& j : ListAll(client, "ListServiceJobs", req, "jobSummaryList")) {
      ids.push_back(j.value("jobId", "") + " (" + status + ")");
    }
  }
  return ids;
}

void RefuseBusy(Client& client, const Doomed& d) {
  std::vector<std::string> busy;
  auto check = [&](const std::string& what, const std::string& queue, const std::string& share) {
    const std::vector<std::string> ids = Unfinished(client, queue, share);
    if (ids.empty()) return;
    std::string line = what + " has " + std::to_string(ids.size()) + " unfinished job" +
                       (ids.size() == 1 ? "" : "s") + ": ";
    for (std::size_t i = 0; i < ids.size() && i < 5; ++i) line += (i ? ", " : "") + ids[i];
    if (ids.size() > 5) line += ", ...";
    busy.push_back(line);
  };
  for (const auto& [key, s] : d.shares) {
    check("quota share " + key, key.substr(0, key.find('/')), s.value("quotaShareName", ""));
  }
  for (const Json& q : d.queues) {
    const std::string name = q.value("jobQueueName", "");
    check("job queue " + name, name, "");
  }
  if (busy.empty()) return;
  throw CliError(
      "nothing was deleted; cancel or wait for these jobs first (allot cancel JOB):\n  " +
      Join(busy, "\n  "));
}

void Disable(Client& client, const char* action, const char* key, const std::string& value,
             const Json& current) {
  if (current.value("state", "ENABLED") == "DISABLED") return;
  client.Call(action, {{key, value}, {"state", "DISABLED"}});
}

int Delete(Client& client, const ClusterSpec& spec, bool dry_run, std::ostream& out) {
  const Doomed d = Find(client, spec);
  RefuseBusy(client, d);
  const char* verb = dry_run ? "would be deleted" : "deleted";
  int deleted = 0;
  for (const auto& [key, s] : d.shares) {
    if (!dry_run) {
      const std::string arn = s.value("quotaShareArn", "");
      Disable(client, "UpdateQuotaShare", "quotaShareArn", arn, s);
      client.Call("DeleteQuotaShare", {{"quotaShareArn", arn}});
    }
    out << "quotaShare " << key << ": " << verb << '\n';
    ++deleted;
  }
  for (const Json& q : d.queues) {
    const std::string name = q.value("jobQueueName", "");
    if (!dry_run) {
      Disable(client, "UpdateJobQueue", "jobQueue", name, q);
      client.Call("DeleteJobQueue", {{"jobQueue", name}});
    }
    out << "jobQueue " << name << ": " << verb << '\n';
    ++deleted;
  }
  for (const auto& [name, arn] : d.policies) {
    if (!dry_run) client.Call("DeleteSchedulingPolicy", {{"arn", arn}});
    out << "schedulingPolicy " << name << ": " << verb << '\n';
    ++deleted;
  }
  for (const Json& e : d.environments) {
    const std::string name = e.value("serviceEnvironmentName", "");
    if (!dry_run) {
      Disable(client, "UpdateServiceEnvironment", "serviceEnvironment", name, e);
      client.Call("DeleteServiceEnvironment", {{"serviceEnvironment", name}});
    }
    out << "serviceEnvironment " << name << ": " << verb << '\n';
    ++deleted;
  }
  out << (dry_run ? "dry run: " : "deleted: ") << deleted << (dry_run ? " to delete, " : ", ")
      << d.absent << " not on the server\n";
  return 0;
}

}  // namespace

void AddDeleteCommand(CLI::App& app, Runner* run) {
  struct Opts {
    std::string file;
    bool dry_run = false;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* sub = app.add_subcommand(
      "delete",
      "delete the quota shares, job queues, scheduling policies and service environments a "
      "YAML file lists (what `allot apply -f FILE` made); refused while they hold unfinished "
      "jobs");
  auto endpoint = AddEndpointOption(sub);
  sub->add_option("-f,--file", o->file, "YAML file, as for allot apply")->required();
  sub->add_flag("--dry-run", o->dry_run, "say what would be deleted, delete nothing");
  sub->callback([o, endpoint, run] {
    *run = [o, endpoint] {
      const ClusterSpec spec = LoadClusterSpec(o->file);
      Client client(LoadClientConfig(*endpoint));
      return Delete(client, spec, o->dry_run, std::cout);
    };
  });
}

}  // namespace allot::cli
