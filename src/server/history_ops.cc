// GET /allot/v1/report, /allot/v1/history/usage and /allot/v1/history/jobs: the stored history
// read back, each share shown only to a caller whose policy lets it describe that share
// (docs/observability.md, History and reports). Store reads happen outside mu_.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>

#include "common/strings.h"
#include "server/api_error.h"
#include "server/controller.h"
#include "server/report.h"

namespace allot::server {

namespace {

constexpr std::size_t kPage = 10'000;

std::string Param(const std::multimap<std::string, std::string>& params, const char* name) {
  const auto it = params.find(name);
  return it == params.end() ? std::string() : it->second;
}

// A time: milliseconds since the epoch, or an age such as 90s, 30m, 24h, 7d (that long ago).
Result<Timestamp> ParseTime(const std::string& text, const char* field, Timestamp now,
                            Timestamp fallback) {
  if (text.empty()) return fallback;
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc() && value >= 0) {
    if (ptr == end) return value;
    const std::string_view unit(ptr, static_cast<std::size_t>(end - ptr));
    const Duration scale = unit == "s"   ? 1000
                           : unit == "m" ? 60'000
                           : unit == "h" ? 3'600'000
                           : unit == "d" ? 86'400'000
                                         : 0;
    if (scale > 0 && value <= 36500LL * 86'400'000 / scale) return now - value * scale;
  }
  return InvalidArgument(std::string(field) +
                         " must be milliseconds since the epoch or an age such as 30m, 24h or "
                         "7d, got \"" +
                         text + "\"");
}

// "ml.g5.xlarge:1.006,ml.p4d.24xlarge:32.77": $ per instance-hour of each instance type.
Result<std::map<std::string, double>> ParsePrices(const std::string& text) {
  std::map<std::string, double> prices;
  for (std::string_view item : Split(text, ',')) {
    const auto colon = item.rfind(':');
    double price = -1;
    if (colon != std::string_view::npos && colon > 0) {
      const std::string_view number = item.substr(colon + 1);
      auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), price);
      if (ec != std::errc() || ptr != number.data() + number.size()) price = -1;
    }
    if (price < 0 || !std::isfinite(price)) {
      return InvalidArgument(
          "prices must be INSTANCE_TYPE:DOLLARS_PER_HOUR pairs separated by commas, "
          "got \"" +
          std::string(item) + "\"");
    }
    prices[std::string(item.substr(0, colon))] = price;
  }
  return prices;
}

Json ShareJson(const ShareReport& r) {
  Json preemptions = Json::object();
  for (const auto& [rule, n] : r.preemptions) preemptions[rule] = n;
  Json by_unit = Json::object();
  for (const auto& [unit, hours] : r.used_by_unit) by_unit[unit] = hours;
  Json out = {
      {"queue", r.queue},
      {"share", r.share},
      {"usedInstanceHours", r.used_instance_hours},
      {"usedInstanceHoursByUnit", by_unit},
      {"borrowedInstanceHours", r.borrowed_instance_hours},
      {"lentInstanceHours", r.lent_instance_hours},
      {"lostInstanceHours", r.lost_instance_hours},
      {"restartInstanceHours", r.restart_instance_hours},
      {"jobs", {{"submitted", r.submitted}, {"succeeded", r.succeeded}, {"failed", r.failed}}},
      {"waits",
       {{"count", r.waits},
        {"p50Seconds", r.wait_p50_seconds},
        {"p99Seconds", r.wait_p99_seconds}}},
      {"preemptions", preemptions}};
  if (r.cost) out["cost"] = *r.cost;
  return out;
}

Json ReportJson(const UsageReport& report) {
  Json shares = Json::array();
  for (const ShareReport& r : report.shares) shares.push_back(ShareJson(r));
  Json lending = Json::array();
  for (const LendingFlow& f : report.lending) {
    Json flow = {{"queue", f.queue},
                 {"unit", f.unit},
                 {"borrower", f.borrower},
                 {"lender", f.lender},
                 {"instanceHours", f.instance_hours}};
    if (f.cost) flow["cost"] = *f.cost;
    lending.push_back(std::move(flow));
  }
  return {{"since", report.since},
          {"until", report.until},
          {"shares", shares},
          {"lending", lending},
          {"unpricedUnits", report.unpriced_units}};
}

