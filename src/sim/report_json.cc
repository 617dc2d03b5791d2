// The JSON report: every figure of every run, for scripts and notebooks. Keys keep a fixed order
// (ordered_json) and doubles are rounded to 3 decimals, so the same runs always give the same
// bytes and two reports diff cleanly.

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <utility>
#include <vector>

#include "sim/report.h"

namespace allot::sim {
namespace {

using Json = nlohmann::ordered_json;

// Rounded to 3 decimals; a non-finite value (which JSON cannot hold) is null.
Json Number(double value) {
  if (!std::isfinite(value)) return nullptr;
  const double rounded = std::round(value * 1000) / 1000;
  return rounded == 0 ? 0.0 : rounded;  // no "-0.0"
}

Json Series(const std::vector<double>& values) {
  Json list = Json::array();
  for (double v : values) list.push_back(Number(v));
  return list;
}

Json DistributionJson(const Distribution& d) {
  Json j;
  j["count"] = d.count;
  j["mean"] = Number(d.mean);
  j["p50"] = Number(d.p50);
  j["p90"] = Number(d.p90);
  j["p99"] = Number(d.p99);
  j["max"] = Number(d.max);
  return j;
}

Json FiguresJson(const Figures& f) {
  Json j;
  j["jobs"] = f.jobs;
  j["rejected"] = f.rejected;
  j["succeeded"] = f.succeeded;
  j["failed"] = f.failed;
  j["unfinished"] = f.unfinished;
  j["limit"] = f.limit;
  j["used_instance_hours"] = Number(f.used_instance_hours);
  j["utilization"] = Number(f.utilization);
  j["idle_while_waiting_instance_hours"] = Number(f.idle_while_waiting_instance_hours);
  j["wait"] = DistributionJson(f.wait);
  j["completion"] = DistributionJson(f.completion);
  j["slowdown"] = DistributionJson(f.slowdown);
  Json histogram = Json::array();
  for (std::int64_t count : f.wait_histogram) histogram.push_back(count);
  j["wait_histogram"] = std::move(histogram);
  j["preemptions_reclaim"] = f.preemptions_reclaim;
  j["preemptions_in_share"] = f.preemptions_in_share;
  j["lost_instance_hours"] = Number(f.lost_instance_hours);
  j["restart_instance_hours"] = Number(f.restart_instance_hours);
  j["guarantee_shortfall_instance_hours"] = Number(f.guarantee_shortfall_instance_hours);
  j["reclaim_latency"] = DistributionJson(f.reclaim_latency);
  j["borrowed_instance_hours"] = Number(f.borrowed_instance_hours);
  j["lent_instance_hours"] = Number(f.lent_instance_hours);
  return j;
}

Json ShareJson(const ShareResult& s) {
  Json j;
  j["queue"] = s.queue;
  j["share"] = s.share;
  j["strategy"] = s.strategy;
  j["figures"] = FiguresJson(s.figures);
  j["usage"] = Series(s.usage);
  return j;
}

Json RunJson(const RunResult& run) {
  Json j;
  j["policy"] = run.policy;
  j["victim_order"] = run.victim_order;
  j["span_seconds"] = Number(run.span_seconds);
  j["bucket_seconds"] = Number(run.bucket_seconds);
  j["overall"] = FiguresJson(run.overall);
  j["jain_index"] = Number(run.jain_index);
  j["engine_events"] = run.engine_events;
  j["decisions"] = run.decisions;
  j["invariant_checks"] = run.invariant_checks;
  Json shares = Json::array();
  for (const ShareResult& s : run.shares) shares.push_back(ShareJson(s));
  j["shares"] = std::move(shares);
  Json groups = Json::array();
  for (const GroupResult& g : run.groups) {
    Json group;
    group["group"] = g.group;
    group["wait"] = DistributionJson(g.wait);
    groups.push_back(std::move(group));
  }
  j["groups"] = std::move(groups);
  j["pool_usage"] = Series(run.pool_usage);
  return j;
}

}  // namespace

void WriteJson(const ReportInput& in, std::ostream& out) {
  Json j;
  j["trace"] = in.trace;
  Json edges = Json::array();
  for (double e : kWaitBinEdges) edges.push_back(Number(e));
  j["wait_histogram_edges_seconds"] = std::move(edges);
  Json runs = Json::array();
  for (const RunResult& run : in.runs) runs.push_back(RunJson(run));
  j["runs"] = std::move(runs);
  // Names come from user files: a byte that is not UTF-8 becomes U+FFFD instead of throwing.
  out << j.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
}

}  // namespace allot::sim
