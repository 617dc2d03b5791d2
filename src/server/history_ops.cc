// GET /allot/v1/report, /allot/v1/history/usage and /allot/v1/history/jobs: the stored history
// read back, each share shown only to a caller whose policy lets it describe that share
// (docs/observability.md, History and reports). Store reads happen outside mu_. The request
// comes decoded (api/history_requests.h) and the answers leave typed (api/history_responses.h):
// what is left here is what needs the server's clock, state and store.

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "api/history_requests.h"
#include "server/controller.h"
#include "server/report.h"

namespace allot::server {

namespace {

constexpr std::size_t kPage = 10'000;

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
Result<api::UsageHistoryResponse> UsageHistory(store::Store& store, const std::string& queue,
                                               const Window& w, Duration interval,
                                               const Visible& visible) {
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
  std::map<std::pair<std::string, std::string>, api::UsageSeries> series;  // by share, unit
  for (const UsageSample& s : *samples) {
    if (s.queue != queue) continue;
    for (const UsagePoint& p : s.points) {
      if (!visible(queue, p.share)) continue;
      api::UsageSeries& one = series[{p.share, p.unit}];
      one.share = p.share;
      one.unit = p.unit;
      one.limit = p.limit;  // the latest
      one.points.push_back({s.at, p.used, p.borrowed, p.lent, p.waiting});
    }
  }
  api::UsageHistoryResponse out{.queue = queue, .step = step};
  for (auto& [key, one] : series) out.series.push_back(std::move(one));
  return out;
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

Result<Controller::Reply> Controller::HistoryCall(const Caller& caller,
                                                  const api::HistoryRequest& request) {
  // The shares the caller may describe: a quota share by DescribeQuotaShare on its ARN, the
  // internal share of a plain queue by GetJobQueueSnapshot on the queue. A plain queue's jobs
  // name no share and its samples name the internal one; "_fifo" is also a valid quota share
  // name, so it means the internal share only in a queue that is plain now (a deleted queue's is
  // judged as a quota share's, the stricter).
  std::set<std::string> plain;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, queue] : queues_) {
      if (!IsQuotaManaged(queue)) plain.insert(name);
    }
  }
  const Visible visible = [this, &caller, &plain](const std::string& queue,
                                                  const std::string& share) {
    const std::string queue_arn = arns_.Queue(queue);
    if (share.empty() || (share == kImplicitShare && plain.count(queue) != 0)) {
      return Decide(caller, "batch:GetJobQueueSnapshot", queue_arn, nullptr, std::nullopt) ==
             auth::Decision::kAllow;
    }
    return Decide(caller, "batch:DescribeQuotaShare", queue_arn + "/quota-share/" + share, nullptr,
                  std::nullopt) == auth::Decision::kAllow;
  };
  Window w;
  w.now = Now();
  w.since = request.since.Resolve(w.now);
  // A history ends now: a later `until` reads as now, so that attempts still running are not
  // counted into the future (and their instance-hours stay bounded).
  w.until = std::min(request.until.Resolve(w.now), w.now);
  if (w.since >= w.now) return InvalidArgument("since must be in the past");
  if (w.since >= w.until) return InvalidArgument("since must be before until");
  Reply reply;
  if (request.endpoint == api::HistoryRequest::Endpoint::kUsage) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (queues_.count(request.queue) == 0) {
        return InvalidArgument("queue " + request.queue + " is not a job queue of this server");
      }
    }
    ALLOT_ASSIGN_OR_RETURN(
        reply.body, UsageHistory(*store_, request.queue, w, options_.history_interval, visible));
    return reply;
  }
  Result<std::vector<JobEvent>> events = ReadEvents(*store_, w.since);
  if (!events.ok()) return events.status();
  if (request.endpoint == api::HistoryRequest::Endpoint::kJobs) {
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
    reply.body = ExportJobs(*events, w.since, w.until);
    return reply;
  }
  ReportInput input{.since = w.since,
                    .until = w.until,
                    .events = std::move(events).value(),
                    .fine_step = options_.history_interval,
                    .prices = request.prices,
                    .visible = visible};
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
  reply.body = ComputeReport(input);
  return reply;
}

}  // namespace allot::server
