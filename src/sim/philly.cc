// The Philly job list as the Pollux artifact derived it (petuum/adaptdl osdi21-artifact,
// simulator/traces/philly.csv) and the VC sizes from the Helios artifact (philly_vc.csv).

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "common/civil_time.h"
#include "sim/csv.h"
#include "sim/trace.h"

namespace allot::sim {

namespace {

// ---------- timestamps ----------

// The digits text[pos, pos + width) as a number, or nullopt if any is not a digit.
std::optional<std::int64_t> Digits(std::string_view text, std::size_t pos, std::size_t width) {
  std::int64_t value = 0;
  for (std::size_t i = pos; i < pos + width; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

bool SeparatorsAt(std::string_view t) {
  return t[4] == '-' && t[7] == '-' && t[10] == ' ' && t[13] == ':' && t[16] == ':';
}

// "YYYY-MM-DD HH:MM:SS", read as UTC, to epoch milliseconds; nullopt if malformed.
std::optional<Timestamp> ParseTimestamp(std::string_view t) {
  if (t.size() != 19 || !SeparatorsAt(t)) return std::nullopt;
  const auto year = Digits(t, 0, 4), month = Digits(t, 5, 2), day = Digits(t, 8, 2);
  const auto hour = Digits(t, 11, 2), minute = Digits(t, 14, 2), second = Digits(t, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  const CivilTime civil{*year, *month, *day, *hour, *minute, *second};
  if (!IsValidCivilTime(civil)) return std::nullopt;
  return TimestampFromCivil(civil);
}

// ---------- the job list ----------

struct PhillyColumns {
  std::size_t timestamp = 0;
  std::size_t duration = 0;
  std::size_t num_gpus = 0;
  std::size_t cluster = 0;
};

// gpu_time (= duration x num_gpus) and any other column carry nothing the replay needs.
Result<PhillyColumns> FindPhillyColumns(const CsvReader& csv) {
  PhillyColumns c;
  ALLOT_RETURN_IF_ERROR(csv.RequireAll({{"timestamp", &c.timestamp},
                                        {"duration", &c.duration},
                                        {"num_gpus", &c.num_gpus},
                                        {"cluster", &c.cluster}}));
  return c;
}

std::string SizeClass(std::int64_t gpus) {
  if (gpus <= 1) return "1";
  if (gpus <= 8) return "2-8";
  return ">8";
}

// Every row of the published file has a duration of at least one second, so a row without a
// positive duration is a damaged file, not a job to keep.
Result<TraceJob> ReadPhillyJob(const CsvReader& csv, const PhillyColumns& c,
                               const PhillyOptions& options) {
  const std::optional<Timestamp> submit = ParseTimestamp(csv.Field(c.timestamp));
  if (!submit) {
    return csv.FieldError(c.timestamp,
                          "expected YYYY-MM-DD HH:MM:SS, got \"" + csv.Field(c.timestamp) + "\"");
  }
  Result<Duration> duration = csv.Millis(c.duration);
  if (!duration.ok()) return duration.status();
  if (*duration < 1) {
    return csv.FieldError(c.duration, "must be positive, got \"" + csv.Field(c.duration) + "\"");
  }
  Result<std::int64_t> gpus = csv.Int(c.num_gpus);
  if (!gpus.ok()) return gpus.status();
  if (*gpus < 1) {
    return csv.FieldError(c.num_gpus, "must be at least 1, got \"" + csv.Field(c.num_gpus) + "\"");
  }
  if (csv.Field(c.cluster).empty()) return csv.FieldError(c.cluster, "must not be empty");
  TraceJob job;
  job.submit = *submit;
  job.duration = *duration;
  job.queue = options.queue;
  job.share = csv.Field(c.cluster);
  job.unit = options.unit;
  job.count = *gpus;
  job.priority = *gpus > options.large_gpus ? options.large_priority : 0;
  job.name = "philly-" + std::to_string(csv.record_number());
  job.group = SizeClass(*gpus);
  return job;
}

// ---------- the VC sizes ----------

// VC name -> nodes, from "vc,node num".
Result<std::map<std::string, std::int64_t>> ReadVcNodes(std::istream& in,
                                                        const std::string& origin) {
  CsvReader csv(in, origin);
  ALLOT_RETURN_IF_ERROR(csv.ReadHeader());
  Result<std::size_t> vc = csv.Require("vc");
  if (!vc.ok()) return vc.status();
  Result<std::size_t> nodes = csv.Require("node num");
  if (!nodes.ok()) return nodes.status();
  std::map<std::string, std::int64_t> out;
  while (true) {
    Result<bool> more = csv.Next();
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (csv.Field(*vc).empty()) return csv.FieldError(*vc, "must not be empty");
    Result<std::int64_t> n = csv.Int(*nodes);
    if (!n.ok()) return n.status();
    if (*n < 0) return csv.FieldError(*nodes, "must be >= 0, got \"" + csv.Field(*nodes) + "\"");
    if (!out.emplace(csv.Field(*vc), *n).second) {
      return csv.FieldError(*vc, "VC " + csv.Field(*vc) + " is listed twice");
    }
  }
  return out;
}

// AWS's smallest maxCapacity: a VC without nodes of its own gets it and lives on borrowing.
constexpr std::int64_t kMinLimit = 1;

model::QuotaShareConfig VcShare(const std::string& vc, std::int64_t limit,
                                const PhillyOptions& options) {
  model::QuotaShareConfig share;
  share.queue = options.queue;
  share.name = vc;
  share.capacity_limits.push_back({options.unit, limit});
  share.strategy = model::SharingStrategy::kLendAndBorrow;
  share.borrow_limit = model::kUnlimitedBorrow;
  share.in_share_preemption = true;
  return share;
}

}  // namespace

Result<Trace> ReadPhillyCsv(std::istream& in, const std::string& origin,
                            const PhillyOptions& options) {
  CsvReader csv(in, origin);
  ALLOT_RETURN_IF_ERROR(csv.ReadHeader());
  Result<PhillyColumns> columns = FindPhillyColumns(csv);
  if (!columns.ok()) return columns.status();
  // The file is not in submission order: ReadTraceRecords sorts it.
  return ReadTraceRecords(csv,
                          [&](const CsvReader& r) { return ReadPhillyJob(r, *columns, options); });
}

Result<Cluster> PhillyCluster(std::istream& vc_csv, const std::string& origin, const Trace& trace,
                              const PhillyOptions& options, std::int64_t gpus_per_node) {
  if (gpus_per_node < 1) {
    return InvalidArgument("gpus per node must be at least 1, got " +
                           std::to_string(gpus_per_node));
  }
  Result<std::map<std::string, std::int64_t>> nodes = ReadVcNodes(vc_csv, origin);
  if (!nodes.ok()) return nodes.status();
  std::set<std::string> vcs;  // sorted: the share order does not depend on the trace's
  for (const TraceJob& job : trace.jobs) vcs.insert(job.share);

  Cluster cluster;
  std::int64_t total = 0;
  for (const std::string& vc : vcs) {
    auto it = nodes->find(vc);
    const std::int64_t vc_nodes = it == nodes->end() ? 0 : it->second;
    // Leaves room to add up a thousand such VCs without overflow.
    if (vc_nodes > std::numeric_limits<std::int64_t>::max() / gpus_per_node / 1024) {
      return InvalidArgument(origin + ": VC " + vc + " has too many nodes");
    }
    const std::int64_t limit = std::max(kMinLimit, vc_nodes * gpus_per_node);
    total += limit;
    cluster.shares.push_back(VcShare(vc, limit, options));
  }
  const std::string environment = options.queue + "-env";
  cluster.environments.push_back({environment, {{options.unit, total}}});
  model::JobQueueConfig queue;
  queue.name = options.queue;
  queue.service_environment = environment;
  cluster.queues.push_back(queue);
  return cluster;
}

}  // namespace allot::sim
