#pragma once

// What the text and HTML reports share: how numbers and durations read, which shares and groups
// the runs hold between them, and which figures the tables show, so that both reports say the
// same thing in the same words. Header-only (everything inline) to keep the library's sources as
// they are listed.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "sim/report.h"
#include "sim/result.h"

namespace allot::sim::report {

// ---- Numbers ---------------------------------------------------------------------------------

// `value` with `decimals` digits after the point. std::to_chars ignores the locale, so a report
// reads the same wherever it is written. Non-finite values read "-".
inline std::string Fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "-";
  char buf[400];  // room for the largest double in fixed notation
  const auto [end, ec] =
      std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::fixed, decimals);
  if (ec != std::errc()) return "-";
  std::string text(buf, end);
  // A small negative value rounds to "-0.0": the sign says nothing then.
  if (text.front() == '-' && text.find_first_not_of("-0.") == std::string::npos) text.erase(0, 1);
  return text;
}

// "1234567.8" -> "1,234,567.8": long amounts are read at a glance.
inline std::string GroupThousands(std::string text) {
  const std::size_t digits_begin = (!text.empty() && text.front() == '-') ? 1 : 0;
  std::size_t digits_end = text.find('.');
  if (digits_end == std::string::npos) digits_end = text.size();
  for (std::size_t i = digits_end; i > digits_begin + 3; i -= 3) text.insert(i - 3, ",");
  return text;
}

inline std::string StripPointZero(std::string text) {
  if (text.size() > 2 && text.ends_with(".0")) text.resize(text.size() - 2);
  return text;
}

inline std::string FormatCount(std::int64_t n) { return GroupThousands(std::to_string(n)); }

// Instance-hours and other amounts in the overall table: one decimal, thousands grouped.
inline std::string FormatAmount(double value) {
  return std::isfinite(value) ? GroupThousands(Fixed(value, 1)) : "-";
}

// A fraction as a percentage with one decimal ("87.3"); the unit is in the row's label.
inline std::string FormatPercent(double fraction) { return Fixed(fraction * 100, 1); }

// At most about four characters ("0", "3.4", "123", "1.2k", "45k", "6.7M") for the wide per-share
// tables, where many columns must share one terminal line.
inline std::string FormatCompact(double value) {
  if (!std::isfinite(value)) return "-";
  if (value == 0) return "0";
  struct Scale {
    double divisor;
    const char* suffix;
  };
  static constexpr Scale kScales[] = {{1, ""}, {1e3, "k"}, {1e6, "M"}, {1e9, "G"}};
  for (const Scale& s : kScales) {
    const double v = value / s.divisor;
    // Decide on the rounded value, so 9.96 reads "10" and 999.7 reads "1.0k".
    if (std::fabs(std::round(v * 10) / 10) < 10) return StripPointZero(Fixed(v, 1)) + s.suffix;
    if (std::fabs(std::round(v)) < 1000) return Fixed(v, 0) + s.suffix;
  }
  return Fixed(value / 1e12, 0) + "T";
}

inline std::string FormatCompactCount(std::int64_t n) {
  return n < 10000 && n > -10000 ? std::to_string(n) : FormatCompact(static_cast<double>(n));
}

// Seconds as a human duration with two or three significant digits: "0s", "0.4s", "12s",
// "3.4m", "45m", "2.1h", "1.2d", "30d".
inline std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds)) return "-";
  if (seconds < 0) return "-" + FormatDuration(-seconds);
  struct Unit {
    double seconds;
    const char* suffix;
    double next;  // how many of this unit make the next one
  };
  static constexpr Unit kUnits[] = {
      {1, "s", 60}, {60, "m", 60}, {3600, "h", 24}, {86400, "d", HUGE_VAL}};
  for (const Unit& u : kUnits) {
    const double v = seconds / u.seconds;
    const double rounded = v < 9.95 ? std::round(v * 10) / 10 : std::round(v);
    if (rounded >= u.next) continue;  // 59.7s reads "1m", not "60s"
    return StripPointZero(Fixed(v, v < 9.95 ? 1 : 0)) + u.suffix;
  }
  return "-";  // unreachable: days have no next unit
}

// ---- What the runs hold ----------------------------------------------------------------------

struct ShareKey {
  std::string queue;
  std::string share;
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 false positive on a defaulted <=>
  auto operator<=>(const ShareKey&) const = default;
};

