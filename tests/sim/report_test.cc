#include "sim/report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "sim/report_format.h"
#include "sim/result.h"

namespace allot::sim {
namespace {

constexpr const char* kOddShare = "a<b&\"c\"";

Distribution Waits(double p50, double p90, double p99, double max) {
  Distribution d;
  d.count = 10;
  d.mean = (p50 + p90) / 2;
  d.p50 = p50;
  d.p90 = p90;
  d.p99 = p99;
  d.max = max;
  return d;
}

std::vector<double> Ramp(std::size_t n, double scale) {
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(scale * static_cast<double>(i % 7));
  return v;
}

ShareResult Share(const std::string& name, std::int64_t limit, double lost, std::size_t buckets) {
  ShareResult s;
  s.queue = "q";
  s.share = name;
  s.strategy = "LEND_AND_BORROW";
  s.figures.jobs = 5;
  s.figures.limit = limit;
  s.figures.utilization = 0.5;
  s.figures.wait = Waits(30, 60, 600, 900);
  s.figures.wait_histogram[2] = 3;
  s.figures.wait_histogram[4] = 2;
  s.figures.preemptions_reclaim = 2;
  s.figures.preemptions_in_share = 1;
  s.figures.lost_instance_hours = lost;
  s.figures.restart_instance_hours = lost / 4;
  s.usage = Ramp(buckets, static_cast<double>(limit) / 3);
  return s;
}

// Three policies over the same two shares, with different chart buckets and figures.
ReportInput ThreeRuns() {
  ReportInput in;
  in.trace = "unit.csv (csv, 30 jobs)";
  const char* policies[] = {"fair-share", "strict", "lend-all"};
  const double buckets[] = {60, 120, 60};
  const std::size_t lengths[] = {120, 60, 90};
  for (std::size_t i = 0; i < 3; ++i) {
    RunResult r;
    r.policy = policies[i];
    r.victim_order = i == 1 ? "newest-first" : "least-work-lost";
    r.span_seconds = 7200;
    r.bucket_seconds = buckets[i];
    r.overall.jobs = 12345 + static_cast<std::int64_t>(i);
    r.overall.succeeded = 12000;
    r.overall.unfinished = 3;
    r.overall.limit = 16;
    r.overall.utilization = i == 0 ? 0.12345 : 0.8734;
    r.overall.used_instance_hours = 12345.67;
    r.overall.wait = Waits(204, 12, 7560, 103680);
    r.overall.wait_histogram[0] = 4;
    r.overall.wait_histogram[3] = 7;
    r.overall.lost_instance_hours = 1.5 * static_cast<double>(i + 1);
    r.overall.preemptions_reclaim = 4;
    r.overall.preemptions_in_share = 2;
    r.jain_index = 0.91234;
    r.pool_usage = Ramp(lengths[i], 2);
    r.shares.push_back(Share(kOddShare, 6, 2.0 * static_cast<double>(i), lengths[i]));
    r.shares.push_back(Share("batch", 10, 4321.0, i == 2 ? 0 : lengths[i]));
    r.groups.push_back({"large", Waits(3600, 7200, 9000, 9000)});
    r.groups.push_back({"small", Waits(5, 9, 12, 15)});
    r.engine_events = 100;
    r.decisions = 50;
    in.runs.push_back(r);
  }
  return in;
}

std::string Text(const ReportInput& in) {
  std::ostringstream out;
  WriteText(in, out);
  return out.str();
}

std::string Json(const ReportInput& in) {
  std::ostringstream out;
  WriteJson(in, out);
  return out.str();
}

std::string Html(const ReportInput& in) {
  std::ostringstream out;
  WriteHtml(in, out);
  return out.str();
}

std::size_t Count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string LineStartingWith(const std::string& text, const std::string& start) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(start, 0) == 0) return line;
  }
  return "";
}

// ---- Number formatting -----------------------------------------------------------------------

