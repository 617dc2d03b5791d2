#pragma once

// The usage report and the trace export, computed from the stored history (history_codec.h):
// pure functions of the events and samples they are given (docs/observability.md, History and
// reports, defines every figure). The controller reads the store and filters by what the caller
// may describe; api/encode_history.cc writes the answers.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/history_responses.h"
#include "common/time.h"
#include "server/history_codec.h"

namespace allot::server {

// An attempt that still holds capacity now (its end is not in the events yet).
struct OpenAttempt {
  std::string queue;
  std::string share;
  std::vector<std::pair<std::string, std::int64_t>> demand;
  Timestamp dispatched_at = 0;
};

// The figures are computed straight into the answers' types (api/history_responses.h): each is
// defined once, and the wire layer writes them as they are.
using api::LendingFlow;
using api::ShareReport;
using UsageReport = api::UsageReportResponse;

struct ReportInput {
  Timestamp since = 0;
  Timestamp until = 0;
  std::vector<JobEvent> events;  // every event from `since` on (later ones are clipped)
  // Each resolution's samples count only within its own part of [since, until) (the finest
  // that covers each part: the fine for the last day, five minutes for the last 30 days).
  std::vector<UsageSample> samples;
  std::map<UsageResolution, std::pair<Timestamp, Timestamp>> sample_windows;
  Duration fine_step = Seconds(10);
  std::vector<OpenAttempt> open;
  std::optional<std::map<std::string, double>> prices;  // unit -> $ per instance-hour
  // The shares the caller may describe ("queue/share"); others appear only as
  // "(other shares)" in lending flows.
  std::function<bool(const std::string& queue, const std::string& share)> visible;
};

inline constexpr char kOtherShares[] = "(other shares)";

UsageReport ComputeReport(const ReportInput& input);

using api::ExportedJob;
using Export = api::JobHistoryResponse;  // the trace export (sim/trace.h's Allot CSV)

// Jobs submitted in [since, until), from `events` (every event from `since` on).
Export ExportJobs(const std::vector<JobEvent>& events, Timestamp since, Timestamp until);

}  // namespace allot::server
