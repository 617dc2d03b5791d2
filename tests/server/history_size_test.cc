// What a day of history costs on disk (docs/observability.md, History and reports): 1,000 jobs
// a day on a queue of 20 shares, through the real encoders into a real SQLite store. Prints the
// bytes of each part and checks they stay within the bound the docs state. Seeded; the seed is
// printed.

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>

#include "server/history.h"
#include "server/history_codec.h"
#include "store/store.h"

namespace allot::server {
namespace {

constexpr Timestamp kDay0 = 1'767'225'600'000;  // 2026-01-01
constexpr int kShares = 20;
constexpr int kJobs = 1000;

std::string ShareName(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "team-%02d", i);
  return buf;
}

std::string JobId(std::mt19937_64& rng) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08llx-%04llx-7%03llx-%04llx-%012llx",
                static_cast<unsigned long long>(rng() & 0xffffffff),
                static_cast<unsigned long long>(rng() & 0xffff),
                static_cast<unsigned long long>(rng() & 0xfff),
                static_cast<unsigned long long>(rng() & 0xffff),
                static_cast<unsigned long long>(rng() & 0xffffffffffffULL));
  return buf;
}

// Bytes of the database file and its WAL once the store is closed.
std::uintmax_t Bytes(const std::string& path) {
  std::uintmax_t total = 0;
  for (const std::string& p : {path, path + "-wal"}) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(p, ec);
    if (!ec) total += size;
  }
  return total;
}

class Day {
 public:
  explicit Day(const std::string& dir) : dir_(dir) {}

  // Writes `records` into a fresh store named `name` in batches of 500; returns its bytes.
  std::uintmax_t Write(const std::string& name, const std::vector<store::Op>& records) {
    const std::string path = dir_ + "/" + name + ".db";
    auto opened = store::OpenSqliteStore({.path = path});
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (!opened.ok()) return 0;
    std::unique_ptr<store::Store> s = std::move(opened).value();
    store::Batch batch;
    for (const store::Op& op : records) {
      batch.ops.push_back(op);
      if (batch.ops.size() == 500) {
        EXPECT_TRUE(s->Commit(std::move(batch)).ok());
        batch = store::Batch();
      }
    }
    if (!batch.empty()) {
      EXPECT_TRUE(s->Commit(std::move(batch)).ok());
    }
    s->Close();
    s.reset();
    return Bytes(path);
  }

 private:
  std::string dir_;
};