TEST(ReportFormat, DurationsReadLikeAPersonWouldSayThem) {
  EXPECT_EQ(report::FormatDuration(0), "0s");
  EXPECT_EQ(report::FormatDuration(0.4), "0.4s");
  EXPECT_EQ(report::FormatDuration(12), "12s");
  EXPECT_EQ(report::FormatDuration(59.7), "1m");
  EXPECT_EQ(report::FormatDuration(204), "3.4m");
  EXPECT_EQ(report::FormatDuration(7560), "2.1h");
  EXPECT_EQ(report::FormatDuration(103680), "1.2d");
  EXPECT_EQ(report::FormatDuration(30 * 86400), "30d");
  EXPECT_EQ(report::FormatDuration(std::numeric_limits<double>::quiet_NaN()), "-");
}

TEST(ReportFormat, AmountsAndCompactNumbers) {
  EXPECT_EQ(report::FormatAmount(12345.67), "12,345.7");
  EXPECT_EQ(report::FormatAmount(-0.01), "0.0");
  EXPECT_EQ(report::FormatCount(1234567), "1,234,567");
  EXPECT_EQ(report::FormatCompact(0), "0");
  EXPECT_EQ(report::FormatCompact(3.44), "3.4");
  EXPECT_EQ(report::FormatCompact(9.96), "10");
  EXPECT_EQ(report::FormatCompact(999.7), "1k");
  EXPECT_EQ(report::FormatCompact(4321), "4.3k");
  EXPECT_EQ(report::FormatCompact(45000), "45k");
  EXPECT_EQ(report::FormatCompact(6.7e6), "6.7M");
  EXPECT_EQ(report::FormatCompact(std::numeric_limits<double>::infinity()), "-");
}

// ---- Text ------------------------------------------------------------------------------------

TEST(TextReport, NamesTheTraceFirstThenComparesPolicies) {
  const std::string text = Text(ThreeRuns());
  EXPECT_EQ(text.rfind("Trace: unit.csv (csv, 30 jobs)\n", 0), 0u) << text;
  const std::string header = LineStartingWith(text, "Overall");
  for (const char* policy : {"fair-share", "strict", "lend-all"}) {
    EXPECT_NE(header.find(policy), std::string::npos) << header;
  }
  const std::string jobs = LineStartingWith(text, "jobs ");
  EXPECT_LT(jobs.find(" 12,345 "), jobs.find(" 12,346 ")) << text;
  EXPECT_LT(jobs.find(" 12,346 "), jobs.find(" 12,347")) << text;
  const std::string util = LineStartingWith(text, "utilization %");
  EXPECT_NE(util.find("12.3"), std::string::npos) << util;
  EXPECT_NE(util.find("87.3"), std::string::npos) << util;
  EXPECT_NE(LineStartingWith(text, "wait p50").find("3.4m"), std::string::npos);
  EXPECT_NE(LineStartingWith(text, "wait p90").find("12s"), std::string::npos);
  EXPECT_NE(LineStartingWith(text, "wait p99").find("2.1h"), std::string::npos);
  EXPECT_NE(LineStartingWith(text, "wait max").find("1.2d"), std::string::npos);
  EXPECT_NE(LineStartingWith(text, "used inst-h").find("12,345.7"), std::string::npos);
  EXPECT_NE(LineStartingWith(text, "preemptions reclaim / in-share").find("4 / 2"),
            std::string::npos);
  EXPECT_NE(LineStartingWith(text, "lost inst-h").find("1.5"), std::string::npos);
  EXPECT_NE(LineStartingWith(text, "Jain's index").find("0.912"), std::string::npos);
  EXPECT_NE(LineStartingWith(text, "span").find("2h"), std::string::npos);
}

TEST(TextReport, RightAlignsNumbersUnderTheirPolicy) {
  const std::string text = Text(ThreeRuns());
  const std::string header = LineStartingWith(text, "Overall");
  const std::string jobs = LineStartingWith(text, "jobs ");
  // Each policy's column ends where its name ends.
  EXPECT_EQ(header.find("fair-share") + std::string("fair-share").size(),
            jobs.find("12,345") + std::string("12,345").size())
      << header << "\n"
      << jobs;
  EXPECT_EQ(header.size(), jobs.size());
}