Json ExportJson(const Export& e) {
  Json jobs = Json::array();
  for (const ExportedJob& j : e.jobs) {
    Json changes = Json::array();
    for (const auto& [after, priority] : j.priority_changes) changes.push_back({after, priority});
    Json job = {{"id", j.id},
                {"name", j.name},
                {"queue", j.queue},
                {"share", j.share},
                {"instanceType", j.unit},
                {"instanceCount", j.count},
                {"priority", j.priority},
                {"submittedMs", j.submitted},
                {"durationMs", j.duration},
                {"priorityChanges", changes}};
    if (j.stop) job["stopMs"] = *j.stop;
    jobs.push_back(std::move(job));
  }
  return {{"jobs", jobs}, {"unfinished", e.unfinished}, {"neverRan", e.never_ran}};
}

// Every record of `kind` in [from, to), a page at a time.
Result<std::vector<store::Record>> ReadAll(store::Store& store, store::Kind kind, std::string from,
                                           const std::string& to) {
  std::vector<store::Record> out;
  for (;;) {
    Result<std::vector<store::Record>> page =
        store.Range(kind, {.from = from, .to = to, .limit = kPage});
    if (!page.ok()) return page.status();
    const bool last = page->size() < kPage;
    if (!page->empty()) from = page->back().key + " ";  // just past it: keys have one length
    for (store::Record& r : page.value()) out.push_back(std::move(r));
    if (last) return out;
  }
}

Result<std::vector<JobEvent>> ReadEvents(store::Store& store, Timestamp since) {
  Result<std::vector<store::Record>> records =
      ReadAll(store, store::Kind::kJobEvent, JobEventBound(since), "");
  if (!records.ok()) return records.status();
  std::vector<JobEvent> events;
  events.reserve(records->size());
  for (const store::Record& r : *records) {
    Result<JobEvent> e = DecodeJobEvent(r.key, r.value);
    if (!e.ok()) return e.status();
    events.push_back(std::move(e).value());
  }
  return events;
}

Result<std::vector<UsageSample>> ReadSamples(store::Store& store, UsageResolution resolution,
                                             Timestamp from, Timestamp to) {
  if (from >= to) return std::vector<UsageSample>{};
  // A coarse point that starts before `from` still covers part of it.
  const Duration step = resolution == UsageResolution::kHour ? kHour : kFiveMinutes;
  Result<std::vector<store::Record>> records =
      ReadAll(store, store::Kind::kUsageSample, UsageSampleBound(resolution, from - step + 1),
              UsageSampleBound(resolution, to));
  if (!records.ok()) return records.status();
  std::vector<UsageSample> samples;
  for (const store::Record& r : *records) {
    Result<UsageSample> s = DecodeUsageSample(r.key, r.value);
    if (!s.ok()) return s.status();
    samples.push_back(std::move(s).value());
  }
  return samples;
}

struct Window {
  Timestamp now = 0;
  Timestamp since = 0;
  Timestamp until = 0;
};

using Visible = std::function<bool(const std::string& queue, const std::string& share)>;

// GET /allot/v1/history/usage: the finest resolution still kept for all of the range, and at
// most a few thousand points: a day at the sampling interval, 30 days at five minutes, beyond by
// the hour.
Result<Json> UsageJson(store::Store& store, const std::string& queue, const Window& w,
                       Duration interval, const Visible& visible) {
  UsageResolution resolution = UsageResolution::kHour;
  Duration step = kHour;
  if (w.since >= w.now - kFineKept && w.until - w.since <= kFineKept) {
    resolution = UsageResolution::kFine;
    step = interval;
  } else if (w.since >= w.now - kFiveMinutesKept && w.until - w.since <= kFiveMinutesKept) {
    resolution = UsageResolution::kFiveMinutes;
    step = kFiveMinutes;
  }
  Result<std::vector<UsageSample>> samples = ReadSamples(store, resolution, w.since, w.until);
  if (!samples.ok()) return samples.status();
  std::map<std::pair<std::string, std::string>, Json> series;  // by share, unit
  for (const UsageSample& s : *samples) {
    if (s.queue != queue) continue;
    for (const UsagePoint& p : s.points) {
      if (!visible(queue, p.share)) continue;
      Json& one = series[{p.share, p.unit}];
      if (one.is_null()) one = {{"share", p.share}, {"unit", p.unit}, {"points", Json::array()}};
      one["limit"] = p.limit;  // the latest
      one["points"].push_back({s.at, p.used, p.borrowed, p.lent, p.waiting});
    }
  }
  Json list = Json::array();
  for (auto& [key, one] : series) list.push_back(std::move(one));
  return Json{{"queue", queue}, {"stepSeconds", step / 1000}, {"series", std::move(list)}};
}

