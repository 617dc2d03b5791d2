#include <charconv>
#include <cmath>
#include <string_view>

#include "api/history_requests.h"
#include "common/strings.h"

namespace allot::api {

namespace {

// Milliseconds since the epoch, or an age such as 90s, 30m, 24h, 7d (that long ago); `fallback`
// for an absent or empty value.
Result<TimeBound> DecodeTime(const QueryParams& params, const char* field, TimeBound fallback) {
  ALLOT_ASSIGN_OR_RETURN(const std::string text, QueryParam(params, field));
  if (text.empty()) return fallback;
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc() && value >= 0) {
    if (ptr == end) return TimeBound::At(value);
    const std::string_view unit(ptr, static_cast<std::size_t>(end - ptr));
    const Duration scale = unit == "s"   ? Seconds(1)
                           : unit == "m" ? Seconds(60)
                           : unit == "h" ? Seconds(3600)
                           : unit == "d" ? Seconds(86400)
                                         : 0;
    if (scale > 0 && value <= kMaxHistoryAge / scale) return TimeBound::Ago(value * scale);
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

Result<HistoryRequest::Endpoint> EndpointOf(const std::string& path) {
  using Endpoint = HistoryRequest::Endpoint;
  if (path == "/allot/v1/report") return Endpoint::kReport;
  if (path == "/allot/v1/history/usage") return Endpoint::kUsage;
  if (path == "/allot/v1/history/jobs") return Endpoint::kJobs;
  return NotFound("no such history endpoint: " + path);
}

}  // namespace

// GET /allot/v1/report?since=&until=&prices=, /allot/v1/history/usage?queue=&since=&until=,
// /allot/v1/history/jobs?since=&until=
Result<HistoryRequest> DecodeHistory(const std::string& path, const QueryParams& params) {
  HistoryRequest r;
  ALLOT_ASSIGN_OR_RETURN(r.endpoint, EndpointOf(path));
  switch (r.endpoint) {
    case HistoryRequest::Endpoint::kReport:
      ALLOT_RETURN_IF_ERROR(OnlyParams(params, {"since", "until", "prices"}));
      break;
    case HistoryRequest::Endpoint::kUsage:
      ALLOT_RETURN_IF_ERROR(OnlyParams(params, {"queue", "since", "until"}));
      break;
    case HistoryRequest::Endpoint::kJobs:
      ALLOT_RETURN_IF_ERROR(OnlyParams(params, {"since", "until"}));
      break;
  }
  ALLOT_ASSIGN_OR_RETURN(r.since, DecodeTime(params, "since", r.since));
  ALLOT_ASSIGN_OR_RETURN(r.until, DecodeTime(params, "until", r.until));
  if (r.endpoint == HistoryRequest::Endpoint::kUsage) {
    ALLOT_ASSIGN_OR_RETURN(r.queue, QueryParam(params, "queue"));
    if (r.queue.empty()) return InvalidArgument("queue is required: the job queue's name");
  }
  if (r.endpoint == HistoryRequest::Endpoint::kReport) {
    ALLOT_ASSIGN_OR_RETURN(const std::string prices, QueryParam(params, "prices"));
    if (!prices.empty()) {
      ALLOT_ASSIGN_OR_RETURN(r.prices, ParsePrices(prices));
    }
  }
  return r;
}

}  // namespace allot::api