TEST(TextReport, PerShareBlocksPerPolicyAndGroups) {
  const std::string text = Text(ThreeRuns());
  const std::string batch = LineStartingWith(text, "batch ");
  ASSERT_FALSE(batch.empty()) << text;
  // util 50%, wait p50 30s, p99 10m, 3 preemptions, 4.3k lost, for the first two policies;
  EXPECT_NE(batch.find("50 30s 10m   3 4.3k"), std::string::npos) << batch;
  EXPECT_EQ(Count(batch, " | "), 3u) << "after the name and between policies: " << batch;
  EXPECT_FALSE(LineStartingWith(text, kOddShare).empty()) << text;
  EXPECT_NE(text.find("share  "), std::string::npos);
  EXPECT_EQ(text.find("q/batch"), std::string::npos) << "one queue: shares go by their name";
  const std::string large = LineStartingWith(text, "large ");
  EXPECT_NE(large.find("| 1.5h  1h 2.5h |"), std::string::npos) << large;
  EXPECT_FALSE(LineStartingWith(text, "small ").empty());
}

TEST(TextReport, ThreePoliciesFitAWideTerminal) {
  std::istringstream lines(Text(ThreeRuns()));
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(line.size(), 150u) << line;
    EXPECT_TRUE(line.empty() || line.back() != ' ') << "trailing blanks: [" << line << "]";
  }
}

TEST(TextReport, NamesQueuesWhenThereAreSeveral) {
  ReportInput in = ThreeRuns();
  for (RunResult& r : in.runs) r.shares[1].queue = "other";
  const std::string text = Text(in);
  EXPECT_FALSE(LineStartingWith(text, "other/batch ").empty()) << text;
  EXPECT_FALSE(LineStartingWith(text, "queue/share ").empty()) << text;
}

TEST(TextReport, MissingShareAndNoRuns) {
  ReportInput in = ThreeRuns();
  in.runs[1].shares.pop_back();  // "strict" has no "batch"
  const std::string batch = LineStartingWith(Text(in), "batch ");
  EXPECT_NE(batch.find("-   -   -   -    -     -    -    -"), std::string::npos) << batch;

  const std::string empty = Text(ReportInput{"nothing", {}});
  EXPECT_EQ(empty, "Trace: nothing\n\nNo runs.\n");
}

// ---- JSON ------------------------------------------------------------------------------------

TEST(JsonReport, HoldsEveryRunWithRoundedValues) {
  const std::string text = Json(ThreeRuns());
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["trace"], "unit.csv (csv, 30 jobs)");
  ASSERT_EQ(j["wait_histogram_edges_seconds"].size(), static_cast<std::size_t>(kWaitBins));
  EXPECT_EQ(j["wait_histogram_edges_seconds"][7], 360000.0);
  ASSERT_EQ(j["runs"].size(), 3u);
  const nlohmann::json& run = j["runs"][0];
  EXPECT_EQ(run["policy"], "fair-share");
  EXPECT_EQ(run["victim_order"], "least-work-lost");
  EXPECT_EQ(run["bucket_seconds"], 60.0);
  EXPECT_EQ(run["overall"]["utilization"], 0.123);
  EXPECT_EQ(run["overall"]["used_instance_hours"], 12345.67);
  EXPECT_EQ(run["jain_index"], 0.912);
  EXPECT_EQ(run["overall"]["jobs"], 12345);
  EXPECT_EQ(run["overall"]["wait"]["p99"], 7560.0);
  EXPECT_EQ(run["overall"]["wait"]["count"], 10);
  EXPECT_EQ(run["overall"]["wait_histogram"].size(), static_cast<std::size_t>(kWaitBins));
  EXPECT_EQ(run["overall"]["wait_histogram"][3], 7);
  EXPECT_EQ(run["engine_events"], 100);
  ASSERT_EQ(run["shares"].size(), 2u);
  EXPECT_EQ(run["shares"][0]["share"], kOddShare);
  EXPECT_EQ(run["shares"][0]["queue"], "q");
  EXPECT_EQ(run["shares"][0]["strategy"], "LEND_AND_BORROW");
  EXPECT_EQ(run["shares"][0]["figures"]["limit"], 6);
  EXPECT_EQ(run["shares"][0]["usage"].size(), 120u);
  EXPECT_EQ(run["shares"][0]["usage"][1], 2.0);
  EXPECT_EQ(run["groups"][0]["group"], "large");
  EXPECT_EQ(run["groups"][0]["wait"]["p50"], 3600.0);
  EXPECT_EQ(run["pool_usage"].size(), 120u);
  EXPECT_EQ(text.find("0.12345"), std::string::npos);
  EXPECT_NE(text.find("\n  \"runs\": ["), std::string::npos) << "2-space indent";
}

