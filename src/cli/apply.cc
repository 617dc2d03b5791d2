#include "cli/apply.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/strings.h"
#include "model/rules.h"

namespace allot::cli {

namespace {

// ---------- YAML -> JSON ----------

bool IsInteger(const std::string& s) {
  std::size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i == s.size() || s.size() - i > 18) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

Json ToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted: always a string
      if (IsInteger(s)) return std::stoll(s);
      if (s == "true" || s == "True" || s == "TRUE") return true;
      if (s == "false" || s == "False" || s == "FALSE") return false;
      if (s == "null" || s == "Null" || s == "NULL" || s == "~") return nullptr;
      return s;
    }
    case YAML::NodeType::Sequence: {
      Json out = Json::array();
      for (const YAML::Node& item : n) out.push_back(ToJson(item));
      return out;
    }
    case YAML::NodeType::Map: {
      Json out = Json::object();
      for (const auto& kv : n) out[kv.first.as<std::string>()] = ToJson(kv.second);
      return out;
    }
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      break;
  }
  return nullptr;
}

// ---------- checking the file ----------

class Checker {
 public:
  Checker(const Json& obj, std::string where) : obj_(obj), where_(std::move(where)) {
    if (!obj_.is_object()) Fail("must be a mapping of fields");
  }

  [[noreturn]] void Fail(const std::string& what) const { throw CliError(where_ + ": " + what); }

  void OnlyKeys(std::initializer_list<const char*> allowed) const {
    for (const auto& [k, v] : obj_.items()) {
      if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
        Fail("unknown field \"" + k + "\" (allowed: " + Join(allowed, ", ") + ")");
      }
    }
  }

  bool Has(const char* k) const { return obj_.contains(k) && !obj_[k].is_null(); }

  std::string String(const char* k) const {
    if (!Has(k)) Fail(std::string(k) + " is required");
    const Json& v = obj_[k];
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
    Fail(std::string(k) + " must be a string");
  }

  std::string Enum(const char* k, std::initializer_list<const char*> allowed) const {
    std::string v = String(k);
    if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return v;
    Fail(std::string(k) + " must be one of " + Join(allowed, ", ") + ", got \"" + v + "\"");
  }

  std::int64_t Int(const char* k) const {
    if (!Has(k) || !obj_[k].is_number_integer()) Fail(std::string(k) + " must be a whole number");
    return obj_[k].get<std::int64_t>();
  }

  bool Bool(const char* k) const {
    if (!Has(k) || !obj_[k].is_boolean()) Fail(std::string(k) + " must be true or false");
    return obj_[k].get<bool>();
  }

  const Json& Raw(const char* k) const { return obj_[k]; }

  // The server's own rules (model/rules.h), checked before any call is made.
  void Rule(const Status& s) const {
    if (!s.ok()) Fail(s.message());
  }
  std::string Name(const char* k) const {
    std::string v = String(k);
    Rule(model::rules::CheckName(v, k));
    return v;
  }
  std::int64_t IntIn(const char* k, std::int64_t lo, std::int64_t hi) const {
    const std::int64_t v = Int(k);
    Rule(model::rules::CheckRange(v, lo, hi, k));
    return v;
  }
  const std::string& where() const { return where_; }

 private:
  const Json& obj_;
  std::string where_;
};

// `min_capacity`: 0 for an environment, 1 for a quota share (as the server).
Json CheckLimits(const Checker& c, std::int64_t min_capacity) {
  if (!c.Has("capacityLimits") || !c.Raw("capacityLimits").is_array() ||
      c.Raw("capacityLimits").empty()) {
    c.Fail("capacityLimits must be a non-empty list of {capacityUnit, maxCapacity}");
  }
  Json out = Json::array();
  std::vector<model::CapacityLimit> limits;
  std::size_t i = 0;
  for (const Json& l : c.Raw("capacityLimits")) {
    Checker lc(l, c.where() + ".capacityLimits[" + std::to_string(i++) + "]");
    lc.OnlyKeys({"capacityUnit", "maxCapacity"});
    limits.push_back({lc.String("capacityUnit"), lc.Int("maxCapacity")});
    out.push_back(
        {{"capacityUnit", limits.back().unit}, {"maxCapacity", limits.back().max_capacity}});
  }
  c.Rule(model::rules::CheckCapacityLimits(limits, min_capacity, "capacityLimits"));
  if (min_capacity == 0) c.Rule(model::rules::CheckEnvironmentUnits(limits, "capacityLimits"));
  return out;
}

