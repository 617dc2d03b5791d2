// Service jobs: submit, update, describe, list, terminate, and the queue snapshot.

#include <algorithm>
#include <cctype>
#include <chrono>
#include <functional>
#include <random>

#include "common/strings.h"
#include "model/rules.h"
#include "server/api_error.h"
#include "server/config_wire.h"
#include "server/controller.h"
#include "server/job_codec.h"
#include "server/local_paths.h"

namespace allot::server {

namespace {

// A UUID whose first 48 bits are the Unix time in milliseconds (the layout of RFC 9562's
// version 7; the other 74 bits random). The store keys the job and its payload by this id: in
// time order a submission's keys append to the B-trees' last pages, where random (version 4)
// ids dirtied one more page per record and commit as jobs accumulated (docs/benchmarks.md).
std::string NewJobId() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  const auto ms =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  const std::uint64_t a = rng();
  return UuidV7(ms, a, rng());
}

// The quota share a job names: required, existing and not DISABLED on a quota-share queue, and
// refused on any other.
Status CheckQuotaShare(const std::optional<std::string>& share, const std::string& qname,
                       bool quota_managed, const std::map<std::string, QuotaShareRecord>& shares) {
  if (quota_managed) {
    if (!share)
      return InvalidArgument("quotaShareName is required on job queue " + qname +
                             ", which uses quota shares");
    if (!shares.count(qname + "/" + *share)) {
      return InvalidArgument("quotaShareName " + *share + " does not exist in job queue " + qname);
    }
    if (shares.at(qname + "/" + *share).state == model::State::kDisabled) {
      return InvalidArgument("quota share " + *share + " is DISABLED and accepts no new jobs");
    }
  } else if (share) {
    return InvalidArgument(
        "quotaShareName is allowed only on job queues with a quota-share scheduling policy; "
        "job queue " +
        qname + " has none");
  }
  return {};
}

// Every instance type the job asks for is a capacity unit of the queue's service environment.
Status CheckUnitsOffered(const model::Demand& demand, const ServiceEnvironmentRecord& env) {
  for (const model::UnitCount& u : demand) {
    bool known = false;
    std::string units;
    for (const model::CapacityLimit& l : env.capacity_limits) {
      known = known || l.unit == u.unit;
      units += (units.empty() ? "" : ", ") + l.unit;
    }
    if (!known) {
      return InvalidArgument("serviceRequestPayload.ResourceConfig.InstanceType " + u.unit +
                             " is not offered by service environment " + env.name + " (it has " +
                             units + ")");
    }
  }
  return {};
}

}  // namespace

model::Demand DemandIn(const ServiceEnvironmentRecord& env, const api::ParsedPayload& parsed) {
  if (!UsesNumInstances(env)) return parsed.demand;
  return {{std::string(model::rules::kNumInstances), parsed.launch.instance_count}};
}

std::optional<std::int64_t> AttemptTimeout(const api::SubmitServiceJobRequest& r) {
  std::optional<std::int64_t> timeout = r.parsed.max_runtime_seconds;
  if (r.timeout_config_seconds) {
    timeout = timeout ? std::min(*timeout, *r.timeout_config_seconds) : *r.timeout_config_seconds;
  }
  return timeout;
}

Status PriorityChangeable(const JobRecord& job) {
  if (!model::IsTerminal(job.status)) return {};
  return InvalidArgument("job " + job.id + " is " + std::string(model::ToString(job.status)) +
                         "; only unfinished jobs can change priority");
}

// A clientToken is the caller's own: another user's token neither finds the caller's job nor
// tells that it was used (user names hold no '/').
std::string Controller::TokenKey(const std::string& queue, const std::string& token) const {
  return queue + "/" + (caller_ != nullptr ? caller_->user : std::string()) + "/" + token;
}

