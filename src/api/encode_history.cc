// The report and the histories as documents (api/history_responses.h), as
// docs/observability.md shows them. Which figures are integers and which doubles is part of the
// contract: a client may read "jobs.submitted" as an int, a point's "used" as a float.

#include "api/encode_bodies.h"

namespace allot::api::bodies {

namespace {

using Json = nlohmann::json;

Json Encode(const ShareReport& r) {
  Json preemptions = Json::object();
  for (const auto& [rule, n] : r.preemptions) preemptions[rule] = n;
  Json by_unit = Json::object();
  for (const auto& [unit, hours] : r.used_by_unit) by_unit[unit] = hours;
  Json out = {
      {"queue", r.queue},
      {"share", r.share},
      {"usedInstanceHours", r.used_instance_hours},
      {"usedInstanceHoursByUnit", std::move(by_unit)},
      {"borrowedInstanceHours", r.borrowed_instance_hours},
      {"lentInstanceHours", r.lent_instance_hours},
      {"lostInstanceHours", r.lost_instance_hours},
      {"restartInstanceHours", r.restart_instance_hours},
      {"jobs", {{"submitted", r.submitted}, {"succeeded", r.succeeded}, {"failed", r.failed}}},
      {"waits",
       {{"count", r.waits},
        {"p50Seconds", r.wait_p50_seconds},
        {"p99Seconds", r.wait_p99_seconds}}},
      {"preemptions", std::move(preemptions)}};
  if (r.cost) out["cost"] = *r.cost;
  return out;
}

Json Encode(const LendingFlow& f) {
  Json out = {{"queue", f.queue},
              {"unit", f.unit},
              {"borrower", f.borrower},
              {"lender", f.lender},
              {"instanceHours", f.instance_hours}};
  if (f.cost) out["cost"] = *f.cost;
  return out;
}

Json Encode(const UsageSeries& s) {
  Json points = Json::array();
  for (const UsageSeriesPoint& p : s.points) {
    points.push_back(Json::array({p.at, p.used, p.borrowed, p.lent, p.waiting}));
  }
  return {{"share", s.share}, {"unit", s.unit}, {"limit", s.limit}, {"points", std::move(points)}};
}

Json Encode(const ExportedJob& j) {
  Json changes = Json::array();
  for (const auto& [after, priority] : j.priority_changes) {
    changes.push_back(Json::array({after, priority}));
  }
  Json out = {{"id", j.id},
              {"name", j.name},
              {"queue", j.queue},
              {"share", j.share},
              {"instanceType", j.unit},
              {"instanceCount", j.count},
              {"priority", j.priority},
              {"submittedMs", j.submitted},
              {"durationMs", j.duration},
              {"priorityChanges", std::move(changes)}};
  if (j.stop) out["stopMs"] = *j.stop;
  return out;
}

}  // namespace

Json Body(const UsageReportResponse& r) {
  Json shares = Json::array();
  for (const ShareReport& one : r.shares) shares.push_back(Encode(one));
  Json lending = Json::array();
  for (const LendingFlow& f : r.lending) lending.push_back(Encode(f));
  return {{"since", r.since},
          {"until", r.until},
          {"shares", std::move(shares)},
          {"lending", std::move(lending)},
          {"unpricedUnits", r.unpriced_units}};
}

Json Body(const UsageHistoryResponse& r) {
  Json series = Json::array();
  for (const UsageSeries& s : r.series) series.push_back(Encode(s));
  // Whole seconds, as the steps are (the interval is a whole number of seconds).
  return {{"queue", r.queue}, {"stepSeconds", r.step / 1000}, {"series", std::move(series)}};
}

Json Body(const JobHistoryResponse& r) {
  Json jobs = Json::array();
  for (const ExportedJob& j : r.jobs) jobs.push_back(Encode(j));
  return {{"jobs", std::move(jobs)}, {"unfinished", r.unfinished}, {"neverRan", r.never_ran}};
}

}  // namespace allot::api::bodies