// Every share of any run, by queue then share (the order RunResult::shares is in). Runs of one
// trace normally hold the same shares, but a policy may leave one out.
inline std::vector<ShareKey> AllShares(const ReportInput& in) {
  std::vector<ShareKey> keys;
  for (const RunResult& run : in.runs) {
    for (const ShareResult& s : run.shares) keys.push_back({s.queue, s.share});
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

// The queue is named only when there is more than one: "share" alone is easier to read.
inline bool ManyQueues(const std::vector<ShareKey>& keys) {
  return std::any_of(keys.begin(), keys.end(),
                     [&](const ShareKey& k) { return k.queue != keys.front().queue; });
}

inline std::string ShareLabel(const ShareKey& key, bool many_queues) {
  return many_queues ? key.queue + "/" + key.share : key.share;
}

inline const ShareResult* FindShare(const RunResult& run, const ShareKey& key) {
  for (const ShareResult& s : run.shares) {
    if (s.queue == key.queue && s.share == key.share) return &s;
  }
  return nullptr;
}

inline std::vector<std::string> AllGroups(const ReportInput& in) {
  std::vector<std::string> names;
  for (const RunResult& run : in.runs) {
    for (const GroupResult& g : run.groups) names.push_back(g.group);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

inline const GroupResult* FindGroup(const RunResult& run, std::string_view name) {
  for (const GroupResult& g : run.groups) {
    if (g.group == name) return &g;
  }
  return nullptr;
}

// ---- The figures the tables show -------------------------------------------------------------

// One row of the overall table: a label and how to read it off a run.
struct OverallRow {
  std::string label;
  std::function<std::string(const RunResult&)> cell;
};

inline std::string Pair(const std::string& a, const std::string& b) { return a + " / " + b; }

inline const std::vector<OverallRow>& OverallRows() {
  using R = const RunResult&;
  static const std::vector<OverallRow> kRows = {
      {"victim order", [](R r) { return r.victim_order.empty() ? "-" : r.victim_order; }},
      {"jobs", [](R r) { return FormatCount(r.overall.jobs); }},
      {"succeeded", [](R r) { return FormatCount(r.overall.succeeded); }},
      {"failed", [](R r) { return FormatCount(r.overall.failed); }},
      {"rejected", [](R r) { return FormatCount(r.overall.rejected); }},
      {"unfinished", [](R r) { return FormatCount(r.overall.unfinished); }},
      {"utilization %", [](R r) { return FormatPercent(r.overall.utilization); }},
      {"used inst-h", [](R r) { return FormatAmount(r.overall.used_instance_hours); }},
      {"idle while waiting inst-h",
       [](R r) { return FormatAmount(r.overall.idle_while_waiting_instance_hours); }},
      {"wait p50", [](R r) { return FormatDuration(r.overall.wait.p50); }},
      {"wait p90", [](R r) { return FormatDuration(r.overall.wait.p90); }},
      {"wait p99", [](R r) { return FormatDuration(r.overall.wait.p99); }},
      {"wait max", [](R r) { return FormatDuration(r.overall.wait.max); }},
      {"mean completion", [](R r) { return FormatDuration(r.overall.completion.mean); }},
      {"mean slowdown", [](R r) { return Fixed(r.overall.slowdown.mean, 2); }},
      {"preemptions reclaim / in-share",
       [](R r) {
         return Pair(FormatCount(r.overall.preemptions_reclaim),
                     FormatCount(r.overall.preemptions_in_share));
       }},
      {"lost inst-h", [](R r) { return FormatAmount(r.overall.lost_instance_hours); }},
      {"restart inst-h", [](R r) { return FormatAmount(r.overall.restart_instance_hours); }},
      {"guarantee shortfall inst-h",
       [](R r) { return FormatAmount(r.overall.guarantee_shortfall_instance_hours); }},
      {"reclaim latency p50 / p99",
       [](R r) {
         return Pair(FormatDuration(r.overall.reclaim_latency.p50),
                     FormatDuration(r.overall.reclaim_latency.p99));
       }},
      {"borrowed / lent inst-h",
       [](R r) {
         return Pair(FormatAmount(r.overall.borrowed_instance_hours),
                     FormatAmount(r.overall.lent_instance_hours));
       }},
      {"Jain's index", [](R r) { return Fixed(r.jain_index, 3); }},
      {"span", [](R r) { return FormatDuration(r.span_seconds); }},
  };
  return kRows;
}

// One column of a per-policy block in the per-share table. Values are compact because a block
// repeats for every policy on one line.
struct ShareColumn {
  std::string short_header;  // the terminal's
  std::string header;        // the page's
  std::function<std::string(const Figures&)> cell;
};

inline const std::vector<ShareColumn>& ShareColumns() {
  using F = const Figures&;
  static const std::vector<ShareColumn> kColumns = {
      {"util%", "util %", [](F f) { return Fixed(f.utilization * 100, 0); }},
      {"p50", "wait p50", [](F f) { return FormatDuration(f.wait.p50); }},
      {"p99", "wait p99", [](F f) { return FormatDuration(f.wait.p99); }},
      {"pre", "preempt",
       [](F f) { return FormatCompactCount(f.preemptions_reclaim + f.preemptions_in_share); }},
      {"lost", "lost inst-h", [](F f) { return FormatCompact(f.lost_instance_hours); }},
      {"short", "shortfall inst-h",
       [](F f) { return FormatCompact(f.guarantee_shortfall_instance_hours); }},
      {"borr", "borrowed inst-h", [](F f) { return FormatCompact(f.borrowed_instance_hours); }},
      {"lent", "lent inst-h", [](F f) { return FormatCompact(f.lent_instance_hours); }},
  };
  return kColumns;
}

// Says what the short headers mean; short enough for one terminal line.
inline constexpr std::string_view kShareColumnsLegend =
    "util% = used / (limit x span); p50, p99 = wait; pre = preemptions, reclaim + in-share; "
    "lost, short(fall), borr(owed), lent in inst-h";

struct GroupColumn {
  std::string header;
  std::function<std::string(const Distribution&)> cell;
};

inline const std::vector<GroupColumn>& GroupColumns() {
  using D = const Distribution&;
  static const std::vector<GroupColumn> kColumns = {
      {"mean", [](D d) { return FormatDuration(d.mean); }},
      {"p50", [](D d) { return FormatDuration(d.p50); }},
      {"p99", [](D d) { return FormatDuration(d.p99); }},
  };
  return kColumns;
}

// "<1s", "1-10s", ..., ">100h": the wait histogram's bins by their edges (kWaitBinEdges).
inline const std::vector<std::string>& WaitBinLabels() {
  static const std::vector<std::string> kLabels = {"<1s",    "1-10s", "10s-1m",  "1-10m",
                                                   "10m-1h", "1-10h", "10-100h", ">100h"};
  static_assert(kWaitBins == 8, "a label for each bin of kWaitBinEdges");
  return kLabels;
}

}  // namespace allot::sim::report
