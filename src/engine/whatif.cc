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

// Every field of EngineState is named here except where the jobs are shared rather than copied;
// a field added to EngineState changes its size and stops the build until it is copied here too.
// (Queues and shares need no such list: they copy whole, DeepCopied in state.h.)
#if defined(__x86_64__) && defined(__GLIBCXX__)
static_assert(sizeof(EngineState) == 648, "EngineState changed: copy the new field in CopyState");
#endif

std::unique_ptr<EngineState> CopyState(const EngineState& st, bool share_jobs) {
  auto c = std::make_unique<EngineState>();
  c->now = st.now;
  c->newest_first = st.newest_first;
  c->envs = st.envs;
  c->queues = st.queues;  // deep: queues and shares copy whole (DeepCopied, state.h)
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
  c->dispatch_hold = st.dispatch_hold;
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
