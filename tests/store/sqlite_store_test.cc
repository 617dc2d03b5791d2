#include "store/sqlite_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "store/store.h"
#include "store/support/raw_sql.h"
#include "store/support/scratch_dir.h"

namespace allot::store {
namespace {

using testing::OpenOrDie;
using testing::ScratchDir;

std::string Str(int i) { return std::to_string(i); }

std::optional<std::string> GetOrDie(Store& store, Kind kind, std::string_view key) {
  Result<std::optional<std::string>> value = store.Get(kind, key);
  EXPECT_TRUE(value.ok()) << value.status().ToString();
  return value.ok() ? value.value() : std::nullopt;
}

std::vector<Record> LoadOrDie(Store& store, Kind kind) {
  Result<std::vector<Record>> records = store.Load(kind);
  EXPECT_TRUE(records.ok()) << records.status().ToString();
  return records.ok() ? records.value() : std::vector<Record>();
}

std::vector<std::pair<std::string, std::string>> Pairs(const std::vector<Record>& records) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Record& r : records) out.emplace_back(r.key, r.value);
  return out;
}

// Raw SQL on the database file through a connection of the test's own.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    sqlite3_busy_timeout(db_, 5000);
  }
  ~RawDb() { sqlite3_close_v2(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  void Exec(const std::string& sql) {
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << sql << ": " << (error != nullptr ? error : "");
    sqlite3_free(error);
  }
  std::string Text(const std::string& sql) { return testing::QueryText(db_, sql); }

 private:
  sqlite3* db_ = nullptr;
};

// Holds the writer inside the `done` of an empty batch until Release(), so that batches
// submitted meanwhile all wait in the queue and the next group is known exactly.
class WriterGate {
 public:
  explicit WriterGate(Store& store) {
    std::shared_future<void> release = release_.get_future().share();
    store.Submit({}, [this, release](const Status&) {
      entered_.set_value();
      release.wait();
    });
    entered_.get_future().wait();  // the writer is now in the callback and the queue is empty
  }
  ~WriterGate() { Release(); }
  WriterGate(const WriterGate&) = delete;
  WriterGate& operator=(const WriterGate&) = delete;
  void Release() {
    if (!released_) {
      released_ = true;
      release_.set_value();
    }
  }

 private:
  std::promise<void> entered_;
  std::promise<void> release_;
  bool released_ = false;
};

// Collects the results of Submit()ted batches and waits for them.
class Results {
 public:
  std::function<void(const Status&)> Slot(int id) {
    return [this, id](const Status& status) {
      std::lock_guard<std::mutex> lock(mu_);
      order_.push_back(id);
      statuses_.push_back(status);
      if (--outstanding_ == 0) all_done_.notify_all();
    };
  }
  void Expect(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    outstanding_ += n;
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    all_done_.wait(lock, [this] { return outstanding_ == 0; });
  }
  std::vector<int> order() {
    std::lock_guard<std::mutex> lock(mu_);
    return order_;
  }
  std::vector<Status> statuses() {
    std::lock_guard<std::mutex> lock(mu_);
    return statuses_;
  }

 private:
  std::mutex mu_;
  std::condition_variable all_done_;
  int outstanding_ = 0;
  std::vector<int> order_;
  std::vector<Status> statuses_;
};

TEST(SqliteStore, OpenCreatesSchemaInWalMode) {
  ScratchDir dir;
  const std::string path = dir.File("allot.db");
  auto store = OpenOrDie(path);
  RawDb raw(path);
  EXPECT_EQ(raw.Text("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw.Text("SELECT value FROM meta WHERE name = 'schema_version'"), "1");
  const std::string records_sql =
      raw.Text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'records'");
  // A rowid table: job documents are kilobytes, and SQLite keeps WITHOUT ROWID for small rows.
  EXPECT_NE(records_sql.find("PRIMARY KEY(kind, key))"), std::string::npos) << records_sql;
  EXPECT_EQ(records_sql.find("WITHOUT ROWID"), std::string::npos) << records_sql;
  EXPECT_EQ(store->transactions(), 0U);
}

TEST(SqliteStore, PutThenGetThroughTheInterface) {
  ScratchDir dir;
  Result<std::unique_ptr<Store>> opened = OpenSqliteStore({.path = dir.File("allot.db")});
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Store& store = *opened.value();
  Batch batch;
  batch.Put(Kind::kJob, "job-1", R"({"state":"SUBMITTED"})");
  batch.Put(Kind::kJobPayload, "job-1", "payload");
  ASSERT_TRUE(store.Commit(std::move(batch)).ok());
  EXPECT_EQ(GetOrDie(store, Kind::kJob, "job-1"), R"({"state":"SUBMITTED"})");
  EXPECT_EQ(GetOrDie(store, Kind::kJobPayload, "job-1"), "payload");
  EXPECT_EQ(GetOrDie(store, Kind::kJob, "job-2"), std::nullopt);
  EXPECT_EQ(GetOrDie(store, Kind::kMeta, "job-1"), std::nullopt);  // kinds are separate spaces
}

TEST(SqliteStore, LoadReturnsOneKindOrderedByKey) {
  ScratchDir dir;
  auto store = OpenOrDie(dir.File("allot.db"));
  Batch batch;
  for (const char* key : {"m", "b", "zz", "a", "B", "ba", ""}) {
    batch.Put(Kind::kJobQueue, key, std::string("v") + key);
  }
  batch.Put(Kind::kJob, "c", "other kind");
  batch.Put(Kind::kQuotaShare, "q/s", "{}");
  ASSERT_TRUE(store->Commit(std::move(batch)).ok());
  using P = std::pair<std::string, std::string>;
  // Byte order: "" < "B" < "a" < "b" < "ba" < "m" < "zz".
  EXPECT_EQ(Pairs(LoadOrDie(*store, Kind::kJobQueue)), (std::vector<P>{{"", "v"},
                                                                       {"B", "vB"},
                                                                       {"a", "va"},
                                                                       {"b", "vb"},
                                                                       {"ba", "vba"},
                                                                       {"m", "vm"},
                                                                       {"zz", "vzz"}}));
  EXPECT_EQ(Pairs(LoadOrDie(*store, Kind::kJob)), (std::vector<P>{{"c", "other kind"}}));
  EXPECT_TRUE(LoadOrDie(*store, Kind::kCredential).empty());
}

// Scan reads the same records as Load, of one kind only, with later updates and deletes seen.
TEST(SqliteStore, ScanReturnsTheRecordsOfOneKindInAnyOrder) {
  ScratchDir dir;
  auto store = OpenOrDie(dir.File("allot.db"));
  Batch batch;
  for (int i = 0; i < 50; ++i) {
    batch.Put(Kind::kJob, "job-" + std::to_string(i), "v" + std::to_string(i));
    batch.Put(Kind::kJobPayload, "job-" + std::to_string(i), "payload");
  }
  batch.Put(Kind::kJob, "job-7", "updated");
  batch.Delete(Kind::kJob, "job-8");
  ASSERT_TRUE(store->Commit(std::move(batch)).ok());
  Result<std::vector<Record>> scanned = store->Scan(Kind::kJob);
  ASSERT_TRUE(scanned.ok()) << scanned.status().ToString();
  std::vector<std::pair<std::string, std::string>> pairs = Pairs(scanned.value());
  std::sort(pairs.begin(), pairs.end());
  EXPECT_EQ(pairs, Pairs(LoadOrDie(*store, Kind::kJob)));
  EXPECT_EQ(pairs.size(), 49u);
  store->Close();
  EXPECT_EQ(store->Scan(Kind::kJob).status().code(), StatusCode::kUnavailable);
}

// The SQLite range read and the Store default (over Load) give the same pages.
TEST(SqliteStore, RangeReadsAPageInEitherDirectionWithinBounds) {
  ScratchDir dir;
  auto store = OpenOrDie(dir.File("allot.db"));
  Batch batch;
  for (int i = 0; i < 10; ++i) batch.Put(Kind::kAudit, "k" + std::to_string(i), std::to_string(i));
  batch.Put(Kind::kJob, "k5", "another kind");
  ASSERT_TRUE(store->Commit(std::move(batch)).ok());
  struct Case {
    KeyRange range;
    std::vector<std::string> keys;
  };
  const Case cases[] = {
      {{.from = "", .to = "", .limit = 3, .descending = false}, {"k0", "k1", "k2"}},
      {{.from = "", .to = "", .limit = 3, .descending = true}, {"k9", "k8", "k7"}},
      {{.from = "k3", .to = "k6", .limit = 10, .descending = false}, {"k3", "k4", "k5"}},
      {{.from = "k3", .to = "k6", .limit = 2, .descending = true}, {"k5", "k4"}},
      {{.from = "", .to = "k2", .limit = 10, .descending = true}, {"k1", "k0"}},
      {{.from = "z", .to = "", .limit = 10, .descending = false}, {}},
  };
  for (const Case& c : cases) {
    Result<std::vector<Record>> page = store->Range(Kind::kAudit, c.range);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    std::vector<std::string> keys;
    for (const Record& r : page.value()) keys.push_back(r.key);
    EXPECT_EQ(keys, c.keys);
    Result<std::vector<Record>> fallback = RangeOfLoad(*store, Kind::kAudit, c.range);
    ASSERT_TRUE(fallback.ok());
    EXPECT_EQ(Pairs(fallback.value()), Pairs(page.value()));
  }
}

TEST(SqliteStore, BatchWithDeletesAppliesEveryOpInOrder) {
  ScratchDir dir;
  auto store = OpenOrDie(dir.File("allot.db"));
  Batch first;
  first.Put(Kind::kJob, "a", "1");
  first.Put(Kind::kJob, "b", "1");
  first.Put(Kind::kJob, "c", "1");
  ASSERT_TRUE(store->Commit(std::move(first)).ok());

  Batch second;
  second.Delete(Kind::kJob, "b");
  second.Put(Kind::kJob, "a", "2");  // overwrite
  second.Put(Kind::kJob, "d", "2");
  second.Delete(Kind::kJob, "never-there");  // deleting an absent record is not an error
  second.Put(Kind::kJob, "e", "temp");
  second.Delete(Kind::kJob, "e");  // put then delete in one batch: gone
  second.Delete(Kind::kJob, "c");
  second.Put(Kind::kJob, "c", "3");  // delete then put: present
  ASSERT_TRUE(store->Commit(std::move(second)).ok());

  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(Pairs(LoadOrDie(*store, Kind::kJob)),
            (std::vector<P>{{"a", "2"}, {"c", "3"}, {"d", "2"}}));
}

TEST(SqliteStore, KeysAndValuesRoundTripAsBytes) {
  ScratchDir dir;
  auto store = OpenOrDie(dir.File("allot.db"));
  const std::string key("k\0ey", 4);
  const std::string value("\0\xff\xfe{\"x\":1}\n\0", 12);
  const std::string big(1 << 20, 'x');
  Batch batch;
  batch.Put(Kind::kJobPayload, key, value);
  batch.Put(Kind::kJobPayload, "empty", "");
  batch.Put(Kind::kJobPayload, "big", big);
  batch.Put(Kind::kJobPayload, "\xc3\xa9t\xc3\xa9", "utf-8");
  ASSERT_TRUE(store->Commit(std::move(batch)).ok());
  EXPECT_EQ(GetOrDie(*store, Kind::kJobPayload, key), value);
  EXPECT_EQ(GetOrDie(*store, Kind::kJobPayload, std::string("k", 1)), std::nullopt);
  EXPECT_EQ(GetOrDie(*store, Kind::kJobPayload, "empty"), std::string());  // present, empty
  EXPECT_EQ(GetOrDie(*store, Kind::kJobPayload, "big"), big);
  EXPECT_EQ(GetOrDie(*store, Kind::kJobPayload, "\xc3\xa9t\xc3\xa9"), "utf-8");
  const std::vector<Record> all = LoadOrDie(*store, Kind::kJobPayload);
  ASSERT_EQ(all.size(), 4U);
  EXPECT_EQ(all[2].key, key);
  EXPECT_EQ(all[2].value, value);
}

TEST(SqliteStore, BatchesCommitAndCallBackInSubmissionOrder) {
  ScratchDir dir;
  auto store = OpenOrDie(dir.File("allot.db"));
  constexpr int kBatches = 500;
  Results results;
  results.Expect(kBatches);
  for (int i = 0; i < kBatches; ++i) {
    Batch batch;
    batch.Put(Kind::kMeta, "last", Str(i));  // the last submitted must win
    batch.Put(Kind::kJob, "job-" + Str(i), Str(i));
    if (i > 0) batch.Delete(Kind::kJob, "job-" + Str(i - 1));  // only the newest stays
    store->Submit(std::move(batch), results.Slot(i));
  }
  results.Wait();
  std::vector<int> expected(kBatches);
  for (int i = 0; i < kBatches; ++i) expected[static_cast<std::size_t>(i)] = i;
  EXPECT_EQ(results.order(), expected);
  for (const Status& s : results.statuses()) EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(GetOrDie(*store, Kind::kMeta, "last"), Str(kBatches - 1));
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(Pairs(LoadOrDie(*store, Kind::kJob)),
            (std::vector<P>{{"job-" + Str(kBatches - 1), Str(kBatches - 1)}}));
  EXPECT_EQ(store->batches_committed(), static_cast<std::uint64_t>(kBatches));
}

TEST(SqliteStore, EveryThreadsBatchesApplyInItsOrder) {
  ScratchDir dir;
  auto store = OpenOrDie(dir.File("allot.db"));
  constexpr int kThreads = 8;
  constexpr int kPerThread = 100;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        Batch batch;
        batch.Put(Kind::kMeta, "thread-" + Str(t), Str(i));
        batch.Put(Kind::kJob, Str(t) + "/" + Str(i), "x");
        if (!store->Commit(std::move(batch)).ok()) ++failures;
        // Commit returned: the batch is visible to reads at once.
        if (GetOrDie(*store, Kind::kMeta, "thread-" + Str(t)) != Str(i)) ++failures;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(GetOrDie(*store, Kind::kMeta, "thread-" + Str(t)), Str(kPerThread - 1));
  }
  EXPECT_EQ(LoadOrDie(*store, Kind::kJob).size(), static_cast<std::size_t>(kThreads * kPerThread));
}

TEST(SqliteStore, ReadersNeverSeeAPartialBatch) {
  ScratchDir dir;
  auto store = OpenOrDie(dir.File("allot.db"));
  constexpr int kKeys = 25;
  constexpr int kBatches = 200;
  std::atomic<bool> stop{false};
  std::atomic<int> loads{0};
  std::atomic<int> torn{0};
  std::thread reader([&] {
    while (!stop.load()) {
      const std::vector<Record> records = LoadOrDie(*store, Kind::kJob);
      ++loads;
      if (records.empty()) continue;
      if (records.size() != static_cast<std::size_t>(kKeys)) ++torn;
      for (const Record& r : records) {
        if (r.value != records.front().value) ++torn;
      }
    }
  });
  for (int i = 0; i < kBatches; ++i) {
    Batch batch;
    for (int k = 0; k < kKeys; ++k) batch.Put(Kind::kJob, "k" + Str(k), Str(i));
    ASSERT_TRUE(store->Commit(std::move(batch)).ok());
  }
  stop = true;
  reader.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_GT(loads.load(), 0);
}

TEST(SqliteStore, GroupCommitPutsConcurrentCommitsInFewTransactions) {
  ScratchDir dir;
  auto store = OpenOrDie(dir.File("allot.db"));
  constexpr int kThreads = 16;
  constexpr int kPerThread = 63;  // 1008 batches
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        Batch batch;
        batch.Put(Kind::kJob, Str(t) + "/" + Str(i), "x");
        if (!store->Commit(std::move(batch)).ok()) ++failures;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  constexpr auto kTotal = static_cast<std::uint64_t>(kThreads * kPerThread);
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(store->batches_committed(), kTotal);
  EXPECT_EQ(LoadOrDie(*store, Kind::kJob).size(), kTotal);
  std::printf("%d threads x %d Commit(): %llu transactions, %.1f batches each\n", kThreads,
              kPerThread, static_cast<unsigned long long>(store->transactions()),
              static_cast<double>(kTotal) / static_cast<double>(store->transactions()));
  // Without grouping there would be one transaction per batch. With 16 committers waiting on
  // an fsync, groups hold several batches each; half is a loose bound that timing cannot break.
  EXPECT_LT(store->transactions(), kTotal / 2);
}

TEST(SqliteStore, GroupCommitTakesEverySubmittedBatch) {
  ScratchDir dir;
  auto store = OpenOrDie(dir.File("allot.db"));
  constexpr int kThreads = 16;
  constexpr int kPerThread = 63;
  Results results;
  results.Expect(kThreads * kPerThread);
  {
    WriterGate gate(*store);  // everything below queues up behind it
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          Batch batch;
          batch.Put(Kind::kJob, Str(t) + "/" + Str(i), "x");
          store->Submit(std::move(batch), results.Slot(t * kPerThread + i));
        }
      });
    }
    for (std::thread& th : threads) th.join();
  }
  results.Wait();
  for (const Status& s : results.statuses()) EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(store->transactions(), 1U);  // all 1008 queued batches in one transaction
  EXPECT_EQ(LoadOrDie(*store, Kind::kJob).size(), static_cast<std::size_t>(kThreads * kPerThread));
}

