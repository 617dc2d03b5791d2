// Kueue's scheduler-performance generator (kubernetes-sigs/kueue,
// test/performance/scheduler/runner/generator): cohorts of cluster queues, each fed by sets of
// identical workloads created at a fixed interval. We rebuild the same objects as an Allot
// cluster and a trace, so that Allot can be measured on Kueue's own benchmark.

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "sim/csv.h"
#include "sim/trace.h"

namespace allot::sim {

namespace {

constexpr std::int64_t kMaxPriority = 9999;  // the engine's schedulingPriority range
// A guard against a typo in a count, not a limit of the simulator.
constexpr std::int64_t kMaxWorkloads = 10'000'000;

// ---------- reading the file ----------

// One mapping of the generator file and where it sits, so that every error names its field.
class Mapping {
 public:
  Mapping(const YAML::Node& node, std::string path, const std::string& origin)
      : node_(node), path_(std::move(path)), origin_(&origin) {}

  // Fails unless this is a mapping whose keys are all in `allowed`.
  Status Check(std::initializer_list<std::string_view> allowed) const {
    if (!node_.IsMap()) {
      return Error("", path_.empty() ? "the file must be a mapping with a cohorts list"
                                     : "must be a mapping");
    }
    for (const auto& kv : node_) {
      const std::string key = kv.first.as<std::string>();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        return Error("", "unknown field \"" + key + "\" (allowed: " + Join(allowed, ", ") + ")");
      }
    }
    return Status::Ok();
  }

  bool Has(const char* key) const {
    const YAML::Node v = node_[key];
    return v.IsDefined() && !v.IsNull();
  }

  Result<std::string> Text(const char* key) const {
    if (!Has(key)) return Error(key, "is required");
    const YAML::Node v = node_[key];
    if (!v.IsScalar() || v.Scalar().empty()) return Error(key, "must be a non-empty string");
    return v.Scalar();
  }

  // A whole number of at least `min`: Kueue writes quantities as strings ("20"), so both forms
  // are read; suffixed quantities ("500m", "1Gi") are not supported.
  Result<std::int64_t> Int(const char* key, std::int64_t min) const {
    if (!Has(key)) return Error(key, "is required");
    const YAML::Node v = node_[key];
    if (!v.IsScalar()) return Error(key, "must be a whole number");
    Result<std::int64_t> n = ParseCsvInt(v.Scalar(), *origin_, Path(key));
    if (!n.ok()) return n.status();
    if (*n < min) {
      return Error(key, "must be at least " + std::to_string(min) + ", got " + v.Scalar());
    }
    return n;
  }

  Result<std::vector<Mapping>> List(const char* key, bool required) const {
    std::vector<Mapping> items;
    if (!Has(key)) {
      if (required) return Error(key, "is required (a non-empty list)");
      return items;
    }
    const YAML::Node v = node_[key];
    if (!v.IsSequence()) return Error(key, "must be a list");
    if (required && v.size() == 0) return Error(key, "must not be empty");
    for (std::size_t i = 0; i < v.size(); ++i) {
      items.emplace_back(v[i], Path(key) + "[" + std::to_string(i) + "]", *origin_);
    }
    return items;
  }

  Status Error(const char* key, const std::string& what) const {
    return InvalidArgument(*origin_ + ": " + (Path(key).empty() ? "" : Path(key) + ": ") + what);
  }

 private:
  std::string Path(const char* key) const {
    if (*key == '\0') return path_;
    return path_.empty() ? std::string(key) : path_ + "." + key;
  }

