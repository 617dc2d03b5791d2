#pragma once

// Allot's Prometheus metrics (docs/observability.md lists them): the counters and histograms the
// server updates as it works, and the gauges computed at scrape time from the engine's usage and
// the process. Names follow Prometheus's conventions: the allot_ prefix, base units (seconds),
// _total for counters. Counters count since the process started.
//
// Thread-safety: as metrics.h; every member may be used from any thread.

#include <array>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "engine/engine.h"
#include "model/decision.h"
#include "model/event.h"
#include "server/metrics.h"

namespace allot::server {

class ServerMetrics {
 public:
  ServerMetrics();

 private:
  metrics::Registry registry_;  // first: the references below point into it

 public:
  // {queue, share}
  metrics::CounterFamily& submissions;
  // {queue, share, mode}: within_quota, borrowed, preemptor
  metrics::CounterFamily& dispatches;
  // {queue, share, outcome}: succeeded, failed, preempted, terminated
  metrics::CounterFamily& attempts_ended;
  // {queue, rule, preemptor_share, victim_share}: one per victim chosen
  metrics::CounterFamily& preemptions;
  // {queue, share, rule}: instance-seconds since the last checkpoint of preempted attempts
  metrics::CounterFamily& lost_work;
  // {queue, share}: instance-seconds from the dispatch of an attempt that follows a preempted
  // one until it runs
  metrics::CounterFamily& restart;
  // {}: /metrics requests refused for a missing or wrong token
  metrics::CounterFamily& scrapes_refused;
  // {queue, share}: seconds from submission to the first attempt running
  metrics::HistogramFamily& first_start;
  // {action}: seconds from a request read to its answer ready (its commit included)
  metrics::HistogramFamily& api_latency;

  // The store's writer: seconds per committed transaction and batches in it.
  void ObserveCommit(double seconds, std::size_t batches);
  // The engine's Apply of one event, in seconds.
  void ObserveDecision(const model::Event& event, double seconds);
  // One submission's series, the first use making it (the hot path keeps no other lock).
  void CountSubmission(const std::string& queue, const std::string& share);

  // Seconds since the epoch when this object (the server) started.
  double start_time_seconds() const { return start_time_seconds_; }

  // The whole exposition: the registered families and `scraped` (gauges computed now).
  std::string Render(std::vector<metrics::Family> scraped) const;

 private:
  metrics::Histogram* commit_seconds_;
  metrics::Histogram* commit_batches_;
  // Per event kind (the variant's index): found without a lock.
  std::array<metrics::Histogram*, std::variant_size_v<model::Event>> decision_seconds_{};
  double start_time_seconds_ = 0;
};

// The label of a dispatch mode and of a preemption rule, as the metrics spell them.
std::string MetricLabel(model::DispatchMode mode);
std::string MetricLabel(model::PreemptionRule rule);

// Per queue, share and unit, and per queue and unit (the pool): the engine's usage as gauges.
std::vector<metrics::Family> UsageFamilies(const std::vector<engine::QueueUsage>& queues);

// What the process says of itself at a scrape.
struct ProcessFigures {
  std::string version;
  double start_time_seconds = 0;
  double now_seconds = 0;
  std::size_t stored_jobs = 0;
  std::string executor;     // "local", "slurm"
  bool executor_up = true;  // the executor answers (the Slurm one: its last squeue succeeded)
  std::optional<Timestamp> last_poll;  // the Slurm executor's last successful squeue (epoch ms)
  bool rolling_back = false;           // the store failed a write, and the controller rolls back
  bool reserve_released = false;       // the store's reserve is out (docs/server.md, Durability)
  // Per "queue/share", what its finished jobs' trees take in the data directory (job_files.cc).
  std::vector<std::pair<std::string, std::int64_t>> finished_files;
};
std::vector<metrics::Family> ProcessFamilies(const ProcessFigures& p);

// The scrape token: read from `path`, or made (32 random bytes, hex, mode 0600) where the file
// does not exist. Refused: a file others may read, or a token shorter than 16 characters.
Result<std::string> LoadOrCreateMetricsToken(const std::string& path);

// Whether an Authorization header value carries `token` as "Bearer <token>" (compared in
// constant time).
bool BearerMatches(std::string_view authorization, const std::string& token);

}  // namespace allot::server