TEST(SqliteStore, MaxBatchesPerCommitBoundsAGroup) {
  ScratchDir dir;
  auto store = OpenOrDie(dir.File("allot.db"), /*max_batches_per_commit=*/4);
  Results results;
  results.Expect(102);
  {
    WriterGate gate(*store);
    for (int i = 0; i < 102; ++i) {
      Batch batch;
      batch.Put(Kind::kMeta, "last", Str(i));
      store->Submit(std::move(batch), results.Slot(i));
    }
  }
  results.Wait();
  EXPECT_EQ(store->transactions(), 26U);  // ceil(102 / 4)
  EXPECT_EQ(GetOrDie(*store, Kind::kMeta, "last"), "101");
}

TEST(SqliteStore, FailedTransactionFailsAndRollsBackEveryBatchInIt) {
  ScratchDir dir;
  const std::string path = dir.File("allot.db");
  auto store = OpenOrDie(path);
  Batch setup;
  setup.Put(Kind::kJob, "existing", "before");
  ASSERT_TRUE(store->Commit(std::move(setup)).ok());

  // A trigger makes the insert of key "poison" fail inside the transaction.
  RawDb raw(path);
  raw.Exec(
      "CREATE TRIGGER poison BEFORE INSERT ON records WHEN NEW.key = 'poison'"
      " BEGIN SELECT RAISE(ABORT, 'poisoned'); END;");

  Results results;
  results.Expect(3);
  {
    WriterGate gate(*store);  // the three batches below go into one transaction
    Batch a;
    a.Put(Kind::kJob, "a", "1");
    a.Put(Kind::kJob, "existing", "after");
    store->Submit(std::move(a), results.Slot(0));
    Batch b;
    b.Put(Kind::kJob, "b", "1");
    b.Put(Kind::kJob, "poison", "1");
    store->Submit(std::move(b), results.Slot(1));
    Batch c;
    c.Delete(Kind::kJob, "existing");
    store->Submit(std::move(c), results.Slot(2));
  }
  results.Wait();
  EXPECT_EQ(results.order(), (std::vector<int>{0, 1, 2}));
  for (const Status& s : results.statuses()) {
    EXPECT_EQ(s.code(), StatusCode::kInternal) << s.ToString();
    EXPECT_NE(s.message().find("poisoned"), std::string::npos) << s.ToString();
  }
  EXPECT_EQ(store->failed_transactions(), 1U);
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(Pairs(LoadOrDie(*store, Kind::kJob)), (std::vector<P>{{"existing", "before"}}));

  // The failure is sticky: a later batch, even a good one, fails unwritten until Resume().
  raw.Exec("DROP TRIGGER poison");
  Batch d;
  d.Put(Kind::kJob, "poison", "fine now");
  const Status sticky = store->Commit(std::move(d));
  EXPECT_EQ(sticky.code(), StatusCode::kInternal) << sticky.ToString();
  EXPECT_NE(sticky.message().find("poisoned"), std::string::npos) << sticky.ToString();
  EXPECT_EQ(Pairs(LoadOrDie(*store, Kind::kJob)), (std::vector<P>{{"existing", "before"}}));
  EXPECT_EQ(store->failed_transactions(), 1U);  // the later batch never reached SQLite

  store->Resume();
  Batch e;
  e.Put(Kind::kJob, "poison", "fine now");
  EXPECT_TRUE(store->Commit(std::move(e)).ok());
  EXPECT_EQ(GetOrDie(*store, Kind::kJob, "poison"), "fine now");
}