  YAML::Node node_;
  std::string path_;
  const std::string* origin_;
};

// The file's objects, checked.
struct WorkloadSpec {
  std::string class_name;
  Duration runtime = 0;
  std::int32_t priority = 0;
  std::int64_t request = 0;
};

struct WorkloadsSetSpec {
  std::int64_t count = 0;
  Duration interval = 0;
  std::vector<WorkloadSpec> workloads;
};

struct QueuesSetSpec {
  std::string class_name;
  std::int64_t count = 0;
  std::int64_t nominal_quota = 0;
  std::optional<std::int64_t> borrowing_limit;  // absent: borrows without limit
  bool in_share_preemption = false;
  std::vector<WorkloadsSetSpec> workloads_sets;
};

struct CohortSpec {
  std::string class_name;
  std::int64_t count = 0;
  std::vector<QueuesSetSpec> queues_sets;
};

// One of Kueue's PreemptionPolicy values, or "" when the field is absent. Only
// withinClusterQueue changes the simulation: every Allot lender reclaims what it lent.
Result<std::string> PreemptionPolicy(const Mapping& m, const char* key,
                                     std::initializer_list<std::string_view> allowed) {
  if (!m.Has(key)) return std::string();
  Result<std::string> value = m.Text(key);
  if (!value.ok()) return value.status();
  if (std::find(allowed.begin(), allowed.end(), *value) != allowed.end()) return value;
  return m.Error(key, "must be one of " + Join(allowed, ", ") + ", got \"" + *value + "\"");
}

Result<WorkloadSpec> ReadWorkload(const Mapping& m) {
  ALLOT_RETURN_IF_ERROR(m.Check({"className", "runtimeMs", "priority", "request"}));
  WorkloadSpec w;
  Result<std::string> name = m.Text("className");
  if (!name.ok()) return name.status();
  Result<std::int64_t> runtime = m.Int("runtimeMs", 1);
  if (!runtime.ok()) return runtime.status();
  Result<std::int64_t> priority = m.Int("priority", 0);
  if (!priority.ok()) return priority.status();
  if (*priority > kMaxPriority) return m.Error("priority", "must be at most 9999");
  Result<std::int64_t> request = m.Int("request", 1);
  if (!request.ok()) return request.status();
  w.class_name = *name;
  w.runtime = *runtime;
  w.priority = static_cast<std::int32_t>(*priority);
  w.request = *request;
  return w;
}

Result<WorkloadsSetSpec> ReadWorkloadsSet(const Mapping& m) {
  ALLOT_RETURN_IF_ERROR(m.Check({"count", "creationIntervalMs", "workloads"}));
  WorkloadsSetSpec s;
  Result<std::int64_t> count = m.Int("count", 1);
  if (!count.ok()) return count.status();
  if (*count > kMaxWorkloads) return m.Error("count", "is too large");
  Result<std::int64_t> interval = m.Int("creationIntervalMs", 0);
  if (!interval.ok()) return interval.status();
  if (*interval > std::numeric_limits<std::int64_t>::max() / *count) {
    return m.Error("creationIntervalMs", "is too large");
  }
  Result<std::vector<Mapping>> workloads = m.List("workloads", true);
  if (!workloads.ok()) return workloads.status();
  for (const Mapping& w : *workloads) {
    Result<WorkloadSpec> spec = ReadWorkload(w);
    if (!spec.ok()) return spec.status();
    s.workloads.push_back(std::move(spec).value());
  }
  s.count = *count;
  s.interval = *interval;
  return s;
}

Status ReadQueuesSetLimits(const Mapping& m, QueuesSetSpec* q) {
  Result<std::int64_t> nominal = m.Int("nominalQuota", 1);
  if (!nominal.ok()) return nominal.status();
  q->nominal_quota = *nominal;
  if (m.Has("borrowingLimit")) {
    Result<std::int64_t> borrowing = m.Int("borrowingLimit", 0);
    if (!borrowing.ok()) return borrowing.status();
    if (*borrowing > std::numeric_limits<std::int64_t>::max() / 100) {
      return m.Error("borrowingLimit", "is too large");
    }
    q->borrowing_limit = *borrowing;
  }
  Result<std::string> reclaim =
      PreemptionPolicy(m, "reclaimWithinCohort", {"Never", "LowerPriority", "Any"});
  if (!reclaim.ok()) return reclaim.status();
  Result<std::string> within = PreemptionPolicy(
      m, "withinClusterQueue", {"Never", "LowerPriority", "LowerOrNewerEqualPriority"});
  if (!within.ok()) return within.status();
  q->in_share_preemption = *within == "LowerPriority";
  return Status::Ok();
}

Result<QueuesSetSpec> ReadQueuesSet(const Mapping& m) {
  ALLOT_RETURN_IF_ERROR(m.Check({"className", "count", "nominalQuota", "borrowingLimit",
                                 "reclaimWithinCohort", "withinClusterQueue", "workloadsSets"}));
  QueuesSetSpec q;
  Result<std::string> name = m.Text("className");
  if (!name.ok()) return name.status();
  Result<std::int64_t> count = m.Int("count", 1);
  if (!count.ok()) return count.status();
  ALLOT_RETURN_IF_ERROR(ReadQueuesSetLimits(m, &q));
  Result<std::vector<Mapping>> sets = m.List("workloadsSets", false);
  if (!sets.ok()) return sets.status();
  for (const Mapping& s : *sets) {
    Result<WorkloadsSetSpec> spec = ReadWorkloadsSet(s);
    if (!spec.ok()) return spec.status();
    q.workloads_sets.push_back(std::move(spec).value());
  }
  q.class_name = *name;
  q.count = *count;
  return q;
}

Result<CohortSpec> ReadCohort(const Mapping& m) {
  ALLOT_RETURN_IF_ERROR(m.Check({"className", "count", "queuesSets"}));
  CohortSpec c;
  Result<std::string> name = m.Text("className");
  if (!name.ok()) return name.status();
  Result<std::int64_t> count = m.Int("count", 1);
  if (!count.ok()) return count.status();
  Result<std::vector<Mapping>> sets = m.List("queuesSets", true);
  if (!sets.ok()) return sets.status();
  for (const Mapping& s : *sets) {
    Result<QueuesSetSpec> spec = ReadQueuesSet(s);
    if (!spec.ok()) return spec.status();
    c.queues_sets.push_back(std::move(spec).value());
  }
  c.class_name = *name;
  c.count = *count;
  return c;
}

// resourceFlavor only names Kueue's flavor; topology and dra (TAS) are not simulated.
Result<std::vector<CohortSpec>> ReadGenerator(const YAML::Node& root, const std::string& origin) {
  const Mapping top(root, "", origin);
  ALLOT_RETURN_IF_ERROR(top.Check({"cohorts", "resourceFlavor"}));
  Result<std::vector<Mapping>> cohorts = top.List("cohorts", true);
  if (!cohorts.ok()) return cohorts.status();
  std::vector<CohortSpec> out;
  for (const Mapping& c : *cohorts) {
    Result<CohortSpec> spec = ReadCohort(c);
    if (!spec.ok()) return spec.status();
    out.push_back(std::move(spec).value());
  }
  return out;
}

// ---------- building the cluster and the trace ----------

class Builder {
 public:
  Builder(const std::string& origin, const std::string& unit) : origin_(origin), unit_(unit) {}