std::string Where(const std::string& origin, const char* list, std::size_t i, const Json& entry) {
  std::string w = origin + ": " + list + "[" + std::to_string(i) + "]";
  if (entry.is_object() && entry.contains("name") && entry["name"].is_string()) {
    w += " (" + entry["name"].get<std::string>() + ")";
  }
  return w;
}

void OptionalState(const Checker& c, Json& out) {
  if (c.Has("state")) out["state"] = c.Enum("state", {"ENABLED", "DISABLED"});
}

Json CheckEnvironment(const Checker& c) {
  c.OnlyKeys({"name", "capacityLimits", "state"});
  Json out = {{"name", c.Name("name")}, {"capacityLimits", CheckLimits(c, 0)}};
  OptionalState(c, out);
  return out;
}

Json CheckPolicy(const Checker& c) {
  c.OnlyKeys({"name", "quotaSharePolicy"});
  Json out = {{"name", c.Name("name")}};
  if (c.Has("quotaSharePolicy")) {
    Checker q(c.Raw("quotaSharePolicy"), c.where() + ".quotaSharePolicy");
    q.OnlyKeys({"idleResourceAssignmentStrategy"});
    if (q.Has("idleResourceAssignmentStrategy")) q.Enum("idleResourceAssignmentStrategy", {"FIFO"});
  }
  return out;
}

Json CheckQueue(const Checker& c) {
  c.OnlyKeys({"name", "serviceEnvironment", "schedulingPolicy", "priority", "state",
              "jobStateTimeLimitActions"});
  Json out = {{"name", c.Name("name")}, {"serviceEnvironment", c.String("serviceEnvironment")}};
  if (c.Has("schedulingPolicy")) out["schedulingPolicy"] = c.String("schedulingPolicy");
  if (c.Has("priority"))
    out["priority"] = c.IntIn("priority", 0, model::rules::kMaxJobQueuePriority);
  OptionalState(c, out);
  if (c.Has("jobStateTimeLimitActions")) {
    if (!c.Raw("jobStateTimeLimitActions").is_array()) {
      c.Fail("jobStateTimeLimitActions must be a list");
    }
    Json actions = Json::array();
    std::size_t i = 0;
    for (const Json& a : c.Raw("jobStateTimeLimitActions")) {
      Checker ac(a, c.where() + ".jobStateTimeLimitActions[" + std::to_string(i++) + "]");
      ac.OnlyKeys({"reason", "state", "maxTimeSeconds", "action"});
      actions.push_back(
          {{"reason", ac.String("reason")},
           {"state", ac.Has("state") ? ac.String("state") : "RUNNABLE"},
           {"maxTimeSeconds", ac.IntIn("maxTimeSeconds", model::rules::kMinTimeLimitSeconds,
                                       model::rules::kMaxTimeLimitSeconds)},
           {"action", ac.Has("action") ? ac.String("action") : "TERMINATE"}});
    }
    out["jobStateTimeLimitActions"] = actions;
  }
  return out;
}

Json CheckShare(const Checker& c) {
  c.OnlyKeys({"name", "jobQueue", "capacityLimits", "strategy", "borrowLimit", "inSharePreemption",
              "state"});
  Json out = {{"name", c.Name("name")},
              {"jobQueue", c.String("jobQueue")},
              {"capacityLimits", CheckLimits(c, 1)},
              {"strategy", c.Enum("strategy", {"RESERVE", "LEND", "LEND_AND_BORROW"})}};
  if (c.Has("borrowLimit")) {
    const std::int64_t limit = c.Int("borrowLimit");
    c.Rule(model::rules::CheckBorrowLimit(
        limit, *model::ParseSharingStrategy(out["strategy"].get<std::string>()), "borrowLimit"));
    out["borrowLimit"] = limit;
  }
  if (c.Has("inSharePreemption")) out["inSharePreemption"] = c.Bool("inSharePreemption");
  OptionalState(c, out);
  return out;
}

