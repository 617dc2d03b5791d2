#pragma once

// The controller owns the engine, the store and the executor. API calls and executor reports
// become engine events under one lock; the decisions update the job records, which are written
// to the store in the same batch; executor actions (start, stop) run only after that batch is
// durable, on the controller's loop thread, which also fires the engine's timers (a launch, which
// may take long, is handed from there to a launch worker: launches.cc).

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "api/credentials.h"
#include "api/decode.h"
#include "api/history_requests.h"
#include "api/payload.h"
#include "api/requests.h"
#include "api/responses.h"
#include "api/secret_box.h"
#include "api/tenancy_requests.h"
#include "engine/engine.h"
#include "env/worker_pool.h"
#include "exec/executor.h"
#include "server/audit.h"
#include "server/caller.h"
#include "server/checkpoint_claims.h"
#include "server/config_records.h"
#include "server/durable.h"
#include "server/finished_trees.h"
#include "server/history.h"
#include "server/job_record.h"
#include "server/job_wire.h"
#include "server/json.h"
#include "server/list_index.h"
#include "server/options.h"
#include "server/server_metrics.h"
#include "server/users.h"
#include "store/store.h"

namespace allot::server {

struct RestoreSnapshot;  // recovery.cc

// What the executor needs to run a job, read from its serviceRequestPayload.
using api::LaunchInfo;

// What a submission asks of the pool: its payload's instances, all counted together where the
// environment counts NUM_INSTANCES (job_ops.cc).
model::Demand DemandIn(const ServiceEnvironmentRecord& env, const api::ParsedPayload& parsed);
// A submission's attempt timeout: the shorter of the payload's MaxRuntimeInSeconds and
// timeoutConfig.attemptDurationSeconds.
std::optional<std::int64_t> AttemptTimeout(const api::SubmitServiceJobRequest& r);
// Refuses a priority change of a job that has ended.
Status PriorityChangeable(const JobRecord& job);
// Why a job's logs are gone: its files were removed to free the disk (job_files.cc).
std::string RemovedFilesMessage(const JobRecord& job, const Options& options);

class Controller {
 public:
  // An answer, and when it may be given: `durable` is valid when it must wait for a commit.
  // The answer is typed (api/responses.h); its document is written at the wire edge
  // (server/wire_call.h, api/encode.h).
  struct Reply {
    api::Response body;
    Durable durable;
  };

  // Opens the store (SQLite in the data directory, unless `store` is given: tests pass one that
  // fails on demand), rebuilds the engine from it and starts the loop.
  static Result<std::unique_ptr<Controller>> Start(const Options& options,
                                                   std::unique_ptr<store::Store> store = nullptr);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // One AWS Batch action, decoded (api/decode.h), by `caller`. A request the server's state
  // refuses is kInvalidArgument with the message for the caller (api/wire_error.h maps codes to
  // AWS errors), a call the caller's policy does not allow kPermissionDenied, a fault of the
  // server kInternal. An accepted change answers once `durable` holds the store's outcome. Every
  // mutating call, allowed or not, leaves an audit record (audit.h), in the same batch as its
  // change.
  Result<Reply> Call(const api::Request& request, const Caller& caller = Caller::System());
  // TagResource / UntagResource / ListTagsForResource, decoded (api::DecodeTags).
  Result<Reply> Tags(const api::TagsRequest& request, const Caller& caller = Caller::System());

  // Signature checks: the secret of an access key, and who holds it.
  std::optional<std::string> SecretFor(const std::string& access_key_id);
  std::optional<Caller> CallerFor(const std::string& access_key_id);