  Status AddCohort(const CohortSpec& spec, std::int64_t index) {
    const std::string queue = spec.class_name + "-" + std::to_string(index);
    const std::string environment = queue + "-env";
    if (!queue_names_.insert(queue).second) {
      return InvalidArgument(origin_ + ": two cohorts are named " + queue +
                             " (give each cohort entry its own className)");
    }
    std::int64_t capacity = 0;
    std::int64_t share_index = 0;  // numbered across the cohort's queuesSets
    for (const QueuesSetSpec& set : spec.queues_sets) {
      for (std::int64_t j = 0; j < set.count; ++j) {
        const std::string share = set.class_name + "-" + std::to_string(share_index++);
        if (!share_names_.insert(queue + "/" + share).second) {
          return InvalidArgument(origin_ + ": cohort " + queue + " has two cluster queues named " +
                                 share + " (give each queuesSet its own className)");
        }
        AddShare(queue, share, set);
        capacity += set.nominal_quota;
        ALLOT_RETURN_IF_ERROR(AddWorkloads(queue, share, set));
      }
    }
    generated_.cluster.environments.push_back({environment, {{unit_, capacity}}});
    model::JobQueueConfig q;
    q.name = queue;
    q.service_environment = environment;
    generated_.cluster.queues.push_back(q);
    return Status::Ok();
  }

  Generated Finish() && {
    Normalize(&generated_.trace);
    return std::move(generated_);
  }

