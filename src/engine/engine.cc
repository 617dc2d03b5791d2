#include "engine/engine.h"

#include <algorithm>

#include "engine/handlers.h"
#include "engine/pass.h"
#include "engine/state.h"

namespace allot::engine {

using internal::EngineState;
using internal::Job;

Engine::Engine() : Engine(EngineOptions{}) {}
Engine::Engine(const EngineOptions& options) : state_(std::make_unique<EngineState>()) {
  state_->newest_first = options.victim_order == VictimOrder::kNewestFirst;
}
Engine::~Engine() = default;
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;

Status Engine::Apply(const model::Event& event, Timestamp now, model::Decisions* out) {
  EngineState& st = *state_;
  st.now = std::max(st.now, now);
  st.out = out;
  internal::FireDeadlines(st);
  Status status = std::visit([&st](const auto& e) { return internal::Handle(st, e); }, event);
  while (!st.dirty.empty()) {
    const std::uint32_t queue = *st.dirty.begin();
    st.dirty.erase(st.dirty.begin());
    if (queue < st.queues.size() && st.queues[queue]) internal::RunPass(st, *st.queues[queue]);
  }
  st.out = nullptr;
  return status;
}

std::optional<Timestamp> Engine::NextDeadline() const {
  if (state_->deadlines.empty()) return std::nullopt;
  return state_->deadlines.begin()->at;
}

std::optional<JobView> Engine::GetJob(model::JobId id) const {
  const Job* job = state_->FindJob(id);
  if (job == nullptr) return std::nullopt;
  const internal::QueueState& q = *state_->queues[job->queue];
  JobView v;
  v.id = job->id;
  v.queue = q.config.name;
  v.share = q.shares[job->share]->config.name;
  v.status = job->status;
  v.status_reason = job->status_reason;
  v.priority = job->priority;
  v.attempt = job->attempt;
  v.failed_attempts = job->failed_attempts;
  v.preemptions = job->preemptions;
  v.stopping = job->stopping;
  v.nominated = job->nominated;
  v.last_checkpoint = job->last_checkpoint;
  v.attempt_started_at = job->attempt_started;
  return v;
}

std::size_t Engine::LiveJobs() const {
  if (state_->base_jobs == nullptr) return state_->jobs.size();
  std::size_t n = 0;  // a what-if copy (whatif.cc)
  state_->ForEachJob([&n](const Job&) { ++n; });
  return n;
}

}  // namespace allot::engine