  // /allot/v1/users[/NAME[/policy|/keys/rotate]] (users_ops.cc), decoded
  // (api::DecodeUserRequest); a change is audited as an AWS action's.
  Result<Reply> Users(const Caller& caller, const api::UserRequest& request);
  // A mutating call refused before it reached the controller (a body that is not JSON, too deep,
  // too large, not UTF-8, a field the decoder refused): its audit record. `audited_action` as
  // audit records name actions ("batch:SubmitServiceJob", api::AuditedActionOf); "" for a read,
  // which is not audited. `target`: where the request was aimed, when it could be read
  // (api::TargetOf).
  void AuditRefusal(const Caller& caller, const std::string& audited_action,
                    const std::string& message, const api::RefusalTarget& target = {});
  // GET /allot/v1/audit: the newest records first that match the request, at most its
  // maxResults, older than its nextToken (the page before's).
  Result<Reply> Audit(const Caller& caller, const api::AuditRequest& request);

  // GET /allot/v1/jobs/{id}/logs: a stream of a host in an attempt, from a byte offset;
  // kInvalidArgument for an unknown job, attempt, host or stream.
  Result<Reply> Logs(const api::LogsRequest& request, const Caller& caller = Caller::System());
  // GET /allot/v1/jobs/{id}/explain (explain_ops.cc): why the job waits, or why it was
  // preempted, as data and as a summary; for a caller allowed to describe the job.
  Result<Reply> Explain(const Caller& caller, const std::string& job);
  // POST /allot/v1/whatif (whatif_ops.cc): what the engine would decide now for a submission, a
  // priority change or a quota-share update, for a caller allowed to make it; changes nothing.
  Result<Reply> WhatIf(const Caller& caller, const api::WhatIfRequest& request);

  const Options& options() const { return options_; }
  const std::string& credentials_path() const { return credentials_path_; }

  // GET /metrics (controller_metrics.cc): the counters and histograms, and the engine's usage
  // and the process's figures as of now. Only for a caller with the metrics token.
  std::string MetricsText();
  ServerMetrics& metrics() { return metrics_; }
  const std::string& metrics_token() const { return metrics_token_; }
  // Whether `action` is an AWS action of this server ("submitservicejob"): the metrics label
  // only these, so that requests for unknown paths cannot grow the series without bound.
  static bool IsAction(const std::string& action);

  // Stops the loop and detaches from running processes (they are left to the next start).
  void Shutdown();

  // True while a failed write, or a call refused after the engine took some of it, is being
  // rolled back (every call answers 500 meanwhile).
  bool rolling_back() const { return broken_; }

 private:
  explicit Controller(const Options& options);
  Status Open();
  Status Recover();
  // requires mu_; the ends of stopped attempts with nothing to adopt go to `stops_ended`, for
  // the caller to apply (ApplyStopsEnded) once whatever must come before them has, and then to
  // write all in one batch (Finish): a restored job is never stored without its end.
  Status RecoverLocked(std::vector<model::AttemptEnded>* stops_ended);
  void ApplyStopsEnded(const std::vector<model::AttemptEnded>& stops_ended);  // requires mu_
  Result<std::vector<JobRecord>> LoadJobs();                                  // requires mu_
  // A dispatched attempt under a stop that left nothing to adopt adds its end to `stops_ended`.
  void RecoverJob(JobRecord record, std::vector<model::AttemptEnded>* stops_ended);
  bool AdoptAttempt(JobRecord& job);
  model::RestoreJob::Running RestoreDispatched(JobRecord& job);              // requires mu_
  model::AttemptEnded RestoreLostStoppedAttempt(JobRecord& job);             // requires mu_
  void UntouchIfUnchanged(JobRecord& job, const RestoreSnapshot& original);  // requires mu_
  // The launch details of a job, read from its stored payload (a launch worker or the recovery,
  // without mu_).
  // With `check_paths`, its file:// URIs must still lead under the file roots (LaunchAttempt).
  // The paths are then resolved as `paths_as` (local_paths.h; PathsUser).
  Result<LaunchInfo> ReadLaunchInfo(const std::string& id, const std::string& name,
                                    bool check_paths = false,
                                    const std::optional<exec::JobUser>& paths_as = std::nullopt);
  // ReadLaunchInfo with its file:// paths checked again as the share's jobs reach them
  // (PathsUser; `allocate` as there).
  Result<LaunchInfo> ReadCheckedLaunchInfo(const std::string& id, const std::string& name,
                                           const std::string& queue, const std::string& share,
                                           bool allocate);
  // Whom a share's file:// paths are checked as (local_paths.h CheckLocalPaths): the user its
  // jobs run as, when they run as one of their own (the sandbox on a root server); nullopt when
  // they run as the server's user. `allocate` (a launch): a share without a uid gets it now, as
  // the launch would; otherwise (a submission, under mu_) one without a uid yet is checked as
  // nobody, who owns no directory and is in no group.
  Result<std::optional<exec::JobUser>> PathsUser(const std::string& queue, const std::string& share,
                                                 bool allocate);
  // PathsUser for a share whose stored user (StoredShareUser) was read already.
  std::optional<exec::JobUser> PathsUserOf(const std::optional<exec::JobUser>& stored) const;
  // checkpoint_claims_ emptied (read again from the store when needed), the restored live jobs'
  // locations resolved as their share's user (PathsUser).
  void ResetCheckpointClaims();