Result<Controller::Reply> Controller::Handle(const api::SubmitServiceJobRequest& r) {
  ALLOT_ASSIGN_OR_RETURN(const JobQueueRecord* found, QueueNamed(r.queue));
  const JobQueueRecord& queue = *found;
  const std::string qname = queue.name;
  ALLOT_RETURN_IF_ERROR(CheckQuotaShare(r.quota_share, qname, IsQuotaManaged(queue), shares_));
  if (queue.state == model::State::kDisabled)
    return InvalidArgument("job queue " + qname + " is DISABLED");
  if (r.client_token) {
    auto it = client_tokens_.find(TokenKey(qname, *r.client_token));
    if (it != client_tokens_.end()) {
      if (it->second.second != r.request_hash) {
        return InvalidArgument("clientToken " + *r.client_token +
                               " was already used with a different request");
      }
      const JobRecord& job = *FindJob(it->second.first);
      return Reply{api::ServiceJobChanged{arns_.Job(job.id), job.name, job.id}};
    }
  }
  const ServiceEnvironmentRecord& env = environments_.at(queue.environment());
  const model::Demand demand = DemandIn(env, r.parsed);
  ALLOT_RETURN_IF_ERROR(CheckUnitsOffered(demand, env));
  JobRecord job;
  job.id = NewJobId();
  job.name = r.name;
  if (r.parsed.launch.training_job_name != r.name) {
    job.MutableOptions().training_name = r.parsed.launch.training_job_name;
  }
  job.queue = Intern(qname);
  if (r.quota_share) job.share = Intern(*r.quota_share);
  if (caller_ != nullptr) job.submitted_by = Intern(caller_->user);
  job.priority = r.priority;
  job.demand = demand;
  job.MutableOptions().retry = r.retry;
  if (r.preemption_retries) job.MutableOptions().preemption_retries = *r.preemption_retries;
  if (r.timeout_config_seconds) {
    job.MutableOptions().timeout_config_seconds = *r.timeout_config_seconds;
  }
  job.attempt_timeout_seconds = AttemptTimeout(r);
  job.MutableOptions().tags = r.tags;
  job.Compact();
  job.seq = next_seq_++;
  job.created_at = Now();
  // The file:// paths, in this order (local_paths.h, checkpoint_claims.h):
  // - the claims, by the paths as written: a name inside another share's location is refused
  //   whatever is there, so the refusal tells nothing of what it holds, whatever its mode;
  // - each path resolved once, as the share's jobs reach it (PathsUser), and its roots checked;
  // - the claims on where that led, then whether each is there and may be used, asked of that
  //   same place; the claims are recorded for it.
  api::LaunchInfo resolved;
  std::optional<exec::JobUser> paths_as;
  const bool local = HasLocalPaths(r.parsed);
  if (local) {
    ALLOT_RETURN_IF_ERROR(checkpoint_claims_.CheckWritten(r.parsed.launch, job, jobs_, *store_));
    ALLOT_ASSIGN_OR_RETURN(paths_as,
                           PathsUser(qname, r.quota_share.value_or(""), /*allocate=*/false));
    ALLOT_ASSIGN_OR_RETURN(resolved,
                           ResolveLocalPaths(r.parsed, options_.file_roots, data_dir_, paths_as));
  }
  ALLOT_RETURN_IF_ERROR(checkpoint_claims_.Claim(
      r.parsed.launch, job, jobs_, *store_,
      [&]() -> Status {
        if (!local) return {};
        return CheckLocalUse(r.parsed, resolved, paths_as, /*channels_exist=*/true);
      },
      local ? &resolved : nullptr));
  const std::string id = job.id;
  const model::JobSpec spec = job.Spec();
  Touch(AddJob(std::move(job)));
  if (Status s = Apply(model::SubmitJob{spec}); !s.ok()) {  // its decisions need the record
    DropJob(spec.id);
    return s;
  }
  pending_.Put(store::Kind::kJobPayload, id, r.payload);
  if (r.client_token) {
    const std::string key = TokenKey(qname, *r.client_token);
    client_tokens_[key] = {id, r.request_hash};
    pending_.Put(store::Kind::kClientToken, key, EncodeClientToken({id, r.request_hash}));
  }
  return Reply{api::ServiceJobChanged{arns_.Job(id), r.name, id}};
}

Result<Controller::Reply> Controller::Handle(const api::UpdateServiceJobRequest& r) {
  ALLOT_ASSIGN_OR_RETURN(JobRecord * found, JobNamed(r.job_id));
  JobRecord& job = *found;
  ALLOT_RETURN_IF_ERROR(PriorityChangeable(job));
  ALLOT_RETURN_IF_ERROR(Apply(model::UpdateJobPriority{job.seq, r.priority}));
  NotePriority(job, std::exchange(job.priority, r.priority));
  Touch(job);
  return Reply{api::ServiceJobChanged{arns_.Job(job.id), job.name, job.id}};
}

