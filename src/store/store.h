#pragma once

// The durable store behind the server: records (kind, key) -> value, written in batches.
// A batch is atomic. Commit() returns only after the batch's transaction is durable on disk, so
// a crash at any instant loses no batch whose Commit() returned. Batches commit in the order they
// were submitted; one writer thread groups concurrent batches into one transaction.
//
// Thread-safety: every method may be called from any thread.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace allot::store {

enum class Kind : std::uint8_t {
  kMeta = 0,                // server settings (e.g. the next job sequence)
  kCredential = 1,          // access key id -> secret
  kServiceEnvironment = 2,  // name -> JSON document
  kSchedulingPolicy = 3,
  kJobQueue = 4,
  kQuotaShare = 5,   // "queue/share" -> JSON document
  kJob = 6,          // job id -> JSON document (without payload)
  kJobPayload = 7,   // job id -> serviceRequestPayload
  kClientToken = 8,  // "queue/token" -> job id + request hash
  kUser = 9,         // user name -> its access keys (secrets sealed) and policy
  kAudit = 10,       // zero-padded sequence number -> one audit record
  // Usage history and job lifecycle events (server/history_codec.h); keys sort by time.
  kUsageSample = 20,  // "<resolution>/<ms, 13 digits>/<queue>" -> every share and unit of it
  kJobEvent = 21,     // "<ms, 13 digits>/<sequence, 12 digits>" -> one lifecycle event
  // "<queue/share>\n<canonical location>" -> "<job seq>\n<job id>": the newest job of the share
  // whose checkpoint location it is (server/checkpoint_claims.h).
  kCheckpointClaim = 22,
};

struct Op {
  Kind kind = Kind::kMeta;
  std::string key;
  std::optional<std::string> value;  // nullopt deletes the record
};

struct Batch {
  std::vector<Op> ops;

  void Put(Kind kind, std::string key, std::string value) {
    ops.push_back({kind, std::move(key), std::move(value)});
  }
  void Delete(Kind kind, std::string key) { ops.push_back({kind, std::move(key), std::nullopt}); }
  bool empty() const { return ops.empty(); }
};

struct Record {
  std::string key;
  std::string value;
};

// Keys in [from, to) (an empty bound is open), at most `limit` of them, in key order or, when
// `descending`, from the largest down: a page of a kind whose keys sort by time (the audit).
struct KeyRange {
  std::string from;
  std::string to;
  std::size_t limit = 100;
  bool descending = false;
};

class Store {
 public:
  virtual ~Store() = default;

  // Queues `batch` for the writer; `done` runs on the writer thread once the transaction that
  // holds it committed (OK) or failed.
  //
  // A failure is sticky (as leveldb's background error): once a transaction fails, every batch
  // queued behind it and every batch submitted later fails with the same error, unwritten, until
  // Resume(). A batch is built on the state the batches before it left; it must never commit
  // without them. The caller rolls its own state back to what the store holds, then resumes.
  virtual void Submit(Batch batch, std::function<void(const Status&)> done) = 0;

  // Clears the sticky error: batches submitted from now on are written again.
  virtual void Resume() = 0;

  // Submit() and wait: returns once durable.
  Status Commit(Batch batch);

  // Every record of `kind`, ordered by key.
  virtual Result<std::vector<Record>> Load(Kind kind) = 0;
  // Every record of `kind`, in no particular order: for a kind that is most of the store (the
  // jobs), a store may read it faster than in key order.
  virtual Result<std::vector<Record>> Scan(Kind kind) { return Load(kind); }
  virtual Result<std::optional<std::string>> Get(Kind kind, std::string_view key) = 0;
  // The records of `kind` within `range` (see KeyRange), read by key: no default, since reading
  // the whole kind made the server's audit prune quadratic behind a wrapper that forgot it.
  virtual Result<std::vector<Record>> Range(Kind kind, const KeyRange& range) = 0;

  // Stops the writer after committing what was submitted.
  virtual void Close() = 0;
};

// Range over Load: the whole kind is read. For small stores made for tests only.
Result<std::vector<Record>> RangeOfLoad(Store& store, Kind kind, const KeyRange& range);

// What one committed transaction took: for the server's metrics, which the store knows nothing of.
struct CommitStats {
  double seconds = 0;       // BEGIN IMMEDIATE to a durable COMMIT
  std::size_t batches = 0;  // batches grouped into it
};

struct SqliteOptions {
  std::string path;  // database file; created with its schema if absent
  std::size_t max_batches_per_commit = 1024;
  // Called on the writer thread after each transaction that wrote and committed, before the
  // batches' `done`; keep it short. Unset: nothing is measured.
  std::function<void(const CommitStats&)> on_commit;
};

// SQLite in WAL mode with synchronous=FULL.
Result<std::unique_ptr<Store>> OpenSqliteStore(const SqliteOptions& options);

}  // namespace allot::store
