// Engine::WhatIf: the decisions an event would produce now, computed on a copy of the state so
// that the engine itself does not change (docs/observability.md, Explain and what-if). The copy
// is the simplest way to be exactly right: the pass runs as it would, on the same state; its
// cost was measured against the budget (bench/whatif_bench.cc, docs/benchmarks.md).

#include "engine/engine.h"
#include "engine/handlers.h"
#include "engine/pass.h"
#include "engine/state.h"

namespace allot::engine {

namespace internal {

namespace {

// Field by field: ShareState and QueueState hold unique_ptrs, so they have no copy constructor.
// Keep in step with state.h.
std::unique_ptr<ShareState> CopyShare(const ShareState& s) {
  auto c = std::make_unique<ShareState>();
  c->config = s.config;
  c->deleting = s.deleting;
  c->name_rank = s.name_rank;
  c->limit = s.limit;
  c->borrow_cap = s.borrow_cap;
  c->used[kActual] = s.used[kActual];
  c->used[kProjected] = s.used[kProjected];
  c->waiting_demand = s.waiting_demand;
  c->waiting_index = s.waiting_index;  // shared until changed (state.h)
  c->misconfigured = s.misconfigured;
  c->waiting_jobs = s.waiting_jobs;
  c->dispatched_jobs = s.dispatched_jobs;
  c->live_jobs = s.live_jobs;
  c->running = s.running;
  c->requeuing = s.requeuing;
  c->held_by_priority = s.held_by_priority;
  return c;
}

std::unique_ptr<QueueState> CopyQueue(const QueueState& q) {
  auto c = std::make_unique<QueueState>();
  c->config = q.config;
  c->deleting = q.deleting;
  c->env_enabled = q.env_enabled;
  c->units = q.units;
  c->unit_index = q.unit_index;
  c->pool = q.pool;
  c->agg[kActual] = q.agg[kActual];
  c->agg[kProjected] = q.agg[kProjected];
  c->shares.reserve(q.shares.size());
  for (const auto& s : q.shares) c->shares.push_back(s ? CopyShare(*s) : nullptr);
  c->share_index = q.share_index;
  c->shapes = q.shapes;
  c->shape_index = q.shape_index;
  c->nominees = q.nominees;
  c->nominee_free = q.nominee_free;
  c->live_jobs = q.live_jobs;
  c->stopping_jobs = q.stopping_jobs;
  return c;
}

}  // namespace

std::unique_ptr<EngineState> CopyState(const EngineState& st, bool share_jobs) {
  auto c = std::make_unique<EngineState>();
  c->now = st.now;
  c->newest_first = st.newest_first;
  c->envs = st.envs;
  c->queues.reserve(st.queues.size());
  for (const auto& q : st.queues) c->queues.push_back(q ? CopyQueue(*q) : nullptr);
  c->queue_index = st.queue_index;
  if (share_jobs && st.base_jobs == nullptr) {
    c->base_jobs = &st.jobs;  // copied one by one when first changed (state.h)
  } else {
    c->jobs = st.jobs;
    c->base_jobs = st.base_jobs;
    c->erased_base_jobs = st.erased_base_jobs;
  }
  c->retry_policies = st.retry_policies;
  c->retry_index = st.retry_index;
  c->deadlines = st.deadlines;
  c->final_reasons = st.final_reasons;
  c->nominee_waits = st.nominee_waits;
  c->victim_nominee = st.victim_nominee;
  c->next_nomination = st.next_nomination;
  c->dirty = st.dirty;
  c->out = nullptr;
  return c;
}

}  // namespace internal

Result<WhatIfAnswer> Engine::WhatIf(const model::Event& event, Timestamp now,
                                    model::JobId subject) const {
  Engine copy;
  // The copy reads this engine's jobs in place and copies only those it changes: `copy` does
  // not outlive this call, and this engine does not change meanwhile (it is const).
  copy.state_ = internal::CopyState(*state_, /*share_jobs=*/true);
  // Timers due by now fire first, apart: their decisions are not the event's.
  model::Decisions timers;
  ALLOT_RETURN_IF_ERROR(copy.Apply(model::Tick{}, now, &timers));
  WhatIfAnswer answer;
  ALLOT_RETURN_IF_ERROR(copy.Apply(event, now, &answer.decisions));
  if (subject != 0) {
    answer.subject = copy.GetJob(subject);
    if (answer.subject && answer.subject->status == model::JobStatus::kRunnable) {
      Result<model::WaitReason> why = copy.Explain(subject);
      if (why.ok()) answer.wait = std::move(why).value();
    }
  }
  return answer;
}

}  // namespace allot::engine