TEST(SqliteStore, EmptyBatchCommitsWithoutATransaction) {
  ScratchDir dir;
  auto store = OpenOrDie(dir.File("allot.db"));
  EXPECT_TRUE(store->Commit({}).ok());
  EXPECT_EQ(store->transactions(), 0U);
  EXPECT_EQ(store->batches_committed(), 1U);
}

TEST(SqliteStore, CommittedBatchesSurviveCloseAndReopen) {
  ScratchDir dir;
  const std::string path = dir.File("allot.db");
  {
    auto store = OpenOrDie(path);
    for (int i = 0; i < 50; ++i) {
      Batch batch;
      batch.Put(Kind::kJob, "job-" + Str(100 + i), "v" + Str(i));
      if (i % 10 == 9) batch.Delete(Kind::kJob, "job-" + Str(100 + i - 1));
      batch.Put(Kind::kMeta, "next_sequence", Str(i + 1));
      ASSERT_TRUE(store->Commit(std::move(batch)).ok());
    }
    store->Close();
    EXPECT_FALSE(std::filesystem::exists(path + "-wal")) << "the last close checkpoints the WAL";
  }
  auto store = OpenOrDie(path);
  EXPECT_EQ(GetOrDie(*store, Kind::kMeta, "next_sequence"), "50");
  const std::vector<Record> jobs = LoadOrDie(*store, Kind::kJob);
  EXPECT_EQ(jobs.size(), 45U);
  EXPECT_EQ(GetOrDie(*store, Kind::kJob, "job-108"), std::nullopt);
  EXPECT_EQ(GetOrDie(*store, Kind::kJob, "job-149"), "v49");
}