TEST(JsonReport, KeysInAFixedOrder) {
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(Json(ThreeRuns()));
  std::vector<std::string> top;
  for (const auto& [key, value] : j.items()) top.push_back(key);
  EXPECT_EQ(top, (std::vector<std::string>{"trace", "wait_histogram_edges_seconds", "runs"}));
  std::vector<std::string> run;
  for (const auto& [key, value] : j["runs"][0].items()) run.push_back(key);
  EXPECT_EQ(run,
            (std::vector<std::string>{"policy", "victim_order", "span_seconds", "bucket_seconds",
                                      "overall", "jain_index", "engine_events", "decisions",
                                      "invariant_checks", "shares", "groups", "pool_usage"}));
  std::vector<std::string> figures;
  for (const auto& [key, value] : j["runs"][0]["overall"].items()) figures.push_back(key);
  EXPECT_EQ(figures.front(), "jobs");
  EXPECT_EQ(figures.back(), "lent_instance_hours");
  EXPECT_EQ(figures.size(), 21u);
}

TEST(JsonReport, SameInputSameBytes) { EXPECT_EQ(Json(ThreeRuns()), Json(ThreeRuns())); }

TEST(JsonReport, NonFiniteIsNullAndNegativeZeroIsZero) {
  ReportInput in = ThreeRuns();
  in.runs[0].overall.utilization = std::numeric_limits<double>::quiet_NaN();
  in.runs[0].jain_index = -0.0001;
  const std::string text = Json(in);
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_TRUE(j["runs"][0]["overall"]["utilization"].is_null());
  EXPECT_EQ(text.find("-0.0"), std::string::npos);
}

// ---- HTML ------------------------------------------------------------------------------------

// The points of every <polyline> in the page, in order.
std::vector<std::size_t> PolylinePoints(const std::string& html) {
  std::vector<std::size_t> counts;
  for (std::size_t at = html.find("<polyline"); at != std::string::npos;
       at = html.find("<polyline", at + 1)) {
    const std::size_t begin = html.find("points=\"", at) + 8;
    const std::size_t end = html.find('"', begin);
    const std::string points = html.substr(begin, end - begin);
    counts.push_back(points.empty() ? 0 : Count(points, " ") + 1);
  }
  return counts;
}

void ExpectNothingLoadedFromOutside(const std::string& html) {
  const std::string xmlns = "xmlns=\"http://www.w3.org/2000/svg\"";
  EXPECT_EQ(Count(html, "http://"), Count(html, xmlns));
  EXPECT_EQ(Count(html, "https://"), 0u);
  for (const char* ref : {"src=", "href=", "url(", "@import", "<link", "<script"}) {
    EXPECT_EQ(html.find(ref), std::string::npos) << ref;
  }
}

// The text around `at`, to show where a check failed.
std::string Around(const std::string& text, std::size_t at) {
  if (at == std::string::npos) return "";
  const std::size_t begin = at > 80 ? at - 80 : 0;
  return text.substr(begin, 160);
}

// The test's names hold neither word, so any occurrence is a number printed from NaN or infinity.
void ExpectNoNonFiniteNumbers(const std::string& page) {
  const std::string lower = Lower(page);
  EXPECT_EQ(lower.find("nan"), std::string::npos) << Around(lower, lower.find("nan"));
  EXPECT_EQ(lower.find("inf"), std::string::npos) << Around(lower, lower.find("inf"));
}