  // --- under mu_ ---
  Timestamp Now() const;
  // A caller's event: the engine's refusal is the caller's (kInvalidArgument). Its decisions
  // are applied either way. Counts the events the engine accepts (applied_events_).
  Status Apply(const model::Event& event);
  // An event without a caller (an executor report, a tick, a restore): a refusal is logged.
  void ApplyBackground(const model::Event& event);
  Status ApplyEvent(const model::Event& event);  // the engine's own status
  void ApplyDecisions(const model::Decisions& decisions);
  Reply Finish();  // submits the pending batch and effects
  void Touch(JobRecord& job);
  JobRecord* FindJob(const std::string& id_or_arn);
  Result<JobRecord*> JobNamed(const std::string& id_or_arn);  // a refusal when there is none
  JobRecord* JobBySeq(model::JobId seq);
  // Every change of a job's status goes through here, so the list index follows it.
  void SetJobStatus(JobRecord& job, model::JobStatus status);
  void IndexJob(const JobRecord& job);  // a new or recovered job: into the list index
  void UnindexJob(const JobRecord& job);

  Result<Reply> TagsLocked(const api::TagsRequest& request);  // requires mu_
  Result<Reply> ReadLogs(const api::LogsRequest& request, const Caller& caller);

  // config_ops.cc
  Result<Reply> Handle(const api::CreateServiceEnvironmentRequest& r);
  Result<Reply> Handle(const api::UpdateServiceEnvironmentRequest& r);
  Result<Reply> Handle(const api::DescribeServiceEnvironmentsRequest& r);
  Result<Reply> Handle(const api::DeleteServiceEnvironmentRequest& r);
  Result<Reply> Handle(const api::CreateSchedulingPolicyRequest& r);
  Result<Reply> Handle(const api::UpdateSchedulingPolicyRequest& r);
  Result<Reply> Handle(const api::DescribeSchedulingPoliciesRequest& r);
  Result<Reply> Handle(const api::ListSchedulingPoliciesRequest& r);
  Result<Reply> Handle(const api::DeleteSchedulingPolicyRequest& r);
  Result<Reply> Handle(const api::CreateJobQueueRequest& r);
  Result<Reply> Handle(const api::UpdateJobQueueRequest& r);
  Result<Reply> Handle(const api::DescribeJobQueuesRequest& r);
  Result<Reply> Handle(const api::DeleteJobQueueRequest& r);
  Result<Reply> Handle(const api::CreateQuotaShareRequest& r);
  Result<Reply> Handle(const api::UpdateQuotaShareRequest& r);
  Result<Reply> Handle(const api::DescribeQuotaShareRequest& r);
  Result<Reply> Handle(const api::ListQuotaSharesRequest& r);
  Result<Reply> Handle(const api::DeleteQuotaShareRequest& r);
  Status PutEnvironmentToEngine(const ServiceEnvironmentRecord& env);
  Status PutQueueToEngine(const JobQueueRecord& queue);
  Status PutShareToEngine(const QuotaShareRecord& share);
  Status PutImplicitShare(const JobQueueRecord& queue);
  JobQueueRecord* FindQueue(const std::string& name);
  Result<JobQueueRecord*> QueueNamed(const api::NameOrArn& queue);  // a refusal when none
  ServiceEnvironmentRecord* FindEnvironment(const std::string& name);
  SchedulingPolicyRecord* FindPolicy(const std::string& name);
  Result<QuotaShareRecord*> ShareNamed(const api::ShareArn& share);
  const SchedulingPolicyRecord* PolicyOf(const JobQueueRecord& queue) const;  // null: none
  const JobQueueRecord* QueueUsing(const SchedulingPolicyRecord& policy) const;
  bool IsQuotaManaged(const JobQueueRecord& queue) const;