// Checkpoints run on the checkpointer's thread: the WAL is copied back and started over while
// the writer goes on, so it stays near 1,000 pages however much is written.
TEST(SqliteStore, TheCheckpointerKeepsTheWalSmall) {
  ScratchDir dir;
  const std::string path = dir.File("allot.db");
  auto store = OpenOrDie(path);
  const std::string value(4000, 'x');  // about a page each
  constexpr int kBatches = 3000;
  for (int i = 0; i < kBatches; ++i) {
    Batch batch;
    batch.Put(Kind::kJob, "job-" + Str(i), value);
    ASSERT_TRUE(store->Commit(std::move(batch)).ok());
  }
  EXPECT_GE(store->checkpoints(), 1U);
  const auto wal = std::filesystem::file_size(path + "-wal");
  EXPECT_LT(wal, std::uintmax_t{kBatches} * 4096) << "the WAL was never started over";
  store->Close();
  auto reopened = OpenOrDie(path);
  EXPECT_EQ(LoadOrDie(*reopened, Kind::kJob).size(), static_cast<std::size_t>(kBatches));
  EXPECT_EQ(GetOrDie(*reopened, Kind::kJob, "job-2999"), value);
}

TEST(SqliteStore, CloseCommitsEverythingQueued) {
  ScratchDir dir;
  const std::string path = dir.File("allot.db");
  Results results;
  results.Expect(300);
  {
    auto store = OpenOrDie(path);
    for (int i = 0; i < 300; ++i) {
      Batch batch;
      batch.Put(Kind::kJob, "job-" + Str(i), "x");
      store->Submit(std::move(batch), results.Slot(i));
    }
    store->Close();  // returns after every done ran
    EXPECT_EQ(results.order().size(), 300U);
  }
  results.Wait();
  for (const Status& s : results.statuses()) EXPECT_TRUE(s.ok()) << s.ToString();
  auto store = OpenOrDie(path);
  EXPECT_EQ(LoadOrDie(*store, Kind::kJob).size(), 300U);
}

