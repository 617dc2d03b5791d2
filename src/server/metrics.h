#pragma once

// A small Prometheus registry and the text exposition format 0.0.4 (Debian ships no C++ client
// library; the format is small). Counters and histograms live in a Registry and are updated from
// any thread without a lock on the hot path: relaxed atomics, and a family's short mutex only to
// find (or make) the series of a label set, which callers on a hot path may keep. Gauges computed
// at scrape time (the engine's usage) are handed to Render as plain Families.
//
// Render is deterministic: families by name, series by label values, buckets by bound; label
// values and HELP text escaped as the format says.
//
// Thread-safety: Counter, Histogram, the families and Registry may be used from any thread.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace allot::server::metrics {

enum class Type : std::uint8_t { kCounter, kGauge, kHistogram };

// A family as rendered: a snapshot of a registered one, or gauges computed at scrape time.
struct Family {
  std::string name;  // e.g. "allot_preemptions_total"
  std::string help;
  Type type = Type::kGauge;
  std::vector<std::string> label_names;
  struct Point {  // a counter's or a gauge's series
    std::vector<std::string> label_values;
    double value = 0;
  };
  struct HistogramPoint {
    std::vector<std::string> label_values;
    std::vector<std::uint64_t> cumulative;  // per bound of `bounds`, then +Inf
    double sum = 0;
    std::uint64_t count = 0;
  };
  std::vector<double> bounds;  // histograms: the upper bounds, ascending, without +Inf
  std::vector<Point> points;
  std::vector<HistogramPoint> histogram_points;

  // Adds a gauge or counter series; `label_values` in the order of label_names.
  void Add(std::vector<std::string> label_values, double value) {
    points.push_back({std::move(label_values), value});
  }
};

// The text format's pieces, exposed for the tests.
std::string EscapeLabelValue(std::string_view value);  // \ " and newline escaped
std::string EscapeHelp(std::string_view help);         // \ and newline escaped
std::string FormatValue(double value);                 // shortest round-trip; +Inf, -Inf, NaN

// The exposition of `families`: sorted by name, series by label values. A family without a
// series still gets its HELP and TYPE lines.
std::string Render(std::vector<Family> families);

// A monotonically increasing value (events, seconds).
class Counter {
 public:
  void Add(double amount = 1) { value_.fetch_add(amount, std::memory_order_relaxed); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Observations counted in fixed buckets (stored per bucket, rendered cumulative).
class Histogram {
 public:
  explicit Histogram(const std::vector<double>& bounds);  // ascending, without +Inf
  void Observe(double value);
  Family::HistogramPoint Snapshot() const;  // without label values

 private:
  const std::vector<double>& bounds_;                      // the family's
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // bounds_.size() + 1 (+Inf)
  std::atomic<double> sum_{0};
  std::atomic<std::uint64_t> count_{0};
};

// Series of one metric by label values. With(...) makes a series on first use; the reference
// stays valid as long as the family.
template <typename Series>
class SeriesFamily {
 public:
  SeriesFamily(std::string name, std::string help, std::vector<std::string> label_names,
               std::vector<double> bounds = {})
      : name_(std::move(name)),
        help_(std::move(help)),
        label_names_(std::move(label_names)),
        bounds_(std::move(bounds)) {}

  Series& With(const std::vector<std::string>& label_values);
  Family Snapshot() const;

 private:
  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
  const std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<Series>> series_;  // guarded by mu_
};

using CounterFamily = SeriesFamily<Counter>;
using HistogramFamily = SeriesFamily<Histogram>;

// The registered families. Adding happens once, at start; the families live as long as the
// registry.
class Registry {
 public:
  CounterFamily& AddCounter(std::string name, std::string help,
                            std::vector<std::string> label_names);
  HistogramFamily& AddHistogram(std::string name, std::string help,
                                std::vector<std::string> label_names, std::vector<double> bounds);
  // Snapshots of every registered family (rendered together with scrape-time gauges).
  std::vector<Family> Snapshot() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<CounterFamily>> counters_;      // guarded by mu_
  std::vector<std::unique_ptr<HistogramFamily>> histograms_;  // guarded by mu_
};

// Bounds start, start*factor, ... (count of them): for latencies and sizes.
std::vector<double> ExponentialBounds(double start, double factor, int count);

}  // namespace allot::server::metrics