template <typename Fn>
std::vector<Json> CheckList(const Json& root, const char* list, const std::string& origin, Fn check,
                            const std::function<std::string(const Json&)>& key) {
  std::vector<Json> out;
  if (!root.contains(list) || root[list].is_null()) return out;
  if (!root[list].is_array()) throw CliError(origin + ": " + list + " must be a list");
  std::set<std::string> seen;
  std::size_t i = 0;
  for (const Json& entry : root[list]) {
    const std::string where = Where(origin, list, i++, entry);
    Json checked = check(Checker(entry, where));
    if (!seen.insert(key(checked)).second) throw CliError(where + ": listed twice");
    out.push_back(std::move(checked));
  }
  return out;
}

// ---------- comparing with the server ----------

Json SortedLimits(const Json& limits) {
  std::vector<std::pair<std::string, std::int64_t>> v;
  if (limits.is_array()) {
    for (const Json& l : limits) {
      v.emplace_back(l.value("capacityUnit", ""), l.value("maxCapacity", std::int64_t{0}));
    }
  }
  std::sort(v.begin(), v.end());
  Json out = Json::array();
  for (const auto& [u, m] : v) out.push_back({{"capacityUnit", u}, {"maxCapacity", m}});
  return out;
}

std::string NameFromArn(const std::string& arn) {
  const auto slash = arn.rfind('/');
  return slash == std::string::npos ? arn : arn.substr(slash + 1);
}

class Applier {
 public:
  Applier(Client& client, std::ostream& out, bool dry_run)
      : client_(client), out_(out), dry_run_(dry_run) {}

  void Environment(const Json& d) {
    const std::string name = d["name"];
    const Json found =
        client_.Call("DescribeServiceEnvironments", {{"serviceEnvironments", Json::array({name})}});
    const Json* cur = First(found, "serviceEnvironments", "serviceEnvironmentName", name);
    environments_.insert(name);
    if (cur == nullptr) {
      Json req = {{"serviceEnvironmentName", name},
                  {"serviceEnvironmentType", "SAGEMAKER_TRAINING"},
                  {"capacityLimits", d["capacityLimits"]}};
      if (d.contains("state")) req["state"] = d["state"];
      Create("serviceEnvironment", name, "CreateServiceEnvironment", req);
      return;
    }
    Json req = {{"serviceEnvironment", name}};
    std::vector<std::string> changed;
    if (SortedLimits(cur->value("capacityLimits", Json::array())) !=
        SortedLimits(d["capacityLimits"])) {
      req["capacityLimits"] = d["capacityLimits"];
      changed.push_back("capacityLimits");
    }
    CompareState(*cur, d, req, changed);
    Update("serviceEnvironment", name, "UpdateServiceEnvironment", req, changed);
  }

  void Policy(const Json& d) {
    const std::string name = d["name"];
    const std::string arn = FindPolicyArn(name);
    const Json qsp = {{"idleResourceAssignmentStrategy", "FIFO"}};
    if (arn.empty()) {
      const Json ans = Create("schedulingPolicy", name, "CreateSchedulingPolicy",
                              {{"name", name}, {"quotaSharePolicy", qsp}});
      policy_arns_[name] = ans.value("arn", "");
      return;
    }
    policy_arns_[name] = arn;
    const Json found = client_.Call("DescribeSchedulingPolicies", {{"arns", Json::array({arn})}});
    const Json* cur = First(found, "schedulingPolicies", "arn", arn);
    std::vector<std::string> changed;
    if (cur == nullptr || !cur->contains("quotaSharePolicy") ||
        (*cur)["quotaSharePolicy"].value("idleResourceAssignmentStrategy", "") != "FIFO") {
      changed.push_back("quotaSharePolicy");
    }
    Update("schedulingPolicy", name, "UpdateSchedulingPolicy",
           {{"arn", arn}, {"quotaSharePolicy", qsp}}, changed);
  }