Result<Controller::Reply> Controller::Handle(const api::DescribeServiceJobRequest& r) {
  ALLOT_ASSIGN_OR_RETURN(const JobRecord* found, JobNamed(r.job_id));
  const JobRecord& job = *found;
  api::ServiceJobDetail out = DescribeJob(job, arns_);
  Result<std::optional<std::string>> payload = store_->Get(store::Kind::kJobPayload, job.id);
  if (payload.ok() && payload.value()) out.payload = *payload.value();
  RedactPreemptionRecords(out.allot);  // explain_ops.cc
  if (auto view = engine_.GetJob(job.seq); view && view->status == model::JobStatus::kRunnable) {
    // botocore drops "allot": the sentence goes into statusReason too.
    if (std::string why = RunnableReason(job); !why.empty()) out.summary.status_reason = why;
    if (auto why = engine_.Explain(job.seq); why.ok()) {
      out.allot.waiting_reason = api::WaitingDetail{.rule = why->rule,
                                                    .unit = why->unit,
                                                    .missing = why->missing,
                                                    .position_in_share = why->position_in_share,
                                                    .position_in_queue = why->position_in_queue,
                                                    .message = why->message};
    }
  }
  return Reply{std::move(out)};
}

namespace {

bool Matches(const api::JobListFilters& f, const JobRecord& job) {
  if (f.status && job.status != *f.status) return false;
  if (f.share && job.share != *f.share) return false;
  if (f.before && job.created_at >= *f.before) return false;
  if (f.after && job.created_at <= *f.after) return false;
  if (f.name) {
    std::string_view name = job.name;
    if (f.name_prefix) name = name.substr(0, f.name->size());
    if (!EqualsIgnoreCase(name, *f.name)) return false;
  }
  return true;
}

// Collects a page newest first from keys in descending order.
class Page {
 public:
  // `runnable_reason`: a RUNNABLE job's statusReason, with why it waits (explain_ops.cc).
  Page(std::size_t max, const ArnContext& arns,
       std::function<std::string(const JobRecord&)> runnable_reason)
      : max_(max), arns_(arns), runnable_reason_(std::move(runnable_reason)) {}
  // False once the page is full (it then carries a nextToken).
  bool Add(const ListIndex::Key& key, const JobRecord& job) {
    if (list_.jobs.size() == max_) {
      token_ = last_;
      return false;
    }
    list_.jobs.push_back(SummarizeJob(job, arns_));
    if (job.status == model::JobStatus::kRunnable) {
      if (std::string why = runnable_reason_(job); !why.empty()) {
        list_.jobs.back().status_reason = why;
      }
    }
    last_ = key;
    return true;
  }
  void StopAt(const ListIndex::Key& key) { token_ = key; }
  api::ListServiceJobsResponse Finish() {
    if (token_)
      list_.next_token = std::to_string(token_->first) + "." + std::to_string(token_->second);
    return std::move(list_);
  }

 private:
  std::size_t max_;
  const ArnContext& arns_;
  std::function<std::string(const JobRecord&)> runnable_reason_;
  api::ListServiceJobsResponse list_;
  ListIndex::Key last_{};
  std::optional<ListIndex::Key> token_;
};

}  // namespace