// The report's samples: each part of the window from the finest resolution that covers it.
Status AddSamples(store::Store& store, const Window& w, ReportInput* input) {
  const Timestamp fine_from = std::max(w.since, w.now - kFineKept);
  const Timestamp five_from = std::max(w.since, w.now - kFiveMinutesKept);
  input->sample_windows = {{UsageResolution::kFine, {fine_from, w.until}},
                           {UsageResolution::kFiveMinutes, {five_from, fine_from}},
                           {UsageResolution::kHour, {w.since, five_from}}};
  for (const auto& [resolution, part] : input->sample_windows) {
    Result<std::vector<UsageSample>> s =
        ReadSamples(store, resolution, part.first, std::min(part.second, w.until));
    if (!s.ok()) return s.status();
    for (UsageSample& one : s.value()) input->samples.push_back(std::move(one));
  }
  return Status::Ok();
}

}  // namespace

Result<Controller::ActionReply> Controller::HistoryCall(
    const Caller& caller, const std::string& path,
    const std::multimap<std::string, std::string>& params) {
  // The shares the caller may describe: a quota share by DescribeQuotaShare on its ARN, the
  // internal share of a plain queue by GetJobQueueSnapshot on the queue.
  const Visible visible = [this, &caller](const std::string& queue, const std::string& share) {
    const std::string queue_arn = arns_.Queue(queue);
    if (share.empty() || share == kImplicitShare) {
      return Decide(caller, "batch:GetJobQueueSnapshot", queue_arn, nullptr, std::nullopt) ==
             auth::Decision::kAllow;
    }
    return Decide(caller, "batch:DescribeQuotaShare", queue_arn + "/quota-share/" + share, nullptr,
                  std::nullopt) == auth::Decision::kAllow;
  };
  Window w;
  w.now = Now();
  ALLOT_ASSIGN_OR_RETURN(
      w.since, ParseTime(Param(params, "since"), "since", w.now, w.now - Seconds(7LL * 86400)));
  // A history ends now: a later `until` reads as now, so that attempts still running are not
  // counted into the future (and their instance-hours stay bounded).
  ALLOT_ASSIGN_OR_RETURN(const Timestamp until,
                         ParseTime(Param(params, "until"), "until", w.now, w.now));
  w.until = std::min(until, w.now);
  if (w.since >= w.now) return InvalidArgument("since must be in the past");
  if (w.since >= w.until) return InvalidArgument("since must be before until");
  ActionReply reply;
  if (path == "/allot/v1/history/usage") {
    const std::string queue = Param(params, "queue");
    if (queue.empty()) return InvalidArgument("queue is required: the job queue's name");
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (queues_.count(queue) == 0) {
        return InvalidArgument("queue " + queue + " is not a job queue of this server");
      }
    }
    Result<Json> usage = UsageJson(*store_, queue, w, options_.history_interval, visible);
    if (!usage.ok()) return usage.status();
    reply.body = api::UsageHistoryResponse{std::move(usage).value()};
    return reply;
  }
  Result<std::vector<JobEvent>> events = ReadEvents(*store_, w.since);
  if (!events.ok()) return events.status();
  if (path == "/allot/v1/history/jobs") {
    // Job by job, as DescribeServiceJob decides: seeing a share's figures is not seeing its
    // jobs' ids and names (a policy may allow DescribeQuotaShare on every share).
    std::map<std::string, bool> describable;  // by job id
    auto hidden = [&](const JobEvent& e) {
      if (!visible(e.queue, e.share)) return true;
      auto [it, fresh] = describable.try_emplace(e.job, false);
      if (fresh) it->second = MayDescribeJob(caller, e.job, e.share);
      return !it->second;
    };
    std::erase_if(events.value(), hidden);
    reply.body = api::JobHistoryResponse{ExportJson(ExportJobs(*events, w.since, w.until))};
    return reply;
  }
  ReportInput input{.since = w.since,
                    .until = w.until,
                    .events = std::move(events).value(),
                    .fine_step = options_.history_interval,
                    .visible = visible};
  if (const std::string prices = Param(params, "prices"); !prices.empty()) {
    ALLOT_ASSIGN_OR_RETURN(input.prices, ParsePrices(prices));
  }
  if (Status s = AddSamples(*store_, w, &input); !s.ok()) return s;
  if (w.until >= w.now) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [seq, job] : jobs_) {
      if (!model::IsDispatched(job.status) || job.attempts().empty()) continue;
      OpenAttempt a{
          std::string(job.queue), std::string(job.share), {}, job.attempts().back().started_at};
      for (const model::UnitCount& u : job.demand) a.demand.emplace_back(u.unit, u.count);
      input.open.push_back(std::move(a));
    }
  }
  reply.body = api::UsageReportResponse{ReportJson(ComputeReport(input))};
  return reply;
}

}  // namespace allot::server