  // job_ops.cc
  std::string TokenKey(const std::string& queue, const std::string& token) const;
  Result<Reply> Handle(const api::SubmitServiceJobRequest& r);
  Result<Reply> Handle(const api::UpdateServiceJobRequest& r);
  Result<Reply> Handle(const api::DescribeServiceJobRequest& r);
  Result<Reply> Handle(const api::ListServiceJobsRequest& r);
  Result<Reply> Handle(const api::TerminateServiceJobRequest& r);
  Result<Reply> Handle(const api::GetJobQueueSnapshotRequest& r);

  // explain_ops.cc, whatif_ops.cc (require mu_ and caller_)
  api::ExplainResponse ExplainJob(const JobRecord& job);
  api::WaitExplanation WaitExplanationOf(const model::WaitReason& why, const std::string& share);
  std::string WaitingSummary(const model::WaitReason& why, const std::string& share) const;
  // The one sentence a RUNNABLE job's statusReason carries (Describe, List): cheap.
  std::string RunnableReason(const JobRecord& job) const;
  std::optional<RunnerUpRecord> RunnerUpOf(const model::Preemption& p);
  // Whether the caller may see the job `id` by id and name: when it may describe it; a job no
  // longer here only to the system.
  bool MayName(const std::string& id);
  // Its id and name only when the caller may describe the job.
  api::JobReference JobReferenceOf(const JobRef& ref);
  // Unnames in Describe's extensions the preemptors, runners-up and victims the caller may not
  // describe (their shares stay).
  void RedactPreemptionRecords(api::JobExtensions& allot);
  Result<Reply> WhatIfLocked(const api::WhatIfRequest& request);
  Result<model::Event> WhatIfEvent(const api::WhatIfRequest& request, model::JobId* subject,
                                   std::string* share);
  api::WhatIfVictim WhatIfVictimOf(const model::VictimRecord& v, const JobRecord* preemptor);
  // config_ops.cc: what each configuration update would leave, unchecked
  Result<QuotaShareRecord> UpdatedShare(const api::UpdateQuotaShareRequest& r);
  static ServiceEnvironmentRecord UpdatedEnvironment(const ServiceEnvironmentRecord& env,
                                                     const api::UpdateServiceEnvironmentRequest& r);
  JobQueueRecord UpdatedQueue(const JobQueueRecord& queue, const api::UpdateJobQueueRequest& r);