  void Queue(const Json& d) {
    const std::string name = d["name"];
    std::string policy_arn;
    if (d.contains("schedulingPolicy")) policy_arn = PolicyArn(d["schedulingPolicy"]);
    const Json found = client_.Call("DescribeJobQueues", {{"jobQueues", Json::array({name})}});
    const Json* cur = First(found, "jobQueues", "jobQueueName", name);
    if (cur == nullptr) {
      RequireEnvironment(name, d["serviceEnvironment"]);
      Json req = {{"jobQueueName", name},
                  {"jobQueueType", "SAGEMAKER_TRAINING"},
                  {"priority", d.value("priority", std::int64_t{1})},
                  {"serviceEnvironmentOrder",
                   Json::array({{{"order", 1}, {"serviceEnvironment", d["serviceEnvironment"]}}})}};
      if (!policy_arn.empty()) req["schedulingPolicyArn"] = policy_arn;
      if (d.contains("state")) req["state"] = d["state"];
      if (d.contains("jobStateTimeLimitActions")) {
        req["jobStateTimeLimitActions"] = d["jobStateTimeLimitActions"];
      }
      Create("jobQueue", name, "CreateJobQueue", req);
      queue_arns_[name] = "";
      return;
    }
    queue_arns_[name] = cur->value("jobQueueArn", "");
    const Json& order = cur->value("serviceEnvironmentOrder", Json::array());
    const std::string env =
        order.empty() ? "" : NameFromArn(order[0].value("serviceEnvironment", ""));
    if (env != NameFromArn(d["serviceEnvironment"])) {
      throw CliError("jobQueue " + name + ": serviceEnvironment is " + env + " on the server and " +
                     d["serviceEnvironment"].get<std::string>() +
                     " in the file; a queue's service environment cannot be changed here "
                     "(create a new queue instead)");
    }
    Json req = {{"jobQueue", name}};
    std::vector<std::string> changed;
    if (d.contains("priority") && cur->value("priority", std::int64_t{-1}) != d["priority"]) {
      req["priority"] = d["priority"];
      changed.push_back("priority");
    }
    if (!policy_arn.empty() && cur->value("schedulingPolicyArn", "") != policy_arn) {
      req["schedulingPolicyArn"] = policy_arn;
      changed.push_back("schedulingPolicy");
    }
    if (d.contains("jobStateTimeLimitActions") &&
        cur->value("jobStateTimeLimitActions", Json::array()) != d["jobStateTimeLimitActions"]) {
      req["jobStateTimeLimitActions"] = d["jobStateTimeLimitActions"];
      changed.push_back("jobStateTimeLimitActions");
    }
    CompareState(*cur, d, req, changed);
    Update("jobQueue", name, "UpdateJobQueue", req, changed);
  }

  void Share(const Json& d) {
    const std::string name = d["name"];
    const std::string queue = d["jobQueue"];
    const std::string label = queue + "/" + name;
    const Json* cur = nullptr;
    Json shares = Json::array();
    if (QueueExists(queue)) {
      shares = ListAll(client_, "ListQuotaShares", {{"jobQueue", queue}}, "quotaShares");
      for (const Json& s : shares) {
        if (s.value("quotaShareName", "") == name) cur = &s;
      }
    }
    Json sharing = {{"strategy", d["strategy"]}};
    if (d.contains("borrowLimit")) sharing["borrowLimit"] = d["borrowLimit"];
    if (cur == nullptr) {
      Json req = {
          {"quotaShareName", name},
          {"jobQueue", queue},
          {"capacityLimits", d["capacityLimits"]},
          {"resourceSharingConfiguration", sharing},
          {"preemptionConfiguration",
           {{"inSharePreemption", d.value("inSharePreemption", false) ? "ENABLED" : "DISABLED"}}}};
      if (d.contains("state")) req["state"] = d["state"];
      Create("quotaShare", label, "CreateQuotaShare", req);
      return;
    }
    Json req = {{"quotaShareArn", cur->value("quotaShareArn", "")}};
    std::vector<std::string> changed;
    if (SortedLimits(cur->value("capacityLimits", Json::array())) !=
        SortedLimits(d["capacityLimits"])) {
      req["capacityLimits"] = d["capacityLimits"];
      changed.push_back("capacityLimits");
    }
    const Json cur_sharing = cur->value("resourceSharingConfiguration", Json::object());
    if (cur_sharing.value("strategy", "") != d["strategy"]) {
      req["resourceSharingConfiguration"] = sharing;
      changed.push_back("strategy");
      if (d.contains("borrowLimit")) changed.push_back("borrowLimit");
    } else if (d.contains("borrowLimit") &&
               cur_sharing.value("borrowLimit", std::int64_t{-1}) != d["borrowLimit"]) {
      req["resourceSharingConfiguration"] = sharing;
      changed.push_back("borrowLimit");
    }
    if (d.contains("inSharePreemption")) {
      const std::string want = d["inSharePreemption"].get<bool>() ? "ENABLED" : "DISABLED";
      const std::string have =
          cur->value("preemptionConfiguration", Json::object()).value("inSharePreemption", "");
      if (have != want) {
        req["preemptionConfiguration"] = {{"inSharePreemption", want}};
        changed.push_back("inSharePreemption");
      }
    }
    CompareState(*cur, d, req, changed);
    Update("quotaShare", label, "UpdateQuotaShare", req, changed);
  }

