#include <algorithm>
#include <set>

#include "engine/accounting.h"
#include "engine/handlers.h"
#include "engine/job_index.h"
#include "engine/lifecycle.h"
#include "engine/pass.h"
#include "model/rules.h"

namespace allot::engine::internal {

namespace {

// The live jobs of a queue (or of one share of it), by id.
std::vector<JobId> JobsOf(const EngineState& st, std::uint32_t queue, const ShareState* share) {
  std::vector<JobId> ids;
  st.ForEachJob([&](const Job& job) {
    if (job.queue != queue) return;
    if (share != nullptr && st.queues[queue]->shares[job.share].get() != share) return;
    ids.push_back(job.id);
  });
  std::sort(ids.begin(), ids.end());  // unordered_map order must not reach the output
  return ids;
}

void TerminateAll(EngineState& st, const std::vector<JobId>& ids, const std::string& reason) {
  for (JobId id : ids) {
    if (Job* job = st.FindJob(id)) TerminateLiveJob(st, *job, reason);
  }
}

QueueState* AttachedQueue(EngineState& st, const std::string& env) {
  for (auto& q : st.queues) {
    if (q && q->config.service_environment == env) return q.get();
  }
  return nullptr;
}

void SetPool(EngineState& st, QueueState& q) {
  const model::ServiceEnvironmentConfig& env = st.envs.at(q.config.service_environment);
  for (const model::CapacityLimit& l : env.capacity_limits) InternUnit(q, l.unit);
  std::fill(q.pool.begin(), q.pool.end(), 0);
  for (const model::CapacityLimit& l : env.capacity_limits) {
    q.pool[q.unit_index.find(l.unit)->second] = l.max_capacity;
  }
  q.env_enabled = env.state == model::State::kEnabled;
}

std::uint32_t IndexOf(const EngineState& st, const QueueState& q) {
  return st.queue_index.find(q.config.name)->second;
}

}  // namespace

void ReconcileQueue(EngineState& st, std::uint32_t queue) {
  QueueState& q = *st.queues[queue];
  SetPool(st, q);
  for (auto& s : q.shares) {
    if (s) ApplyShareLimits(q, *s);
  }
  RecomputeAggregates(q);
  std::uint32_t rank = 0;
  for (const auto& [name, i] : q.share_index) q.shares[i]->name_rank = rank++;
  std::vector<JobId> waiting;
  for (const auto& s : q.shares) {
    if (!s) continue;
    for (const auto& [shape, set] : s->waiting()) {
      for (const WaitKey& k : set) waiting.push_back(k.id);
    }
    for (const WaitKey& k : s->misconfigured) waiting.push_back(k.id);
  }
  std::sort(waiting.begin(), waiting.end());
  for (JobId id : waiting) RecheckWaiting(st, id);
  RevalidateNominees(st, q);
  st.dirty.insert(queue);
}

Status Handle(EngineState& st, const model::PutServiceEnvironment& e) {
  const model::ServiceEnvironmentConfig& c = e.config;
  if (c.name.empty()) return InvalidArgument("serviceEnvironmentName must not be empty");
  ALLOT_RETURN_IF_ERROR(model::rules::CheckCapacityLimits(c.capacity_limits, 0, "capacityLimits"));
  ALLOT_RETURN_IF_ERROR(model::rules::CheckEnvironmentUnits(c.capacity_limits, "capacityLimits"));
  st.envs[c.name] = c;
  if (QueueState* q = AttachedQueue(st, c.name)) ReconcileQueue(st, IndexOf(st, *q));
  return Status::Ok();
}

Status Handle(EngineState& st, const model::DeleteServiceEnvironment& e) {
  auto it = st.envs.find(e.name);
  if (it == st.envs.end()) return NotFound("service environment " + e.name + " does not exist");
  if (it->second.state != model::State::kDisabled) {
    return FailedPrecondition("service environment " + e.name +
                              " must be DISABLED before it is deleted");
  }
  if (QueueState* q = AttachedQueue(st, e.name)) {
    return FailedPrecondition("service environment " + e.name + " is attached to job queue " +
                              q->config.name);
  }
  st.envs.erase(it);
  return Status::Ok();
}

Status Handle(EngineState& st, const model::PutJobQueue& e) {
  const model::JobQueueConfig& c = e.config;
  if (c.name.empty()) return InvalidArgument("jobQueueName must not be empty");
  if (st.envs.find(c.service_environment) == st.envs.end()) {
    return NotFound("service environment " + c.service_environment + " does not exist");
  }
  QueueState* other = AttachedQueue(st, c.service_environment);
  if (other != nullptr && other->config.name != c.name) {
    return FailedPrecondition("service environment " + c.service_environment +
                              " is already attached to job queue " + other->config.name);
  }
  for (const model::JobStateTimeLimitAction& a : c.time_limit_actions) {
    if (a.reason.empty()) return InvalidArgument("jobStateTimeLimitActions.reason is required");
    ALLOT_RETURN_IF_ERROR(model::rules::CheckRange(
        a.max_time_seconds, model::rules::kMinTimeLimitSeconds, model::rules::kMaxTimeLimitSeconds,
        "jobStateTimeLimitActions.maxTimeSeconds"));
  }
  auto it = st.queue_index.find(c.name);
  if (it == st.queue_index.end()) {
    const auto index = static_cast<std::uint32_t>(st.queues.size());
    st.queues.emplace_back(std::make_unique<QueueState>());
    st.queue_index.emplace(c.name, index);
    st.queues[index]->config = c;
    ReconcileQueue(st, index);
    return Status::Ok();
  }
  QueueState& q = *st.queues[it->second];
  if (q.deleting) return FailedPrecondition("job queue " + c.name + " is being deleted");
  q.config = c;
  ReconcileQueue(st, it->second);
  return Status::Ok();
}

Status Handle(EngineState& st, const model::DeleteJobQueue& e) {
  auto it = st.queue_index.find(e.name);
  if (it == st.queue_index.end()) return NotFound("job queue " + e.name + " does not exist");
  QueueState& q = *st.queues[it->second];
  if (q.config.state != model::State::kDisabled) {
    return FailedPrecondition("job queue " + e.name + " must be DISABLED before it is deleted");
  }
  const std::uint32_t index = it->second;
  q.deleting = true;
  for (auto& s : q.shares) {
    if (s) s->deleting = true;
  }
  TerminateAll(st, JobsOf(st, index, nullptr), "Job queue " + e.name + " was deleted");
  ReconcileQueue(st, index);
  CollectDeleted(st, index);
  return Status::Ok();
}

namespace {

Status CheckShare(const EngineState& st, const model::QuotaShareConfig& c) {
  if (c.name.empty()) return InvalidArgument("quotaShareName must not be empty");
  auto it = st.queue_index.find(c.queue);
  if (it == st.queue_index.end()) return NotFound("job queue " + c.queue + " does not exist");
  const QueueState& q = *st.queues[it->second];
  if (q.deleting) return FailedPrecondition("job queue " + c.queue + " is being deleted");
  ALLOT_RETURN_IF_ERROR(model::rules::CheckCapacityLimits(c.capacity_limits, 1, "capacityLimits"));
  ALLOT_RETURN_IF_ERROR(model::rules::CheckBorrowLimit(c.borrow_limit, c.strategy, "borrowLimit"));
  auto share = q.share_index.find(c.name);
  if (share != q.share_index.end()) {
    if (q.shares[share->second]->deleting) {
      return FailedPrecondition("quota share " + c.name + " is being deleted");
    }
  } else if (q.share_index.size() >= model::rules::kMaxSharesPerQueue) {
    // The caller's to wait for, not a fault: a deleted share counts until its jobs have stopped.
    return FailedPrecondition("job queue " + c.queue +
                              " already has the maximum of 20 quota shares, counting those "
                              "being deleted until their jobs have stopped");
  }
  return Status::Ok();
}

}  // namespace

Status Handle(EngineState& st, const model::PutQuotaShare& e) {
  ALLOT_RETURN_IF_ERROR(CheckShare(st, e.config));
  const std::uint32_t index = st.queue_index.find(e.config.queue)->second;
  QueueState& q = *st.queues[index];
  auto it = q.share_index.find(e.config.name);
  if (it == q.share_index.end()) {
    const auto share = static_cast<std::uint32_t>(q.shares.size());
    q.shares.emplace_back(std::make_unique<ShareState>());
    q.share_index.emplace(e.config.name, share);
    it = q.share_index.find(e.config.name);
  }
  q.shares[it->second]->config = e.config;
  ReconcileQueue(st, index);
  return Status::Ok();
}

Status Handle(EngineState& st, const model::DeleteQuotaShare& e) {
  auto qit = st.queue_index.find(e.queue);
  if (qit == st.queue_index.end()) return NotFound("job queue " + e.queue + " does not exist");
  QueueState& q = *st.queues[qit->second];
  auto it = q.share_index.find(e.name);
  if (it == q.share_index.end() || q.shares[it->second]->deleting) {
    return NotFound("quota share " + e.name + " does not exist in job queue " + e.queue);
  }
  ShareState& s = *q.shares[it->second];
  if (s.config.state != model::State::kDisabled) {
    return FailedPrecondition("quota share " + e.name + " must be DISABLED before it is deleted");
  }
  s.deleting = true;
  TerminateAll(st, JobsOf(st, qit->second, &s), "Quota share " + e.name + " was deleted");
  ReconcileQueue(st, qit->second);
  CollectDeleted(st, qit->second);
  return Status::Ok();
}

void CollectDeleted(EngineState& st, std::uint32_t queue) {
  QueueState* q = st.queues[queue].get();
  if (q == nullptr) return;
  for (auto& s : q->shares) {
    if (s && s->deleting && s->live_jobs == 0) {
      q->share_index.erase(s->config.name);
      s.reset();
    }
  }
  if (q->deleting && q->live_jobs == 0) {
    st.queue_index.erase(q->config.name);
    st.queues[queue].reset();
  }
}

}  // namespace allot::engine::internal