  // decisions.cc
  void OnDispatch(JobRecord& job, const model::Dispatch& d);
  void OnStatus(JobRecord& job, const model::StatusChanged& s);
  void CountStatus(const JobRecord& job, const model::StatusChanged& s, Timestamp now);  // metrics
  void OnPreempted(JobRecord& job, const model::PreemptedAttempt& p);
  void OnPreemption(const model::Preemption& p);
  void LaunchAttempt(model::JobId seq, int attempt);
  // The loop's effects for an attempt's launch and stop (launches.cc): launches run on launch
  // workers, and a stop that comes while its attempt waits or launches waits for the launch.
  void StartLaunch(model::JobId seq, int attempt, const std::string& share);  // "queue/share"
  void StopAttempt(model::JobId seq, int attempt, Duration grace, model::StopKind kind);
  void RunLaunch(model::JobId seq, int attempt);          // on a launch worker, then its stops
  bool StopPending(model::JobId seq, int attempt);        // a stop came while it waited to launch
  bool LaunchStillWanted(model::JobId seq, int attempt);  // else its end is reported
  void ReportNotLaunched(model::JobId seq, int attempt);  // an attempt stopped before it began
  bool ShuttingDown();                                    // Shutdown began
  void AwaitLaunches();  // until no launch waits or runs (Shutdown, RebuildIfBroken)
  void ExecutorStarted(model::JobId seq, int attempt, const std::vector<exec::HostProcess>& hosts);
  void ExecutorSubmitted(model::JobId seq, int attempt, const std::string& ref);
  // The executor Options::executor names (executors.cc); the Slurm one checks its cluster first.
  Result<std::unique_ptr<exec::Executor>> MakeExecutor(exec::Callbacks callbacks);
  // Per instance type, the largest maxCapacity of any service environment (the Slurm
  // executor's node check).
  std::map<std::string, int> RequiredInstances();
  void ExecutorEnded(const exec::AttemptExit& exit);
  void ExecutorCheckpoint(model::JobId seq, int attempt, Timestamp newest);
  std::string JobDir(const std::string& id) const;
  std::string AttemptDir(const std::string& id, int attempt) const;

  // --- tenancy (authorize.cc, users_ops.cc) ---
  // Runs one call under mu_ as `caller`: `authorize`, then `body`, each refusing by its Status;
  // records the audit record of a mutating call (`audited_action` not empty) whatever the
  // outcome, and finishes the batch. A call refused after the engine accepted one of its events
  // is a fault: answered 500, and rolled back to what the store holds (RollBackRefusedCall).
  Result<Reply> RunAs(const Caller& caller, const std::string& audited_action,
                      const std::function<Status()>& authorize,
                      const std::function<Result<Reply>()>& body);
  Status AuthorizeCall(const api::Request& request);  // requires mu_, caller_
  void NoteTarget(const api::RefusalTarget& target);  // requires mu_: into audit_
  template <typename R>
  Status Authorize(const R& request);  // authorize.cc: the resources AWS names for R's action
  // kPermissionDenied (AWS's message) unless the caller's policy allows `action` (e.g.
  // "batch:DescribeJobQueues") on `resource`; `job`, when given, adds its share to the request's
  // condition keys.
  Status Allowed(const Caller& caller, const std::string& action, const std::string& resource,
                 const JobRecord* job, std::optional<std::int64_t> priority) const;
  auth::Decision Decide(const Caller& caller, const std::string& action,
                        const std::string& resource, const JobRecord* job,
                        std::optional<std::int64_t> priority) const;
  // The audit record's changes: each of `fields` whose value differs between the record before
  // (`old_doc`) and as the update would leave it (`new_doc`).
  void NoteChanges(const Json& old_doc, std::initializer_list<const char*> fields,
                   const Json& new_doc);
  void NoteUpdate(const api::UpdateServiceEnvironmentRequest& r);  // NoteChanges of each update
  void NoteUpdate(const api::UpdateJobQueueRequest& r);
  void NoteUpdate(const api::UpdateQuotaShareRequest& r);
  bool CanDescribe(const JobRecord& job) const;  // requires mu_, caller_
  // DescribeServiceJob's decision, for a job record or for a job known by id and share only
  // (it may be gone).
  bool MayDescribeJob(const Caller& caller, const JobRecord& job) const;
  bool MayDescribeJob(const Caller& caller, const std::string& id, std::string_view share) const;
  std::string ResourceArn(const std::string& prefix, const api::NameOrArn& resource) const;
  std::string TaggedArn(const api::TaggedResource& resource) const;  // the server's own ARN
  void AddAudit(const std::string& outcome);  // requires mu_: audit_ into pending_
  Status LoadUsers();                         // requires mu_
  Status EnsureAdmin();                       // at first start; migrates bare access keys
  Status PutUser(const UserRecord& user);     // requires mu_: into users_ and pending_
  void PruneAudit();                          // requires mu_: drops records past retention
  Result<std::map<std::string, UserRecord>::iterator> UserNamed(const std::string& name);
  api::NewAccessKeyResponse NewKeyAnswer(const UserRecord& user, const api::Credentials& key) const;
  Result<Reply> Handle(const api::ListUsersRequest& r);
  Result<Reply> Handle(const api::GetUserRequest& r);
  Result<Reply> Handle(const api::CreateUserRequest& r);
  Result<Reply> Handle(const api::DeleteUserRequest& r);
  Result<Reply> Handle(const api::GetUserPolicyRequest& r);
  Result<Reply> Handle(const api::PutUserPolicyRequest& r);
  Result<Reply> Handle(const api::RotateAccessKeysRequest& r);
  std::optional<api::SecretBox> box_;
  std::map<std::string, UserRecord> users_;                 // guarded by mu_
  std::unordered_map<std::string, std::string> key_owner_;  // guarded by mu_: key id -> user
  const Caller* caller_ = nullptr;                          // guarded by mu_: the running call
  std::optional<AuditRecord> audit_;                        // guarded by mu_: its record
  std::uint64_t next_audit_seq_ = 1;                        // guarded by mu_
  // Guarded by mu_: the events of the running call the engine accepted (Apply; RunAs reads it).
  int applied_events_ = 0;