 private:
  void AddShare(const std::string& queue, const std::string& name, const QueuesSetSpec& set) {
    model::QuotaShareConfig share;
    share.queue = queue;
    share.name = name;
    share.capacity_limits.push_back({unit_, set.nominal_quota});
    share.strategy = model::SharingStrategy::kLendAndBorrow;
    // Kueue's borrowingLimit is a quantity, Allot's borrowLimit a percentage of the share's own
    // capacity; the integer division rounds a fractional percentage down.
    share.borrow_limit = set.borrowing_limit ? *set.borrowing_limit * 100 / set.nominal_quota
                                             : model::kUnlimitedBorrow;
    share.in_share_preemption = set.in_share_preemption;
    generated_.cluster.shares.push_back(share);
  }

  Status AddWorkloads(const std::string& queue, const std::string& share,
                      const QueuesSetSpec& set) {
    std::vector<TraceJob>& jobs = generated_.trace.jobs;
    for (const WorkloadsSetSpec& ws : set.workloads_sets) {
      const auto per_step = static_cast<std::int64_t>(ws.workloads.size());
      if (ws.count * per_step > kMaxWorkloads - static_cast<std::int64_t>(jobs.size())) {
        return InvalidArgument(origin_ + ": the file generates more than " +
                               std::to_string(kMaxWorkloads) + " workloads");
      }
      for (std::int64_t k = 0; k < ws.count; ++k) {
        for (const WorkloadSpec& w : ws.workloads) jobs.push_back(Workload(queue, share, w, ws, k));
      }
    }
    return Status::Ok();
  }

  TraceJob Workload(const std::string& queue, const std::string& share, const WorkloadSpec& w,
                    const WorkloadsSetSpec& set, std::int64_t k) const {
    TraceJob job;
    job.submit = k * set.interval;
    job.duration = w.runtime;
    job.queue = queue;
    job.share = share;
    job.unit = unit_;
    job.count = w.request;
    job.priority = w.priority;
    job.checkpoint_interval = 0;  // Kueue's workloads keep no checkpoints: a preempted one restarts
    job.name = share + "-" + w.class_name + "-" + std::to_string(k);
    job.group = w.class_name;
    return job;
  }

  const std::string& origin_;
  const std::string& unit_;
  Generated generated_;
  std::set<std::string> queue_names_;
  std::set<std::string> share_names_;
};

Result<Generated> Generate(const std::vector<CohortSpec>& cohorts, const std::string& origin,
                           const std::string& unit) {
  Builder builder(origin, unit);
  // Cohort by cohort, queue by queue, set by set, step by step: the order ties keep after the
  // stable sort by submission.
  for (const CohortSpec& cohort : cohorts) {
    for (std::int64_t i = 0; i < cohort.count; ++i) {
      ALLOT_RETURN_IF_ERROR(builder.AddCohort(cohort, i));
    }
  }
  return std::move(builder).Finish();
}

}  // namespace

Result<Generated> GenerateKueue(const std::string& yaml_text, const std::string& origin,
                                const std::string& unit) {
  const std::string& text = yaml_text.empty() ? KueueBaselineYaml() : yaml_text;
  try {
    const YAML::Node root = YAML::Load(text);
    Result<std::vector<CohortSpec>> cohorts = ReadGenerator(root, origin);
    if (!cohorts.ok()) return cohorts.status();
    return Generate(*cohorts, origin, unit);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(origin + ": " + e.what());
  }
}

// Kueue's baseline scheduler benchmark (test/performance/scheduler/configs/baseline/
// generator.yaml): 5 cohorts of 6 cluster queues, 500 workloads per cluster queue.
const std::string& KueueBaselineYaml() {
  static const std::string kBaseline = R"(# Kueue's baseline scheduler-performance setup.
cohorts:
  - className: cohort
    count: 5
    queuesSets:
      - className: cq
        count: 6
        nominalQuota: 20
        borrowingLimit: 100
        reclaimWithinCohort: Any
        withinClusterQueue: LowerPriority
        workloadsSets:
          - count: 350
            creationIntervalMs: 100
            workloads:
              - {className: small, runtimeMs: 200, priority: 50, request: 1}
          - count: 100
            creationIntervalMs: 500
            workloads:
              - {className: medium, runtimeMs: 500, priority: 100, request: 5}
          - count: 50
            creationIntervalMs: 1200
            workloads:
              - {className: large, runtimeMs: 1000, priority: 200, request: 20}
)";
  return kBaseline;
}

}  // namespace allot::sim