TEST(SqliteStore, AfterCloseSubmitAndReadsAreUnavailable) {
  ScratchDir dir;
  auto store = OpenOrDie(dir.File("allot.db"));
  store->Close();
  store->Close();  // idempotent
  std::optional<Status> seen;
  Batch batch;
  batch.Put(Kind::kJob, "late", "x");
  store->Submit(std::move(batch), [&seen](const Status& s) { seen = s; });
  ASSERT_TRUE(seen.has_value());  // run at once, on this thread
  EXPECT_EQ(seen->code(), StatusCode::kUnavailable);
  EXPECT_EQ(store->Commit({}).code(), StatusCode::kUnavailable);
  EXPECT_EQ(store->Load(Kind::kJob).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(store->Get(Kind::kJob, "late").status().code(), StatusCode::kUnavailable);
}

TEST(SqliteStore, DoneMaySubmitReadAndClose) {
  ScratchDir dir;
  const std::string path = dir.File("allot.db");
  auto store = OpenOrDie(path);
  std::promise<Status> follow_up;
  std::optional<std::string> read_in_callback;
  Batch first;
  first.Put(Kind::kJob, "first", "1");
  store->Submit(std::move(first), [&](const Status&) {
    read_in_callback = GetOrDie(*store, Kind::kJob, "first");  // already visible
    Batch second;
    second.Put(Kind::kJob, "second", "2");
    store->Submit(std::move(second), [&](const Status& s) { follow_up.set_value(s); });
    store->Close();  // from the writer thread: stops intake, does not wait for itself
  });
  EXPECT_TRUE(follow_up.get_future().get().ok());
  store->Close();  // joins the writer
  EXPECT_EQ(read_in_callback, "1");
  store = OpenOrDie(path);
  EXPECT_EQ(GetOrDie(*store, Kind::kJob, "second"), "2");
}

TEST(SqliteStore, OpenRejectsBadOptionsAndFiles) {
  ScratchDir dir;
  EXPECT_EQ(SqliteStore::Open({.path = ""}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(
      SqliteStore::Open({.path = dir.File("a.db"), .max_batches_per_commit = 0}).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_FALSE(SqliteStore::Open({.path = dir.File("no/such/dir/a.db")}).ok());
  EXPECT_FALSE(SqliteStore::Open({.path = ":memory:"}).ok());  // no WAL in memory

  const std::string garbage = dir.File("garbage.db");
  std::ofstream(garbage) << std::string(8192, 'g');
  const auto not_db = SqliteStore::Open({.path = garbage});
  EXPECT_FALSE(not_db.ok());
  EXPECT_NE(not_db.status().message().find("garbage.db"), std::string::npos)
      << not_db.status().ToString();

  const std::string newer = dir.File("newer.db");
  OpenOrDie(newer).reset();
  {
    RawDb raw(newer);
    raw.Exec("UPDATE meta SET value = '2' WHERE name = 'schema_version'");
  }
  EXPECT_EQ(SqliteStore::Open({.path = newer}).status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace allot::store