  // --- durability (durability.cc) ---
  // A batch the store failed (a full disk, an I/O error) is never half-applied: the store fails
  // every later batch too until Resume() (store.h), every call answers 500 meanwhile, and the
  // loop rolls the controller back by reloading what the store holds (TryRebuild), then applies
  // again the executor reports that were not yet durable, so an exit status is never lost.
  std::atomic<bool> broken_{false};
  Duration rebuild_backoff_ = 0;  // loop thread only
  Timestamp next_rebuild_ = 0;    // loop thread only
  struct Report {
    std::uint64_t id = 0;
    std::function<void()> apply;  // runs under mu_
  };
  std::deque<Report> reports_;  // guarded by mu_: executor reports not yet known durable
  std::uint64_t next_report_id_ = 1;
  std::atomic<std::uint64_t> durable_report_id_{0};
  Durable last_batch_;  // guarded by mu_: the newest batch submitted
  // Applies an executor report now (unless broken) and keeps it until a batch holding it commits.
  void RecordReport(std::function<void()> apply);  // requires mu_
  Durable Refused() const;                         // the 500 every call gets while broken
  void ResetState();                               // requires mu_
  bool TryRebuild();                               // requires mu_; loop thread
  void RebuildIfBroken();                          // loop thread
  // The store's reserve (Options::store_reserve_bytes) goes when the rollback's probe fails:
  // true when it was there, so the probe is worth trying again.
  bool ReleaseStoreReserve(const Status& failure);  // loop thread
  // While the reserve is out, the engine dispatches (and preempts) nothing.
  void HoldDispatchesForRoom();  // requires mu_
  void ReleaseDispatchHold();    // loop thread
  std::string StoreReservePath() const { return data_dir_ + "/store-reserve"; }
  Result<DiskUsage> DataDirUsage() const;   // job_files.cc
  Result<DiskUsage> JobsDiskUsage() const;  // as the marks read it (job_files.cc)
  int EvictionMark() const;                 // job_files.cc
  bool JobsShareTheDataDir() const;         // job_files.cc
  static bool FreesTheStore(const std::string& audited_action);
  Durable DiskFull() const;  // the 500 such a change gets meanwhile
  // A call refused after the engine accepted some of its events: drops what it left pending and
  // has the loop roll back to what the store holds, as after a failed write. Requires mu_.
  void RollBackRefusedCall(const Status& refusal, const std::string& audited_action);

  // --- usage history and job events (history.cc, history_ops.cc) ---
 public:
  // GET /allot/v1/report, /allot/v1/history/usage and /allot/v1/history/jobs, decoded
  // (api::DecodeHistory): resolves the request's ages against Now().
  Result<Reply> HistoryCall(const Caller& caller, const api::HistoryRequest& request);