// Text never holds a raw '<' or '>': each one opens or closes a tag (or the doctype).
void ExpectEveryAngleBracketIsMarkup(const std::string& html) {
  const std::string& body = html;
  bool in_tag = false;
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '<') {
      EXPECT_FALSE(in_tag) << Around(body, i);
      const char next = i + 1 < body.size() ? body[i + 1] : ' ';
      EXPECT_TRUE(std::isalpha(static_cast<unsigned char>(next)) || next == '/' || next == '!')
          << Around(body, i);
      in_tag = true;
    } else if (body[i] == '>') {
      EXPECT_TRUE(in_tag) << Around(body, i);
      in_tag = false;
    }
  }
}

TEST(HtmlReport, OnePageWithTablesAndOneSvgPerChart) {
  const ReportInput in = ThreeRuns();
  const std::string html = Html(in);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_NE(html.find("<title>Allot simulation: unit.csv (csv, 30 jobs)</title>"),
            std::string::npos);
  EXPECT_NE(html.find("</html>\n"), std::string::npos);
  // Usage: the pool and each share; waits: all and each share; lost work: one.
  EXPECT_EQ(Count(html, "<svg"), 2 * 2 + 3u);
  EXPECT_EQ(Count(html, "<svg"), Count(html, "</svg>"));
  EXPECT_EQ(Count(html, "<table>"), 3u);  // overall, per share, per group
  EXPECT_NE(html.find("<td>12,345.7</td>"), std::string::npos);
  EXPECT_NE(html.find(">batch</th>"), std::string::npos);
  for (const char* label :
       {"&lt;1s", "1-10s", "10s-1m", "1-10m", "10m-1h", "1-10h", "10-100h", "&gt;100h"}) {
    EXPECT_EQ(Count(html, std::string(">") + label + "</text>"), 3u) << label;
  }
  ExpectNothingLoadedFromOutside(html);
  ExpectNoNonFiniteNumbers(html);
  ExpectEveryAngleBracketIsMarkup(html);
}

