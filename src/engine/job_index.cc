#include "engine/job_index.h"

#include "common/check.h"

namespace allot::engine::internal {

namespace {

WaitKey WaitKeyOf(const Job& j) { return {j.priority, j.created_at, j.id}; }
RunKey RunKeyOf(const EngineState& st, const Job& j) {
  return {j.priority, j.OrderReference(st.newest_first), j.attempt_started, j.id};
}

void AddWaitingDemand(ShareState& s, const Shape& shape, std::int64_t sign) {
  for (const auto& [u, n] : shape.parts) s.waiting_demand[u] += sign * n;
}

}  // namespace

void AddWaiting(EngineState& st, const Job& job) {
  ShareState& s = st.ShareOf(job);
  bool inserted = false;
  if (job.misconfig != model::Misconfiguration::kNone) {
    inserted = s.misconfigured.insert(WaitKeyOf(job)).second;
  } else {
    inserted = s.MutableWaiting()[job.shape].insert(WaitKeyOf(job)).second;
  }
  ALLOT_CHECK(inserted);
  ++s.waiting_jobs;
  AddWaitingDemand(s, st.ShapeOf(job), +1);
}

void RemoveWaiting(EngineState& st, const Job& job) {
  ShareState& s = st.ShareOf(job);
  std::size_t erased = 0;
  if (job.misconfig != model::Misconfiguration::kNone) {
    erased = s.misconfigured.erase(WaitKeyOf(job));
  } else {
    ShareState::WaitMap& waiting = s.MutableWaiting();
    auto it = waiting.find(job.shape);
    ALLOT_CHECK(it != waiting.end());
    erased = it->second.erase(WaitKeyOf(job));
    if (it->second.empty()) waiting.erase(it);
  }
  ALLOT_CHECK(erased == 1);
  --s.waiting_jobs;
  AddWaitingDemand(s, st.ShapeOf(job), -1);
}

void AddCandidate(EngineState& st, const Job& job) {
  ShareState& s = st.ShareOf(job);
  const Shape& shape = st.ShapeOf(job);
  ALLOT_CHECK(s.running[shape.instances].insert(RunKeyOf(st, job)).second);
  auto [it, fresh] = s.held_by_priority.try_emplace(job.priority);
  if (fresh) it->second.assign(s.limit.size(), 0);
  for (const auto& [u, n] : shape.parts) it->second[u] += n;
}

void RemoveCandidate(EngineState& st, const Job& job) {
  ShareState& s = st.ShareOf(job);
  const Shape& shape = st.ShapeOf(job);
  auto cls = s.running.find(shape.instances);
  ALLOT_CHECK(cls != s.running.end() && cls->second.erase(RunKeyOf(st, job)) == 1);
  if (cls->second.empty()) s.running.erase(cls);
  auto it = s.held_by_priority.find(job.priority);
  ALLOT_CHECK(it != s.held_by_priority.end());
  bool empty = true;
  for (const auto& [u, n] : shape.parts) it->second[u] -= n;
  for (std::int64_t v : it->second) empty = empty && v == 0;
  if (empty) s.held_by_priority.erase(it);
}

bool WillRequeue(const Job& job) {
  return job.preemption_retries < 0 || job.preemptions < job.preemption_retries;
}

void AddRequeuing(EngineState& st, const Job& job) {
  ALLOT_CHECK(job.stopping && job.stop_kind == model::StopKind::kPreemption && WillRequeue(job));
  ALLOT_CHECK(st.ShareOf(job).requeuing.insert(WaitKeyOf(job)).second);
}

bool RemoveRequeuing(EngineState& st, const Job& job) {
  return st.ShareOf(job).requeuing.erase(WaitKeyOf(job)) == 1;
}

}  // namespace allot::engine::internal