 private:
  void StartHistory();                                                 // before the loop starts
  void NoteDecision(const model::Decision& d, const JobRecord* job);   // requires mu_
  void NotePriority(const JobRecord& job, std::int32_t old_priority);  // requires mu_
  void NoteEvent(JobEvent event, const JobRecord& job);                // requires mu_
  Timestamp SampleUsageIfDue();      // requires mu_; loop thread; the next sample's time
  void PruneHistory(Timestamp now);  // requires mu_
  HistoryState history_;             // guarded by mu_

  // Runs on the loop thread after the batch holding it committed.
  using Effect = std::function<void()>;
  void Post(Effect effect);
  void Loop();
  void WakeLoopIfEarlierDeadline();  // requires mu_
  void RearmLoop();                  // the loop reads its deadlines again (not under loop_mu_)

  // ARNs
  std::string Arn(const std::string& resource) const;

  const Options options_;
  const ArnContext arns_;
  ServerMetrics metrics_;      // before store_: its writer reports commits into it
  std::string metrics_token_;  // Options::metrics_token_file's, or <data-dir>/metrics-token
  std::string credentials_path_;
  std::string data_dir_;  // options_.data_dir, absolute
  // Host-map slots in use, per instance type (slots.cc).
  std::map<std::string, std::vector<bool>> slots_in_use_;
  void TakeSlots(JobRecord& job);
  void ReleaseSlots(JobRecord& job);
  void MarkSlotsTaken(const JobRecord& job);  // an adopted attempt keeps the slots it recorded
  std::vector<exec::LaunchSpec::HostSlot> SlotsOf(const JobRecord& job) const;
  std::string self_exe_;  // this binary, which also runs the per-host supervisors
  int lock_fd_ = -1;      // flock on <data-dir>/server.lock
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<exec::Executor> executor_;
  std::string jobs_root_;  // <jobs_root_>/jobs/<id>: data_dir_, or the Slurm executor's shared dir

  std::mutex mu_;
  engine::Engine engine_;
  // Configuration by name (config_records.h); shares by QuotaShareRecord::Key(), "queue/share".
  std::map<std::string, ServiceEnvironmentRecord> environments_;
  std::map<std::string, SchedulingPolicyRecord> policies_;
  std::map<std::string, JobQueueRecord> queues_;
  std::map<std::string, QuotaShareRecord> shares_;
  // By sequence; nodes never move, so job_ids_ and the list index point into the records.
  std::unordered_map<model::JobId, JobRecord> jobs_;
  std::unordered_map<std::string_view, model::JobId> job_ids_;  // the records' own ids
  // Requires mu_; `listed`: into the list index (not a job whose queue was deleted).
  JobRecord& AddJob(JobRecord record, bool listed = true);
  void DropJob(model::JobId seq);  // requires mu_
  // Queue and share names the job records point to; never shrinks (names are few).
  std::set<std::string, std::less<>> names_;
  std::string_view Intern(std::string_view name);
  ListIndex list_index_;  // ListServiceJobs' orders (list_index.h)
  std::map<std::string, std::pair<std::string, std::string>> client_tokens_;  // -> id, hash
  CheckpointClaims checkpoint_claims_;  // which job uses which file:// location
  model::JobId next_seq_ = 1;
  store::Batch pending_;
  std::vector<Effect> pending_effects_;
  std::set<model::JobId> touched_;  // jobs to write in the pending batch

  std::mutex loop_mu_;
  std::condition_variable loop_cv_;
  std::deque<Effect> loop_queue_;
  bool stopping_ = false;
  bool rearm_ = false;  // guarded by loop_mu_: the engine's next deadline moved earlier
  static constexpr Timestamp kNoDeadline = std::numeric_limits<Timestamp>::max();
  Timestamp armed_deadline_ = kNoDeadline;  // guarded by mu_: what the loop sleeps until
  std::thread loop_;
  // The launches in flight, each with the stop that came for it meanwhile (launches.cc).
  struct PendingStop {
    Duration grace = 0;
    model::StopKind kind{};
  };
  std::mutex launches_mu_;
  using LaunchKey = std::pair<model::JobId, int>;  // (job, attempt)
  struct Launching {
    std::optional<PendingStop> stop;
    bool begun = false;  // a worker runs it; before, a stop takes it back (StopAttempt)
  };
  std::map<LaunchKey, Launching> launching_;  // queued or running
  // A few long restores hold up no other launch, and a burst of dispatches does not start a
  // thread each; one share's restores take at most a quarter of the workers, so a team whose
  // checkpoints are huge (or whose location holds its copies up) holds up its own launches, not
  // every team's. Last: it ends first, waiting for the launches that use what is above.
  static constexpr int kMaxLaunchWorkers = 32;
  static constexpr int kMaxLaunchesPerShare = 8;
  env::WorkerPool launch_workers_{kMaxLaunchWorkers};