  ApplyCounts counts() const { return counts_; }

 private:
  // The entry of answer[list] whose `key` is `value`.
  static const Json* First(const Json& answer, const char* list, const char* key,
                           const std::string& value) {
    if (!answer.contains(list) || !answer[list].is_array()) return nullptr;
    for (const Json& item : answer[list]) {
      if (item.value(key, "") == value) return &item;
    }
    return nullptr;
  }

  static void CompareState(const Json& cur, const Json& d, Json& req,
                           std::vector<std::string>& changed) {
    if (d.contains("state") && cur.value("state", "ENABLED") != d["state"]) {
      req["state"] = d["state"];
      changed.push_back("state");
    }
  }

  std::string FindPolicyArn(const std::string& name) {
    for (const Json& p :
         ListAll(client_, "ListSchedulingPolicies", Json::object(), "schedulingPolicies")) {
      std::string arn = p.value("arn", "");
      const std::string suffix = ":scheduling-policy/" + name;
      if (arn.size() >= suffix.size() &&
          arn.compare(arn.size() - suffix.size(), suffix.size(), suffix) == 0) {
        return arn;
      }
    }
    return "";
  }

  std::string PolicyArn(const std::string& name_or_arn) {
    if (name_or_arn.rfind("arn:", 0) == 0) return name_or_arn;
    if (auto it = policy_arns_.find(name_or_arn); it != policy_arns_.end()) {
      return it->second.empty() ? "(to be created)" : it->second;
    }
    std::string arn = FindPolicyArn(name_or_arn);
    if (arn.empty()) {
      throw CliError("scheduling policy " + name_or_arn +
                     " does not exist and is not in the file's schedulingPolicies");
    }
    policy_arns_[name_or_arn] = arn;
    return arn;
  }

  // A new queue's service environment must be in the file or on the server.
  void RequireEnvironment(const std::string& queue, const std::string& name_or_arn) {
    const std::string name = NameFromArn(name_or_arn);
    if (environments_.count(name) != 0) return;
    const Json found =
        client_.Call("DescribeServiceEnvironments", {{"serviceEnvironments", Json::array({name})}});
    if (First(found, "serviceEnvironments", "serviceEnvironmentName", name) == nullptr) {
      throw CliError("jobQueue " + queue + ": service environment " + name +
                     " does not exist and is not in the file's serviceEnvironments");
    }
    environments_.insert(name);
  }

  bool QueueExists(const std::string& queue) {
    if (auto it = queue_arns_.find(queue); it != queue_arns_.end()) return !it->second.empty();
    const Json found = client_.Call("DescribeJobQueues", {{"jobQueues", Json::array({queue})}});
    const bool exists = First(found, "jobQueues", "jobQueueName", queue) != nullptr;
    if (!exists) {
      throw CliError("quota share on job queue " + queue +
                     ": the queue does not exist and is not in the file's jobQueues");
    }
    queue_arns_[queue] = exists ? "?" : "";
    return exists;
  }

  Json Create(const char* kind, const std::string& name, const char* action, const Json& req) {
    ++counts_.created;
    if (dry_run_) {
      out_ << kind << " " << name << ": would be created\n";
      return Json::object();
    }
    Json ans = client_.Call(action, req);
    out_ << kind << " " << name << ": created\n";
    return ans;
  }

