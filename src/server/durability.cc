// What the controller does when the store fails a write (controller.h, "durability"): nothing
// that was not stored stays visible, and no executor report is lost.

#include <chrono>
#include <string>
#include <vector>

#include "env/files.h"
#include "server/controller.h"
#include "server/log.h"

namespace allot::server {

namespace {

constexpr Duration kFirstRetry = 250;
constexpr Duration kMaxRetry = Seconds(5);

}  // namespace

void Controller::RecordReport(std::function<void()> apply) {
  const std::uint64_t durable = durable_report_id_.load();
  while (!reports_.empty() && reports_.front().id <= durable) reports_.pop_front();
  reports_.push_back({next_report_id_++, std::move(apply)});
  if (broken_) return;  // applied after the rollback, in order
  reports_.back().apply();
  Finish();
}

Durable Controller::Refused() const {
  return Durable::Ready(
      Status(StatusCode::kUnavailable,
             "the server is rolling back to what its store holds (a write failed, or "
             "a fault) and answers again once the store accepts writes (retry later)"));
}

// The engine holds what the call's accepted events did, and no record does: nothing of the call
// is written but its audit record (RunAs adds it after this), and the loop rebuilds the
// controller from the store (TryRebuild) once that record is durable, as after a failed write.
void Controller::RollBackRefusedCall(const Status& refusal, const std::string& audited_action) {
  log::Error("api.refused_after_engine_change",
             {{"action", audited_action},
              {"engine_events", static_cast<std::int64_t>(applied_events_)},
              {"error", refusal.message()},
              {"then", "rolling back to the store"}});
  pending_ = store::Batch();
  pending_effects_.clear();
  touched_.clear();
  if (!broken_.exchange(true)) Post([this] { RebuildIfBroken(); });
}

void Controller::ResetState() {
  engine_ = engine::Engine();
  // Before the reload restores the jobs: the restore's passes would dispatch.
  if (store_reserve_out_) HoldDispatchesForRoom();
  environments_.clear();
  policies_.clear();
  queues_.clear();
  shares_.clear();
  list_index_.Clear();  // before the records it points into
  job_ids_.clear();
  jobs_.clear();
  client_tokens_.clear();
  ResetCheckpointClaims();  // read again from the store when needed
  users_.clear();
  key_owner_.clear();
  audit_.reset();
  slots_in_use_.clear();
  next_seq_ = 1;
  pending_ = store::Batch();
  pending_effects_.clear();
  last_batch_ = Durable();  // a read after the rollback answers what it reads
  touched_.clear();
  armed_deadline_ = kNoDeadline;
  finished_trees_ = FinishedTrees();
  to_measure_.clear();
  evicted_ = 0;  // the reload finds it again (NoteEviction), unless its batch was the one lost
}

// While the reserve is out no job starts: a new attempt's tree would take the room the jobs'
// ends need. The engine holds its dispatches, so neither does it preempt: a victim stopped then
// would only free capacity for a preemptor that cannot start. Only a rollback releases the
// reserve, and its reload starts from a new engine: the hold is set there (ResetState).
void Controller::HoldDispatchesForRoom() {
  ApplyBackground(model::HoldDispatches{
      .held = true,
      .reason = "its disk is full, and no job starts until it has room again (terminating a "
                "job frees it)"});
}

// On the loop thread, as every launch starts (RebuildIfBroken waits for the launches in flight
// and then reloads): the reserve was made again.
void Controller::ReleaseDispatchHold() {
  std::lock_guard<std::mutex> lock(mu_);
  if (store_reserve_out_ || broken_) return;  // out again, or a rollback's reload decides
  ApplyBackground(model::HoldDispatches{.held = false});
  Finish();
}

// 1. Wait until every batch submitted before has been processed (an empty batch goes through the
//    store's queue behind them), so the store holds all it will ever hold of them.
// 2. Resume the store and probe it with a small write: while that fails (the disk is still
//    full) stay broken and try again later.
// 3. Reload configuration and jobs from the store: the exact committed state. Running attempts
//    the executor still watches are adopted as they are.
// 4. Apply again, in order, the executor reports no committed batch holds; then end the stopped
//    attempts the reload found nothing to adopt of (RestoreLostStoppedAttempt).
bool Controller::TryRebuild() {
  [[maybe_unused]] const Status drained = store_->Commit(store::Batch{});
  store_->Resume();
  auto probe = [this] {
    store::Batch batch;
    batch.Put(store::Kind::kMeta, "last_write_probe", std::to_string(Now()));
    return store_->Commit(std::move(batch));
  };
  Status probed = probe();
  if (!probed.ok() && ReleaseStoreReserve(probed)) {
    store_->Resume();  // the failure is sticky
    probed = probe();
  }
  if (!probed.ok()) {
    log::Warn("store.still_failing", {{"error", probed.message()}});
    return false;
  }
  ResetState();
  std::vector<model::AttemptEnded> stops_ended;
  if (Status s = RecoverLocked(&stops_ended); !s.ok()) {
    log::Error("store.reload_failed", {{"error", s.message()}});
    return false;
  }
  broken_ = false;
  const std::uint64_t durable = durable_report_id_.load();
  for (Report& report : reports_) {
    if (report.id > durable) report.apply();
  }
  ApplyStopsEnded(stops_ended);  // after the reports: an attempt they end keeps their words
  Finish();
  if (store_reserve_out_) PostJobFilesCheck();  // the reserve is made again once there is room
  log::Warn("store.rolled_back",
            {{"replayed_reports", static_cast<std::int64_t>(reports_.size())}});
  return true;
}

// On a full disk nothing else frees it while the store cannot write: a job's end, whose files
// could then be removed, waits for the rollback, and so does an eviction's termination.
bool Controller::ReleaseStoreReserve(const Status& failure) {
  if (options_.store_reserve_bytes <= 0) return false;
  // Only for a full disk: another fault (an I/O error) is not helped by room, and the reserve's
  // absence refuses callers' changes.
  Result<DiskUsage> usage = DataDirUsage();
  if (usage.ok() && usage->available() >= options_.store_reserve_bytes) return false;
  const std::string path = StoreReservePath();
  bool any = false;
  // The temporary file too: one a crash (or a creation the failure raced) left holds the room.
  for (const std::string& file : {path, path + ".tmp"}) {
    Result<bool> released = env::ReleaseSpaceReserve(file);
    if (!released.ok()) {
      log::Error("store.reserve_release_failed", {{"error", released.status().message()}});
      continue;
    }
    any = any || *released;
  }
  if (any) {
    store_reserve_out_ = true;
    log::Warn(
        "store.reserve_released",
        {{"path", path}, {"bytes", options_.store_reserve_bytes}, {"error", failure.message()}});
  }
  return any;
}

// What a caller may still do while the reserve is out: read, and terminate a job, which ends it
// so that its files can go. A deletion would need the queue or environment disabled first, an
// update; and each accepted change writes its audit record into the room the reserve left.
bool Controller::FreesTheStore(const std::string& audited_action) {
  return audited_action.empty() || audited_action == "batch:TerminateServiceJob";
}

Durable Controller::DiskFull() const {
  return Durable::Ready(
      Status(StatusCode::kUnavailable,
             "the server's disk is full: until it has room again it takes only reads and the "
             "termination of jobs, which frees it (retry later)"));
}

void Controller::RebuildIfBroken() {
  if (!broken_ || Now() < next_rebuild_) return;
  // A launch in flight would start its processes after the rollback found none and requeued
  // the job: an attempt nobody tracks, beside its retry. New launches start only from this
  // thread, so none begins meanwhile (and a launch takes mu_: not waited for under it).
  AwaitLaunches();
  std::lock_guard<std::mutex> lock(mu_);
  if (!broken_) return;
  if (TryRebuild()) {
    rebuild_backoff_ = 0;
    next_rebuild_ = 0;
    return;
  }
  rebuild_backoff_ =
      rebuild_backoff_ == 0 ? kFirstRetry : std::min(kMaxRetry, 2 * rebuild_backoff_);
  next_rebuild_ = Now() + rebuild_backoff_;
}

}  // namespace allot::server
