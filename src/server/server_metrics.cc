#include "server/server_metrics.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <chrono>

#include "env/files.h"
#include "model/config.h"

namespace allot::server {

namespace {

using metrics::Family;
using metrics::Type;

// The event kinds, in the order of model::Event's alternatives.
constexpr std::array<const char*, 16> kEventNames = {"put_service_environment",
                                                     "delete_service_environment",
                                                     "put_job_queue",
                                                     "delete_job_queue",
                                                     "put_quota_share",
                                                     "delete_quota_share",
                                                     "submit_job",
                                                     "restore_job",
                                                     "update_job_priority",
                                                     "terminate_job",
                                                     "attempt_starting",
                                                     "attempt_running",
                                                     "checkpoint_observed",
                                                     "attempt_ended",
                                                     "tick",
                                                     "hold_dispatches"};
static_assert(kEventNames.size() == std::variant_size_v<model::Event>,
              "one name per model::Event alternative");

// Latencies from 100 us to about 52 s (x2 a bucket); decision times from 1 us to about 1 s.
const std::vector<double> kLatencyBounds = metrics::ExponentialBounds(0.0001, 2, 20);
const std::vector<double> kDecisionBounds = metrics::ExponentialBounds(0.000001, 2, 21);
// Waits for a first start: 1 s to 1 week.
const std::vector<double> kWaitBounds = {1,    5,    15,   30,    60,    120,   300,    600,
                                         1800, 3600, 7200, 14400, 28800, 86400, 172800, 604800};
const std::vector<double> kBatchBounds = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Family Gauge(std::string name, std::string help, std::vector<std::string> labels) {
  return Family{.name = std::move(name),
                .help = std::move(help),
                .type = Type::kGauge,
                .label_names = std::move(labels)};
}

}  // namespace

ServerMetrics::ServerMetrics()
    : submissions(registry_.AddCounter("allot_submissions_total",
                                       "Jobs accepted by SubmitServiceJob.", {"queue", "share"})),
      dispatches(registry_.AddCounter(
          "allot_dispatches_total",
          "Attempts dispatched, by mode: within_quota, borrowed or preemptor (a nominated "
          "preemptor whose victims stopped).",
          {"queue", "share", "mode"})),
      attempts_ended(registry_.AddCounter(
          "allot_attempts_ended_total",
          "Attempts ended, by outcome: succeeded, failed, preempted or terminated.",
          {"queue", "share", "outcome"})),
      preemptions(registry_.AddCounter(
          "allot_preemptions_total",
          "Victims chosen, by rule (reclaim, in_share, limit_lowered), preemptor share and "
          "victim share.",
          {"queue", "rule", "preemptor_share", "victim_share"})),
      lost_work(registry_.AddCounter(
          "allot_preemption_lost_work_instance_seconds_total",
          "Instance-seconds of work lost by preempted attempts (since their last checkpoint or "
          "start), by the victim's share and the rule.",
          {"queue", "share", "rule"})),
      restart(registry_.AddCounter(
          "allot_restart_instance_seconds_total",
          "Instance-seconds from the dispatch of an attempt that follows a preempted one until "
          "it runs.",
          {"queue", "share"})),
      scrapes_refused(registry_.AddCounter(
          "allot_metrics_scrapes_refused_total",
          "Requests for /metrics refused for a missing or wrong bearer token.", {})),
      first_start(
          registry_.AddHistogram("allot_job_first_start_wait_seconds",
                                 "Seconds from a job's submission to its first attempt running.",
                                 {"queue", "share"}, kWaitBounds)),
      api_latency(registry_.AddHistogram(
          "allot_api_request_duration_seconds",
          "Seconds from a request read to its answer ready, its store commit included.", {"action"},
          kLatencyBounds)),
      commit_seconds_(&registry_
                           .AddHistogram("allot_store_commit_duration_seconds",
                                         "Seconds per store transaction (BEGIN to durable "
                                         "COMMIT).",
                                         {}, kLatencyBounds)
                           .With({})),
      commit_batches_(&registry_
                           .AddHistogram("allot_store_commit_batches",
                                         "Batches (one per API call or report) grouped into one "
                                         "store transaction.",
                                         {}, kBatchBounds)
                           .With({})),
      start_time_seconds_(NowSeconds()) {
  metrics::HistogramFamily& decisions = registry_.AddHistogram(
      "allot_engine_event_duration_seconds", "Seconds the engine took to decide on one event.",
      {"event"}, kDecisionBounds);
  for (std::size_t i = 0; i < kEventNames.size(); ++i) {
    decision_seconds_[i] = &decisions.With({kEventNames[i]});
  }
}

void ServerMetrics::ObserveCommit(double seconds, std::size_t batches) {
  commit_seconds_->Observe(seconds);
  commit_batches_->Observe(static_cast<double>(batches));
}

void ServerMetrics::ObserveDecision(const model::Event& event, double seconds) {
  decision_seconds_[event.index()]->Observe(seconds);
}

void ServerMetrics::CountSubmission(const std::string& queue, const std::string& share) {
  submissions.With({queue, share}).Add();
}

std::string ServerMetrics::Render(std::vector<metrics::Family> scraped) const {
  std::vector<metrics::Family> all = registry_.Snapshot();
  for (metrics::Family& f : scraped) all.push_back(std::move(f));
  return metrics::Render(std::move(all));
}

std::string MetricLabel(model::DispatchMode mode) {
  switch (mode) {
    case model::DispatchMode::kWithinQuota:
      return "within_quota";
    case model::DispatchMode::kBorrowed:
      return "borrowed";
    case model::DispatchMode::kPreemptor:
      return "preemptor";
  }
  return "unknown";
}

std::string MetricLabel(model::PreemptionRule rule) {
  switch (rule) {
    case model::PreemptionRule::kReclaim:
      return "reclaim";
    case model::PreemptionRule::kInShare:
      return "in_share";
    case model::PreemptionRule::kLimitLowered:
      return "limit_lowered";
  }
  return "unknown";
}

namespace {

// One gauge family per field of UnitUsage, the same for shares and for the pool.
struct UnitField {
  const char* name;  // after allot_share_ / allot_pool_
  const char* help;
  std::int64_t engine::UnitUsage::*field;
};

constexpr std::array<UnitField, 8> kUnitFields = {{
    {"limit_instances", "Capacity limit (maxCapacity) in instances.", &engine::UnitUsage::limit},
    {"used_instances", "Instances held by dispatched jobs, stopping ones included.",
     &engine::UnitUsage::used},
    {"borrowed_instances", "Instances used beyond the limit: borrowed from other shares.",
     &engine::UnitUsage::borrowed},
    {"lent_instances", "Instances of this share's idle capacity backing other shares' borrowing.",
     &engine::UnitUsage::lent},
    {"lendable_idle_instances", "Idle instances other shares may borrow.",
     &engine::UnitUsage::idle_lendable},
    {"reserved_instances", "Instances reserved for nominated preemptors.",
     &engine::UnitUsage::reserved},
    {"stopping_instances", "Instances held by jobs that are stopping.",
     &engine::UnitUsage::stopping},
    {"waiting_instances", "Instances that RUNNABLE jobs need in total.",
     &engine::UnitUsage::waiting},
}};

}  // namespace

std::vector<metrics::Family> UsageFamilies(const std::vector<engine::QueueUsage>& queues) {
  std::vector<Family> out;
  for (const UnitField& f : kUnitFields) {
    Family share = Gauge(std::string("allot_share_") + f.name,
                         std::string("Per quota share and capacity unit: ") + f.help,
                         {"queue", "share", "unit"});
    Family pool = Gauge(std::string("allot_pool_") + f.name,
                        std::string("Per job queue and capacity unit, over its shares: ") + f.help,
                        {"queue", "unit"});
    for (const engine::QueueUsage& q : queues) {
      for (const engine::ShareUsage& s : q.shares) {
        for (const engine::UnitUsage& u : s.units) {
          share.Add({q.queue, s.name, u.unit}, static_cast<double>(u.*f.field));
        }
      }
      for (const engine::UnitUsage& u : q.pool) {
        pool.Add({q.queue, u.unit}, static_cast<double>(u.*f.field));
      }
    }
    out.push_back(std::move(share));
    out.push_back(std::move(pool));
  }
  Family waiting =
      Gauge("allot_share_waiting_jobs", "RUNNABLE jobs per quota share.", {"queue", "share"});
  Family running =
      Gauge("allot_share_running_jobs",
            "Dispatched jobs (SCHEDULED, STARTING, RUNNING) per quota share.", {"queue", "share"});
  Family info = Gauge("allot_share_info", "1 per quota share, with its sharing strategy.",
                      {"queue", "share", "strategy"});
  for (const engine::QueueUsage& q : queues) {
    for (const engine::ShareUsage& s : q.shares) {
      waiting.Add({q.queue, s.name}, static_cast<double>(s.waiting_jobs));
      running.Add({q.queue, s.name}, static_cast<double>(s.dispatched_jobs));
      info.Add({q.queue, s.name, std::string(model::ToString(s.strategy))}, 1);
    }
  }
  out.push_back(std::move(waiting));
  out.push_back(std::move(running));
  out.push_back(std::move(info));
  return out;
}

std::vector<metrics::Family> ProcessFamilies(const ProcessFigures& p) {
  std::vector<Family> out;
  out.push_back(Gauge("allot_build_info", "1, with the server's version.", {"version"}));
  out.back().Add({p.version}, 1);
  out.push_back(Gauge("process_start_time_seconds",
                      "Start time of the process since the Unix epoch in seconds.", {}));
  out.back().Add({}, p.start_time_seconds);
  out.push_back(Gauge("allot_jobs_stored", "Job records the server holds (live and ended).", {}));
  out.back().Add({}, static_cast<double>(p.stored_jobs));
  out.push_back(Gauge("allot_executor_up",
                      "1 while the executor answers (the Slurm executor: its last squeue "
                      "succeeded), else 0.",
                      {"executor"}));
  out.back().Add({p.executor}, p.executor_up ? 1 : 0);
  if (p.last_poll) {
    const double last = static_cast<double>(*p.last_poll) / 1000;
    out.push_back(Gauge("allot_executor_last_poll_timestamp_seconds",
                        "When the executor last read its cluster's jobs successfully (squeue), "
                        "since the Unix epoch.",
                        {"executor"}));
    out.back().Add({p.executor}, last);
    out.push_back(Gauge("allot_executor_poll_age_seconds",
                        "Seconds since the executor last read its cluster's jobs successfully.",
                        {"executor"}));
    out.back().Add({p.executor}, std::max(0.0, p.now_seconds - last));
  }
  out.push_back(Gauge("allot_store_rolling_back",
                      "1 while the server rolls back to its store after a failed write (every "
                      "call answers 500), else 0.",
                      {}));
  out.back().Add({}, p.rolling_back ? 1 : 0);
  out.push_back(Gauge("allot_store_reserve_released",
                      "1 while the store's reserve of disk space is released (a full disk: "
                      "callers may only read and terminate jobs), else 0.",
                      {}));
  out.back().Add({}, p.reserve_released ? 1 : 0);
  out.push_back(Gauge("allot_job_files_bytes",
                      "Bytes the finished jobs' trees of a quota share take in the data "
                      "directory, until they are removed to free the disk.",
                      {"queue", "share"}));
  for (const auto& [key, bytes] : p.finished_files) {
    const std::size_t slash = key.find('/');
    out.back().Add({key.substr(0, slash), slash == std::string::npos ? "" : key.substr(slash + 1)},
                   static_cast<double>(bytes));
  }
  return out;
}

Result<std::string> LoadOrCreateMetricsToken(const std::string& path) {
  Result<std::string> read = env::ReadFile(path);
  if (!read.ok() && read.status().code() == StatusCode::kNotFound) {
    std::array<unsigned char, 32> random{};
    if (RAND_bytes(random.data(), static_cast<int>(random.size())) != 1) {
      return Internal("the random generator failed to make a metrics token");
    }
    static constexpr char kHex[] = "0123456789abcdef";
    std::string token;
    for (unsigned char b : random) {
      token.push_back(kHex[b >> 4]);
      token.push_back(kHex[b & 15]);
    }
    ALLOT_RETURN_IF_ERROR(env::WriteFileAtomically(path, token + "\n", S_IRUSR | S_IWUSR));
    return token;
  }
  if (!read.ok()) return read.status();
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & S_IRWXO) != 0) {
    return InvalidArgument("the metrics token file " + path +
                           " is readable by others; make it mode 0600 (or 0640)");
  }
  std::string token = std::move(read).value();
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
    token.pop_back();
  }
  if (token.size() < 16 || token.find_first_of(" \t\r\n") != std::string::npos) {
    return InvalidArgument("the metrics token in " + path +
                           " must be one word of at least 16 characters");
  }
  return token;
}

bool BearerMatches(std::string_view authorization, const std::string& token) {
  constexpr std::string_view kScheme = "Bearer ";
  if (token.empty() || authorization.size() != kScheme.size() + token.size()) return false;
  // The scheme is case-insensitive (RFC 7235); the token is compared in constant time.
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) !=
        std::tolower(static_cast<unsigned char>(kScheme[i]))) {
      return false;
    }
  }
  return CRYPTO_memcmp(authorization.data() + kScheme.size(), token.data(), token.size()) == 0;
}

}  // namespace allot::server