  void Update(const char* kind, const std::string& name, const char* action, const Json& req,
              const std::vector<std::string>& changed) {
    if (changed.empty()) {
      ++counts_.unchanged;
      out_ << kind << " " << name << ": unchanged\n";
      return;
    }
    ++counts_.updated;
    if (dry_run_) {
      out_ << kind << " " << name << ": would be updated (" << Join(changed, ", ") << ")\n";
      return;
    }
    client_.Call(action, req);
    out_ << kind << " " << name << ": updated (" << Join(changed, ", ") << ")\n";
  }

  Client& client_;
  std::ostream& out_;
  bool dry_run_;
  ApplyCounts counts_;
  std::map<std::string, std::string> policy_arns_;  // name -> ARN ("" = created in a dry run)
  std::map<std::string, std::string> queue_arns_;   // name -> ARN ("" = does not exist yet)
  std::set<std::string> environments_;              // in the file or found on the server
};

}  // namespace

ClusterSpec ParseClusterSpec(const std::string& yaml_text, const std::string& origin) {
  Json root;
  try {
    root = ToJson(YAML::Load(yaml_text));
  } catch (const YAML::Exception& e) {
    throw CliError(origin + ": not valid YAML: " + e.what());
  }
  if (root.is_null()) root = Json::object();
  if (!root.is_object()) throw CliError(origin + ": the top level must be a mapping");
  for (const auto& [k, v] : root.items()) {
    if (k != "serviceEnvironments" && k != "schedulingPolicies" && k != "jobQueues" &&
        k != "quotaShares") {
      throw CliError(origin + ": unknown top-level key \"" + k +
                     "\" (allowed: serviceEnvironments, schedulingPolicies, jobQueues, "
                     "quotaShares)");
    }
  }
  auto by_name = [](const Json& j) { return j["name"].get<std::string>(); };
  ClusterSpec spec;
  spec.service_environments =
      CheckList(root, "serviceEnvironments", origin, CheckEnvironment, by_name);
  spec.scheduling_policies = CheckList(root, "schedulingPolicies", origin, CheckPolicy, by_name);
  spec.job_queues = CheckList(root, "jobQueues", origin, CheckQueue, by_name);
  spec.quota_shares = CheckList(root, "quotaShares", origin, CheckShare, [](const Json& j) {
    return j["jobQueue"].get<std::string>() + "/" + j["name"].get<std::string>();
  });
  return spec;
}

ClusterSpec LoadClusterSpec(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw CliError("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return ParseClusterSpec(text.str(), path);
}

namespace {

// Runs `a` over every object of the file. With `problems`, an object the server would refuse is
// noted there and the next one is tried (the plan); without, the first refusal ends the run.
void RunOver(Applier& a, const ClusterSpec& spec, std::vector<std::string>* problems) {
  auto each = [problems](const std::vector<Json>& list, auto&& fn) {
    for (const Json& entry : list) {
      if (problems == nullptr) {
        fn(entry);
        continue;
      }
      try {
        fn(entry);
      } catch (const ApiError&) {
        throw;  // the server did not answer a lookup: no plan can be made
      } catch (const CliError& e) {
        problems->push_back(e.what());
      }
    }
  };
  each(spec.service_environments, [&a](const Json& e) { a.Environment(e); });
  each(spec.scheduling_policies, [&a](const Json& p) { a.Policy(p); });
  each(spec.job_queues, [&a](const Json& q) { a.Queue(q); });
  each(spec.quota_shares, [&a](const Json& s) { a.Share(s); });
}

}  // namespace

ApplyCounts ApplySpec(Client& client, const ClusterSpec& spec, std::ostream& out, bool dry_run) {
  // The whole file is planned against the server before anything changes: a file with one bad
  // entry changes nothing, and every problem is named at once.
  std::ostringstream plan;
  Applier planner(client, plan, /*dry_run=*/true);
  std::vector<std::string> problems;
  RunOver(planner, spec, &problems);
  if (!problems.empty()) {
    throw CliError("nothing was changed; the file has " + std::to_string(problems.size()) +
                   (problems.size() == 1 ? " problem:\n  " : " problems:\n  ") +
                   Join(problems, "\n  "));
  }
  for (const std::string& w : CapacityWarnings(client, spec)) out << "warning: " << w << '\n';
  if (dry_run) {
    out << plan.str();
    return planner.counts();
  }
  Applier a(client, out, /*dry_run=*/false);
  RunOver(a, spec, nullptr);
  return a.counts();
}

}  // namespace allot::cli
