#pragma once

// GET /allot/v1/report, /allot/v1/history/usage and /allot/v1/history/jobs as one typed request,
// decoded from the path and the query (decode_history.cc) with refusals that name the parameter
// (docs/observability.md, History and reports). A time may be an age ("7d": that long ago),
// which only the server can turn into an instant: the wire layer reads no clock, so the request
// keeps the age and the controller resolves it against its own now.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "api/query.h"
#include "common/status.h"
#include "common/time.h"

namespace allot::api {

// A window's end as the caller sent it: an instant, or an age to be taken from now.
struct TimeBound {
  enum class Kind { kAt, kAgo };
  Kind kind = Kind::kAgo;
  std::int64_t ms = 0;  // kAt: milliseconds since the epoch; kAgo: how long before now

  static TimeBound At(Timestamp t) { return {Kind::kAt, t}; }
  static TimeBound Ago(Duration d) { return {Kind::kAgo, d}; }
  Timestamp Resolve(Timestamp now) const { return kind == Kind::kAt ? ms : now - ms; }
  bool operator==(const TimeBound&) const = default;
};

// The largest age accepted: about a century, so that no age overflows when scaled to ms.
inline constexpr Duration kMaxHistoryAge = Seconds(36500LL * 86400);

struct HistoryRequest {
  enum class Endpoint {
    kReport,  // GET /allot/v1/report: the usage report
    kUsage,   // GET /allot/v1/history/usage: one queue's usage series
    kJobs     // GET /allot/v1/history/jobs: the trace export
  };
  Endpoint endpoint = Endpoint::kReport;
  TimeBound since = TimeBound::Ago(Seconds(7LL * 86400));  // absent: 7 days ago
  TimeBound until = TimeBound::Ago(0);                     // absent: now
  std::string queue;  // kUsage only, where it is required: the job queue's name
  // kReport only: instance type -> $ per instance-hour; none when `prices` is absent or empty.
  std::optional<std::map<std::string, double>> prices;
};

// `path` is the percent-decoded path (one of the three above; kNotFound for any other),
// `params` the query's parameters. Each value read must be UTF-8; a parameter the endpoint does
// not take is ignored, as it always was.
Result<HistoryRequest> DecodeHistory(const std::string& path, const QueryParams& params);

}  // namespace allot::api
