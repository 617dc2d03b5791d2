#pragma once

// The answers of GET /allot/v1/report, /allot/v1/history/usage and /allot/v1/history/jobs,
// typed. encode_history.cc writes them as docs/observability.md documents them. The report and
// the export are computed straight into these (server/report.h names them for the computation),
// so every figure is defined once, there.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/time.h"

namespace allot::api {

// --- GET /allot/v1/report ---

// One share's figures over the window (docs/observability.md defines each).
struct ShareReport {
  std::string queue;
  std::string share;
  std::map<std::string, double> used_by_unit;  // instance-hours
  double used_instance_hours = 0;
  double borrowed_instance_hours = 0;
  double lent_instance_hours = 0;
  double lost_instance_hours = 0;     // preempted work since the last checkpoint
  double restart_instance_hours = 0;  // resumed attempts: dispatch to RUNNING
  std::int64_t submitted = 0;
  std::int64_t succeeded = 0;
  std::int64_t failed = 0;
  std::int64_t waits = 0;       // first starts in the window
  double wait_p50_seconds = 0;  // submission to first dispatch, nearest rank
  double wait_p99_seconds = 0;
  std::map<std::string, std::int64_t> preemptions;  // by rule
  std::optional<double> cost;                       // with prices: used x price of its unit
};

// Instance-hours a borrower held of lenders' idle capacity, shared among the lenders in
// proportion to what each lent at the time.
struct LendingFlow {
  std::string queue;
  std::string unit;
  std::string borrower;
  std::string lender;
  double instance_hours = 0;
  std::optional<double> cost;  // with prices, where the unit has one
};

struct UsageReportResponse {
  Timestamp since = 0;
  Timestamp until = 0;
  std::vector<ShareReport> shares;          // by queue, then share
  std::vector<LendingFlow> lending;         // by queue, unit, borrower, lender
  std::vector<std::string> unpriced_units;  // used, but not in the price table
};

// --- GET /allot/v1/history/usage ---

// One sample of a share's unit, in instances (means over the step once coarse).
struct UsageSeriesPoint {
  Timestamp at = 0;
  double used = 0;
  double borrowed = 0;
  double lent = 0;
  double waiting = 0;
};

struct UsageSeries {
  std::string share;
  std::string unit;
  double limit = 0;  // the latest point's
  std::vector<UsageSeriesPoint> points;
};

struct UsageHistoryResponse {
  std::string queue;
  Duration step = 0;                // between points: the resolution read (whole seconds)
  std::vector<UsageSeries> series;  // by share, then unit
};

// --- GET /allot/v1/history/jobs ---

// One job of the trace export (sim/trace.h's Allot CSV).
struct ExportedJob {
  std::string id;
  std::string name;
  std::string queue;
  std::string share;
  std::string unit;  // the first unit of its demand
  std::int64_t count = 1;
  std::int32_t priority = 0;  // at submission
  Timestamp submitted = 0;
  Duration duration = 0;         // work: attempts' time less the work preemptions lost
  std::optional<Duration> stop;  // longest preemption stop: chosen to attempt end
  std::vector<std::pair<Duration, std::int32_t>> priority_changes;  // since submission
};

struct JobHistoryResponse {
  std::vector<ExportedJob> jobs;  // submitted in the window and ended, by submission
  std::int64_t unfinished = 0;    // submitted in the window, not ended yet
  std::int64_t never_ran = 0;     // ended without an attempt (cancelled while waiting)
};

}  // namespace allot::api