std::vector<store::Op> JobEvents(std::mt19937_64& rng) {
  std::vector<store::Op> ops;
  std::uint64_t seq = 1;
  auto put = [&](const JobEvent& e) {
    ops.push_back({store::Kind::kJobEvent, JobEventKey(e.at, seq++), EncodeJobEvent(e)});
  };
  for (int i = 0; i < kJobs; ++i) {
    JobEvent base;
    base.job = JobId(rng);
    base.name = "train-resnet50-" + std::to_string(rng() % 100000);
    base.queue = "training";
    base.share = ShareName(static_cast<int>(rng() % kShares));
    base.demand = {{"ml.g5.xlarge", static_cast<std::int64_t>(1 + rng() % 4)}};
    const Timestamp submitted = kDay0 + static_cast<Timestamp>(rng() % 86'400'000);
    JobEvent e = base;
    e.at = submitted;
    e.type = JobEventType::kSubmitted;
    e.priority = static_cast<std::int32_t>(rng() % 10);
    put(e);
    const bool preempted = rng() % 10 == 0;  // one job in ten is preempted once
    Timestamp t = submitted + static_cast<Timestamp>(rng() % 600'000);
    for (int attempt = 1; attempt <= (preempted ? 2 : 1); ++attempt) {
      const Timestamp dispatched = t;
      e = base;
      e.type = JobEventType::kDispatched;
      e.at = dispatched;
      e.attempt = attempt;
      e.created_at = submitted;
      e.dispatched_at = dispatched;
      e.reason = "WITHIN_QUOTA";
      put(e);
      e = base;
      e.type = JobEventType::kStarted;
      e.at = dispatched + 1500;
      e.attempt = attempt;
      e.dispatched_at = dispatched;
      e.hosts = "algo-1,algo-2";
      put(e);
      t = dispatched + static_cast<Timestamp>(rng() % 7'200'000);
      e = base;
      e.type = JobEventType::kAttemptEnded;
      e.at = t;
      e.attempt = attempt;
      e.dispatched_at = dispatched;
      e.reason = attempt == 1 && preempted
                     ? "Cross-share preemption triggered to reclaim borrowed capacity"
                     : "Received status from SageMaker: Training job completed";
      put(e);
      if (attempt == 1 && preempted) {
        e = base;
        e.type = JobEventType::kPreempted;
        e.at = t;
        e.attempt = 1;
        e.dispatched_at = dispatched;
        e.reason = "Cross-share preemption triggered to reclaim borrowed capacity";
        e.preemptor = JobId(rng);
        e.preemptor_share = ShareName(static_cast<int>(rng() % kShares));
        e.rule = "reclaim";
        e.victim_priority = 3;
        e.work_lost_when_chosen = 1'234'567;
        e.chosen_at = t - 30'000;
        e.work_lost = 1'254'567;
        put(e);
        t += 60'000;
      }
    }
    e = base;
    e.type = JobEventType::kEnded;
    e.at = t;
    e.status = "SUCCEEDED";
    e.reason = "Received status from SageMaker: Training job completed";
    put(e);
  }
  return ops;
}

std::vector<store::Op> Samples(std::mt19937_64& rng, UsageResolution resolution, Duration step) {
  std::vector<store::Op> ops;
  for (Timestamp at = kDay0; at < kDay0 + 86'400'000; at += step) {
    UsageSample s{.resolution = resolution, .at = at, .queue = "training"};
    for (int i = 0; i < kShares; ++i) {
      const auto used = static_cast<double>(rng() % 5);
      // Coarse points are averages: fractions.
      const double scale = resolution == UsageResolution::kFine ? 1.0 : 1.0 / 30;
      s.points.push_back({ShareName(i), "ml.g5.xlarge", 2, used, used > 2 ? used - 2 : 0,
                          static_cast<double>(rng() % 3) * scale,
                          static_cast<double>(rng() % 7) * scale + (scale < 1 ? 0.3 : 0)});
    }
    ops.push_back(
        {store::Kind::kUsageSample, UsageSampleKey(resolution, at, s.queue), EncodeUsageSample(s)});
  }
  return ops;
}

TEST(HistorySize, ADayOfHistoryAtAThousandJobsAndTwentyShares) {
  const std::uint64_t seed = std::random_device{}();
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  const std::string dir = ::testing::TempDir() + "/allot-history-size-" + std::to_string(seed);
  std::filesystem::create_directories(dir);
  Day day(dir);
  const std::uintmax_t events = day.Write("events", JobEvents(rng));
  const std::uintmax_t fine = day.Write("fine", Samples(rng, UsageResolution::kFine, Seconds(10)));
  const std::uintmax_t five =
      day.Write("five", Samples(rng, UsageResolution::kFiveMinutes, kFiveMinutes));
  const std::uintmax_t hour = day.Write("hour", Samples(rng, UsageResolution::kHour, kHour));
  std::filesystem::remove_all(dir);
  const double mib = 1024.0 * 1024.0;
  std::printf("job events, one day of 1,000 jobs:  %8.3f MiB (kept for the retention)\n",
              static_cast<double>(events) / mib);
  std::printf("10 s samples, one day, 20 shares:   %8.3f MiB (kept one day)\n",
              static_cast<double>(fine) / mib);
  std::printf("5 min samples, one day, 20 shares:  %8.3f MiB (kept 30 days)\n",
              static_cast<double>(five) / mib);
  std::printf(
      "1 h samples, one day, 20 shares:    %8.3f MiB (kept for the retention; the file's "
      "few pages are mostly empty)\n",
      static_cast<double>(hour) / mib);
  std::printf("in all at 90 days' retention: %.1f MiB\n",
              static_cast<double>(90 * events + fine + 30 * five + 90 * hour) / mib);
  // The bound docs/observability.md states (with room for SQLite's page slack).
  EXPECT_LT(events, 3 * 1024 * 1024);
  EXPECT_LT(fine, 24 * 1024 * 1024);
  EXPECT_LT(five, 2 * 1024 * 1024);
}

}  // namespace
}  // namespace allot::server
