#pragma once

// The usage report and the trace export, computed from the stored history (history_codec.h):
// pure functions of the events and samples they are given (docs/observability.md, History and
// reports, defines every figure). The controller reads the store and filters by what the caller
// may describe; the wire form is in report_wire.cc.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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
  std::optional<double> cost;
};

struct UsageReport {
  Timestamp since = 0;
  Timestamp until = 0;
  std::vector<ShareReport> shares;          // by queue, then share
  std::vector<LendingFlow> lending;         // by queue, unit, borrower, lender
  std::vector<std::string> unpriced_units;  // used, but not in the price table
};

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

struct Export {
  std::vector<ExportedJob> jobs;  // submitted in the window and ended, by submission
  std::int64_t unfinished = 0;    // submitted in the window, not ended yet
  std::int64_t never_ran = 0;     // ended without an attempt (cancelled while waiting)
};

// Jobs submitted in [since, until), from `events` (every event from `since` on).
Export ExportJobs(const std::vector<JobEvent>& events, Timestamp since, Timestamp until);

}  // namespace allot::server