  // --- finished jobs' files (job_files.cc) ---
  // A job's tree is measured once it ended, and finished trees are removed when the jobs' file
  // system runs short (Options::job_files_high_percent), on one worker of their own, so a walk
  // of a large tree holds up neither the loop nor a launch.
  void NoteFinishedTree(const JobRecord& job);  // requires mu_: a restored job that ended
  void MeasureWhenEnded(model::JobId seq);      // loop thread: the job ended, its batch durable
  Timestamp CheckJobFilesIfDue();               // loop thread, under mu_: the next check's time
  void PostJobFilesCheck();
  void CheckJobFiles();      // on files_worker_, as all below
  void CheckJobFilesSoon();  // the disk is short: the next check within kShortCheckInterval
  void KeepStoreReserve();   // made again once the data directory has room
  void MeasureEndedTrees();
  void RemoveTreesIfShort();
  void SayDiskShort(const DiskUsage& usage);
  // Past the eviction mark: terminates the job PickEviction names, unless EvictionUnderway.
  void EvictIfFull(DiskUsage usage);
  bool EvictionUnderway(const JobRecord& job) const;  // requires mu_
  void NoteEviction(const JobRecord& job);            // requires mu_: a restored job's
  std::int64_t ChargedBytes(const JobRecord& job, std::int64_t measured, bool complete) const;
  // `fresh`: none taken from the cache.
  std::map<std::string, std::int64_t> MeasureLiveTrees(bool fresh = false);
  void RemoveFinishedTree(int jobs_dir_fd, const FinishedTrees::Tree& tree, double used_percent);
  FinishedTrees finished_trees_;         // guarded by mu_
  std::deque<model::JobId> to_measure_;  // guarded by mu_
  Timestamp next_files_check_ = 0;       // guarded by mu_
  model::JobId evicted_ = 0;  // guarded by mu_: the job last terminated for the disk (job_files.cc)
  // files_worker_ only: when a removal that failed is tried again (its tree still counts).
  std::map<model::JobId, Timestamp> remove_retry_at_;
  static constexpr int kRemoveRetryChecks = 6;
  // files_worker_ only: each live tree's last measure (MeasureLiveTrees).
  struct LiveMeasure {
    std::int64_t bytes = 0;
    Timestamp at = 0;
  };
  std::map<model::JobId, LiveMeasure> live_measures_;
  static constexpr Duration kLiveMeasureAge = Seconds(300);
  static constexpr Duration kShortCheckInterval = Seconds(1);
  // files_worker_ only: an eviction's fresh walk that found the live trees holding less than the
  // excess is not walked again before this (the check interval later).
  Timestamp no_eviction_walk_until_ = 0;
  bool files_short_said_ = false;            // files_worker_ only: the warning, once per episode
  std::atomic<bool> files_stopping_{false};  // Shutdown: walks end early
  std::atomic<bool> files_check_queued_{false};
  // From the store's reserve's release until it is made again (KeepStoreReserve): the room it
  // left is for what frees the disk, so a caller's change other than a termination is refused
  // (FreesTheStore, DiskFull: durability.cc).
  std::atomic<bool> store_reserve_out_{false};
  bool reserve_wait_said_ = false;  // files_worker_ only: the wait for room, said once a release
  env::WorkerPool files_worker_{1};
};

}  // namespace allot::server