TEST(HtmlReport, EscapesNamesFromTheTrace) {
  ReportInput in = ThreeRuns();
  in.trace = "x<script>'1'</script>";
  in.runs[1].policy = "p&q";
  const std::string html = Html(in);
  EXPECT_EQ(html.find(kOddShare), std::string::npos);
  EXPECT_NE(html.find("a&lt;b&amp;&quot;c&quot;"), std::string::npos);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("x&lt;script&gt;&#39;1&#39;&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("p&q"), std::string::npos);
  ExpectEveryAngleBracketIsMarkup(html);
  EXPECT_NE(html.find("p&amp;q"), std::string::npos);
}

TEST(HtmlReport, EveryChartHasALegendNamingEachPolicy) {
  const std::string html = Html(ThreeRuns());
  std::size_t legends = 0;
  for (std::size_t at = html.find("<g class=\"legend\">"); at != std::string::npos;
       at = html.find("<g class=\"legend\">", at + 1)) {
    ++legends;
    const std::string legend = html.substr(at, html.find("</g>", at) - at);
    for (const char* policy : {"fair-share", "strict", "lend-all"}) {
      EXPECT_NE(legend.find(std::string(">") + policy + "</text>"), std::string::npos) << legend;
    }
  }
  EXPECT_EQ(legends, Count(html, "<svg"));
  // One colour per policy, the same everywhere.
  EXPECT_NE(html.find("stroke=\"#4e79a7\""), std::string::npos);
  EXPECT_NE(html.find("stroke=\"#f28e2b\""), std::string::npos);
  EXPECT_NE(html.find("stroke=\"#e15759\""), std::string::npos);
}

TEST(HtmlReport, OnePolylinePointPerUsageBucket) {
  const ReportInput in = ThreeRuns();
  // The pool, then the shares in name order (kOddShare sorts before "batch"); "lend-all" has
  // no usage for "batch", so it draws no line there.
  const std::vector<std::size_t> expected = {120, 60, 90, 120, 60, 90, 120, 60};
  EXPECT_EQ(PolylinePoints(Html(in)), expected);
}

TEST(HtmlReport, EachLineUsesItsOwnRunsBucketWidth) {
  ReportInput in = ThreeRuns();
  in.runs.resize(2);
  in.runs[0].pool_usage = {1, 1, 1, 1};  // 4 x 60s: ends at 3 minutes
  in.runs[1].pool_usage = {1, 1};        // 2 x 120s: ends at 2 minutes
  in.runs[0].shares.clear();
  in.runs[1].shares.clear();
  const std::string html = Html(in);
  auto last_x = [&](std::size_t which) {
    std::size_t at = html.find("<polyline");
    for (std::size_t i = 0; i < which; ++i) at = html.find("<polyline", at + 1);
    const std::size_t end = html.find('"', html.find("points=\"", at) + 8);
    const std::size_t last = html.rfind(' ', end);
    return std::stod(html.substr(last + 1, html.find(',', last) - last - 1));
  };
  auto first_x = [&](std::size_t which) {
    std::size_t at = html.find("<polyline");
    for (std::size_t i = 0; i < which; ++i) at = html.find("<polyline", at + 1);
    const std::size_t begin = html.find("points=\"", at) + 8;
    return std::stod(html.substr(begin, html.find(',', begin) - begin));
  };
  // Same start; the 60s run's last point is 3 minutes in, the 120s run's 2 minutes in.
  EXPECT_EQ(first_x(0), first_x(1));
  const double per_minute = (last_x(0) - first_x(0)) / 3;
  EXPECT_NEAR(last_x(1) - first_x(1), 2 * per_minute, 0.2);
}

TEST(HtmlReport, ZeroLimitsEmptySeriesAndBrokenNumbersDrawNothingNonFinite) {
  ReportInput in;
  in.trace = "edge";
  RunResult r;
  r.policy = "only";
  r.bucket_seconds = 0;  // not said: falls back to the span, then to 1s
  r.overall.utilization = std::numeric_limits<double>::quiet_NaN();
  r.overall.wait.p50 = std::numeric_limits<double>::infinity();
  r.jain_index = std::numeric_limits<double>::quiet_NaN();
  ShareResult empty;
  empty.queue = "q";
  empty.share = "empty";
  ShareResult broken = empty;
  broken.share = "broken";
  broken.usage = {std::numeric_limits<double>::quiet_NaN(), 1,
                  std::numeric_limits<double>::infinity()};
  broken.figures.lost_instance_hours = std::numeric_limits<double>::quiet_NaN();
  broken.figures.utilization = std::numeric_limits<double>::infinity();
  ShareResult single = empty;
  single.share = "single";
  single.usage = {2};
  r.shares = {broken, empty, single};
  in.runs.push_back(r);
  const std::string html = Html(in);
  EXPECT_EQ(Count(html, "<svg"), 2 * 3 + 3u);
  EXPECT_EQ(PolylinePoints(html), (std::vector<std::size_t>{3, 1}));
  EXPECT_EQ(Count(html, "<circle"), 1u) << "a one-point series is still seen";
  ExpectNoNonFiniteNumbers(html);
  ExpectNothingLoadedFromOutside(html);
  ExpectNoNonFiniteNumbers(Text(in));

  // A run with nothing at all.
  ReportInput bare;
  bare.trace = "bare";
  bare.runs.emplace_back();
  const std::string bare_html = Html(bare);
  EXPECT_EQ(Count(bare_html, "<svg"), 3u);
  EXPECT_NE(bare_html.find(">no shares</text>"), std::string::npos);
  ExpectNoNonFiniteNumbers(bare_html);
  EXPECT_TRUE(PolylinePoints(bare_html).empty());
}

TEST(HtmlReport, NoRunsStillAPage) {
  const std::string html = Html(ReportInput{"nothing", {}});
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("No runs."), std::string::npos);
  EXPECT_EQ(Count(html, "<svg"), 0u);
}

TEST(HtmlReport, SameInputSameBytes) { EXPECT_EQ(Html(ThreeRuns()), Html(ThreeRuns())); }

TEST(HtmlReport, LimitLineIsDashedAndSharedWhenPoliciesAgree) {
  const std::string html = Html(ThreeRuns());
  // Pool and two shares, every policy with the same limit: one grey line each.
  EXPECT_EQ(Count(html, "<line class=\"limit\""), 3u);
  ReportInput in = ThreeRuns();
  in.runs[2].overall.limit = 20;
  EXPECT_EQ(Count(Html(in), "<line class=\"limit\""), 5u);
}

}  // namespace
}  // namespace allot::sim
