// GET /metrics: the controller's side. The counters and histograms are kept as the server works
// (server_metrics.h); the gauges are read here, at the scrape, from the engine under the
// controller's lock, and rendered after it is released.

#include <chrono>

#include "api/decode.h"
#include "server/controller.h"

#ifndef ALLOT_VERSION
#define ALLOT_VERSION "unknown"
#endif

namespace allot::server {

bool Controller::IsAction(const std::string& action) { return api::FindAction(action).has_value(); }

std::string Controller::MetricsText() {
  std::vector<engine::QueueUsage> usage;
  ProcessFigures process{.version = ALLOT_VERSION,
                         .start_time_seconds = metrics_.start_time_seconds(),
                         .executor = options_.executor};
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, queue] : queues_) {  // by name
      if (Result<engine::QueueUsage> u = engine_.Usage(name); u.ok()) usage.push_back(*u);
    }
    process.stored_jobs = jobs_.size();
    process.finished_files = finished_trees_.ShareBytes();
  }
  process.rolling_back = broken_;
  process.reserve_released = store_reserve_out_;
  const exec::Executor::Health health = executor_->health();
  process.executor_up = health.answering;
  process.last_poll = health.last_poll;
  process.now_seconds =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::vector<metrics::Family> scraped = UsageFamilies(usage);
  for (metrics::Family& f : ProcessFamilies(process)) scraped.push_back(std::move(f));
  return metrics_.Render(std::move(scraped));
}

}  // namespace allot::server