// Newest first. A JOB_NAME filter reads the name index; a status (alone or with a quota share)
// its own index; time filters the queue's time order from where they start.
Result<Controller::Reply> Controller::Handle(const api::ListServiceJobsRequest& r) {
  ALLOT_ASSIGN_OR_RETURN(const JobQueueRecord* queue, QueueNamed(r.queue));
  const std::string qname = queue->name;
  const api::JobListFilters& f = r.filters;
  const std::size_t max = r.max_results;
  const std::optional<ListIndex::Key> token = r.after_position;
  // AWS's list calls may also answer fewer than maxResults with a nextToken.
  const std::size_t budget = std::max<std::size_t>(1, options_.list_scan_budget);
  Page page(max, arns_, [this](const JobRecord& job) { return RunnableReason(job); });
  if (f.share_identifier) return Reply{page.Finish()};  // no job has one (requests.h)
  if (f.name) {
    auto [first, last] = list_index_.ByName(qname, *f.name, f.name_prefix);
    // The names' entries are in name order: a page sorts them by time, if they are few enough;
    // else it scans the queue's time order like the other filters.
    std::vector<ListIndex::Key> keys;
    std::size_t examined = 0;
    for (auto it = first; it != last && examined <= budget; ++it, ++examined) {
      if (!token || it->key < *token) keys.push_back(it->key);
    }
    if (examined <= budget) {
      std::sort(keys.rbegin(), keys.rend());
      for (const ListIndex::Key& key : keys) {
        const JobRecord& job = jobs_.at(key.second);
        if (Matches(f, job) && CanDescribe(job) && !page.Add(key, job)) break;
      }
      return Reply{page.Finish()};
    }
  }
  const ListIndex::Set& index = f.name || f.before || f.after ? list_index_.All(qname)
                                : f.share ? list_index_.ByShareStatus(qname, *f.share, *f.status)
                                          : list_index_.ByStatus(qname, *f.status);
  auto it = index.rbegin();
  if (f.before) it = std::make_reverse_iterator(index.lower_bound({*f.before, 0}));
  if (token && (!f.before || *token < ListIndex::Key{*f.before, 0})) {
    it = std::make_reverse_iterator(index.lower_bound(*token));
  }
  for (std::size_t examined = 0; it != index.rend(); ++it, ++examined) {
    if (f.after && it->first <= *f.after) break;  // older from here on
    if (examined == budget) {
      page.StopAt(*std::prev(it));
      break;
    }
    const JobRecord& job = jobs_.at(it->second);
    if (Matches(f, job) && CanDescribe(job) && !page.Add(*it, job)) break;
  }
  return Reply{page.Finish()};
}

Result<Controller::Reply> Controller::Handle(const api::TerminateServiceJobRequest& r) {
  ALLOT_ASSIGN_OR_RETURN(JobRecord * found, JobNamed(r.job_id));
  JobRecord& job = *found;
  if (model::IsTerminal(job.status)) return Reply{};
  job.is_terminated = true;
  Touch(job);
  if (Status s = Apply(model::TerminateJob{job.seq, r.reason}); !s.ok()) {
    job.is_terminated = false;  // refused: the record is written back as it was
    return s;
  }
  return Reply{};
}

Result<Controller::Reply> Controller::Handle(const api::GetJobQueueSnapshotRequest& r) {
  ALLOT_ASSIGN_OR_RETURN(const JobQueueRecord* found, QueueNamed(r.queue));
  const JobQueueRecord& queue = *found;
  const std::string qname = queue.name;
  api::JobQueueSnapshotResponse out{.last_updated_at = Now()};
  // A job the caller may not describe keeps its place, without its ARN (as explain's hidden
  // jobs): the caller sees how many wait ahead, not whose.
  auto front = [&](const std::string& share) {
    std::vector<api::FrontEntry> entries;
    for (model::JobId seq : engine_.FrontOfQueue(qname, share, 100)) {
      const JobRecord& job = jobs_.at(seq);
      entries.push_back({CanDescribe(job) ? std::optional(arns_.Job(job.id)) : std::nullopt,
                         job.runnable_since != 0 ? job.runnable_since : job.created_at});
    }
    return entries;
  };
  out.front_of_queue = front("");
  const bool quota_managed = IsQuotaManaged(queue);
  if (quota_managed) out.share_utilization.emplace();
  Result<engine::QueueUsage> usage = engine_.Usage(qname);
  if (!usage.ok()) return Reply{std::move(out)};
  for (const engine::UnitUsage& u : usage->pool) out.total_usage.push_back({u.unit, u.used});
  if (!quota_managed) return Reply{std::move(out)};  // a plain queue's one share is internal
  for (const engine::ShareUsage& s : usage->shares) {
    api::ShareUtilization share{.name = s.name, .waiting_jobs = s.waiting_jobs};
    for (const engine::UnitUsage& u : s.units) {
      if (u.limit == 0 && u.used == 0) continue;
      share.used.push_back({u.unit, u.used});
      share.borrowed.push_back({u.unit, u.borrowed});
      share.lent.push_back({u.unit, u.lent});
    }
    out.share_utilization->push_back(std::move(share));
    out.front_of_shares.emplace_back(s.name, front(s.name));
  }
  return Reply{std::move(out)};
}

}  // namespace allot::server
