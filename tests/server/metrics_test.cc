// The Prometheus registry and text format (server/metrics.h) and Allot's gauges and token
// (server/server_metrics.h): escaping, cumulative buckets with +Inf, a total and deterministic
// order, and the bearer check.

#include "server/metrics.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "server/server_metrics.h"

namespace allot::server {
namespace {

using metrics::Family;

TEST(MetricsText, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(metrics::EscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(metrics::EscapeLabelValue("plain ml.g5.xlarge"), "plain ml.g5.xlarge");
  EXPECT_EQ(metrics::EscapeHelp("x \\ \"y\"\nz"), "x \\\\ \"y\"\\nz");
}

TEST(MetricsText, FormatsValues) {
  EXPECT_EQ(metrics::FormatValue(3), "3");
  EXPECT_EQ(metrics::FormatValue(0.25), "0.25");
  EXPECT_EQ(metrics::FormatValue(1e-6), "1e-06");
  EXPECT_EQ(metrics::FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(metrics::FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(metrics::FormatValue(std::nan("")), "NaN");
}

TEST(MetricsText, RendersGaugesSortedWithEscapedLabels) {
  Family b{.name = "b_gauge",
           .help = "B.",
           .type = metrics::Type::kGauge,
           .label_names = {"queue", "share"}};
  b.Add({"q", "z"}, 2);
  b.Add({"q", "a\"x"}, 1);
  Family a{.name = "a_gauge", .help = "A\nline.", .type = metrics::Type::kGauge};
  a.Add({}, 7);
  Family empty{.name = "c_empty",
               .help = "Nothing yet.",
               .type = metrics::Type::kGauge,
               .label_names = {"queue"}};
  EXPECT_EQ(metrics::Render({b, empty, a}),
            "# HELP a_gauge A\\nline.\n"
            "# TYPE a_gauge gauge\n"
            "a_gauge 7\n"
            "# HELP b_gauge B.\n"
            "# TYPE b_gauge gauge\n"
            "b_gauge{queue=\"q\",share=\"a\\\"x\"} 1\n"
            "b_gauge{queue=\"q\",share=\"z\"} 2\n"
            "# HELP c_empty Nothing yet.\n"
            "# TYPE c_empty gauge\n");
}

TEST(MetricsRegistry, HistogramBucketsAreCumulativeWithInf) {
  metrics::Registry registry;
  metrics::HistogramFamily& h = registry.AddHistogram("x_seconds", "X.", {"action"}, {0.25, 1});
  metrics::Histogram& s = h.With({"submit"});
  s.Observe(0.125);
  s.Observe(0.25);  // le is inclusive
  s.Observe(0.5);
  s.Observe(32);
  EXPECT_EQ(metrics::Render(registry.Snapshot()),
            "# HELP x_seconds X.\n"
            "# TYPE x_seconds histogram\n"
            "x_seconds_bucket{action=\"submit\",le=\"0.25\"} 2\n"
            "x_seconds_bucket{action=\"submit\",le=\"1\"} 3\n"
            "x_seconds_bucket{action=\"submit\",le=\"+Inf\"} 4\n"
            "x_seconds_sum{action=\"submit\"} 32.875\n"
            "x_seconds_count{action=\"submit\"} 4\n");
}

TEST(MetricsRegistry, CountersFromManyThreadsAddUp) {
  metrics::Registry registry;
  metrics::CounterFamily& c = registry.AddCounter("n_total", "N.", {"share"});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&c, t] {
      for (int i = 0; i < 10000; ++i) c.With({t % 2 == 0 ? "even" : "odd"}).Add();
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(metrics::Render(registry.Snapshot()),
            "# HELP n_total N.\n"
            "# TYPE n_total counter\n"
            "n_total{share=\"even\"} 20000\n"
            "n_total{share=\"odd\"} 20000\n");
}

TEST(MetricsRegistry, SameFiguresRenderTheSameWhateverTheOrderOfFirstUse) {
  auto render = [](const std::vector<std::string>& order) {
    metrics::Registry registry;
    metrics::CounterFamily& second = registry.AddCounter("z_total", "Z.", {"k"});
    metrics::CounterFamily& first = registry.AddCounter("a_total", "A.", {"k"});
    for (const std::string& k : order) {
      first.With({k}).Add(1.5);
      second.With({k}).Add();
    }
    return metrics::Render(registry.Snapshot());
  };
  EXPECT_EQ(render({"b", "a", "c"}), render({"c", "b", "a"}));
}

engine::QueueUsage SampleUsage() {
  engine::QueueUsage q{.queue = "q1"};
  q.pool.push_back({.unit = "ml.g5.xlarge", .limit = 3, .used = 3, .borrowed = 1, .lent = 1});
  engine::ShareUsage a{.name = "QS1", .strategy = model::SharingStrategy::kLendAndBorrow};
  a.units.push_back({.unit = "ml.g5.xlarge", .limit = 1, .used = 2, .borrowed = 1});
  a.waiting_jobs = 1;
  a.dispatched_jobs = 2;
  engine::ShareUsage b{.name = "QS2", .strategy = model::SharingStrategy::kLend};
  b.units.push_back({.unit = "ml.g5.xlarge", .limit = 1, .lent = 1});
  q.shares = {a, b};
  return q;
}

TEST(ServerMetrics, UsageGaugesPerShareUnitAndPool) {
  const std::string text = metrics::Render(UsageFamilies({SampleUsage()}));
  EXPECT_NE(text.find("allot_share_used_instances{queue=\"q1\",share=\"QS1\",unit=\"ml.g5.xlarge\"}"
                      " 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("allot_share_borrowed_instances{queue=\"q1\",share=\"QS1\",unit=\"ml.g5."
                      "xlarge\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("allot_share_lent_instances{queue=\"q1\",share=\"QS2\",unit=\"ml.g5.xlarge\"}"
                      " 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("allot_pool_limit_instances{queue=\"q1\",unit=\"ml.g5.xlarge\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("allot_share_waiting_jobs{queue=\"q1\",share=\"QS1\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("allot_share_running_jobs{queue=\"q1\",share=\"QS1\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("allot_share_info{queue=\"q1\",share=\"QS2\",strategy=\"LEND\"} 1\n"),
            std::string::npos);
}

TEST(ServerMetrics, RegisteredAndScrapedFamiliesRenderTogether) {
  ServerMetrics m;
  m.CountSubmission("q1", "QS1");
  m.preemptions.With({"q1", MetricLabel(model::PreemptionRule::kReclaim), "QS2", "QS1"}).Add();
  m.ObserveDecision(model::Tick{}, 0.000003);
  const std::string text = m.Render(ProcessFamilies({.version = "1.2.3",
                                                     .start_time_seconds = 100,
                                                     .now_seconds = 200,
                                                     .executor = "slurm",
                                                     .last_poll = Timestamp{190'000}}));
  EXPECT_NE(text.find("allot_submissions_total{queue=\"q1\",share=\"QS1\"} 1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("allot_preemptions_total{queue=\"q1\",rule=\"reclaim\",preemptor_share="
                      "\"QS2\",victim_share=\"QS1\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("allot_engine_event_duration_seconds_count{event=\"tick\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("allot_build_info{version=\"1.2.3\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("process_start_time_seconds 100\n"), std::string::npos);
  EXPECT_NE(text.find("allot_executor_poll_age_seconds{executor=\"slurm\"} 10\n"),
            std::string::npos);
  // Families come sorted by name: the exposition is the same at every scrape of the same state.
  EXPECT_LT(text.find("# TYPE allot_build_info"), text.find("# TYPE allot_submissions_total"));
  EXPECT_LT(text.find("# TYPE allot_submissions_total"), text.find("# TYPE process_start"));
}

TEST(ServerMetrics, BearerTokenIsCheckedWhole) {
  const std::string token = "0123456789abcdef0123";
  EXPECT_TRUE(BearerMatches("Bearer " + token, token));
  EXPECT_TRUE(BearerMatches("bearer " + token, token));
  EXPECT_FALSE(BearerMatches("", token));
  EXPECT_FALSE(BearerMatches("Bearer", token));
  EXPECT_FALSE(BearerMatches("Bearer " + token + "x", token));
  EXPECT_FALSE(BearerMatches("Bearer " + token.substr(1), token));
  EXPECT_FALSE(BearerMatches("Basic " + token, token));
  EXPECT_FALSE(BearerMatches("Bearer ", ""));
}

TEST(ServerMetrics, TokenFileIsMadeOnceWithMode0600) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("allot-metrics-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "metrics-token").string();
  Result<std::string> made = LoadOrCreateMetricsToken(path);
  ASSERT_TRUE(made.ok()) << made.status().message();
  EXPECT_EQ(made->size(), 64u);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  Result<std::string> again = LoadOrCreateMetricsToken(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *made);
  ::chmod(path.c_str(), 0644);
  EXPECT_FALSE(LoadOrCreateMetricsToken(path).ok()) << "a token others may read is refused";
  { std::ofstream(path, std::ios::trunc) << "short\n"; }
  ::chmod(path.c_str(), 0600);
  EXPECT_FALSE(LoadOrCreateMetricsToken(path).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace allot::server
