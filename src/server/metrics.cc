#include "server/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <type_traits>

#include "common/check.h"

namespace allot::server::metrics {

namespace {

const char* TypeName(Type type) {
  switch (type) {
    case Type::kCounter:
      return "counter";
    case Type::kGauge:
      return "gauge";
    case Type::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// name{a="x",b="y"} (no braces without labels); `extra` is one more label (a bucket's le).
void AppendSeries(std::string& out, std::string_view name, const std::vector<std::string>& names,
                  const std::vector<std::string>& values, std::string_view extra_name = {},
                  std::string_view extra_value = {}) {
  out += name;
  if (names.empty() && extra_name.empty()) return;
  out += '{';
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ',';
    out += names[i];
    out += "=\"";
    out += EscapeLabelValue(values[i]);
    out += '"';
  }
  if (!extra_name.empty()) {
    if (!names.empty()) out += ',';
    out += extra_name;
    out += "=\"";
    out += extra_value;
    out += '"';
  }
  out += '}';
}

void AppendLine(std::string& out, double value) {
  out += ' ';
  out += FormatValue(value);
  out += '\n';
}

void RenderFamily(std::string& out, Family& f) {
  out += "# HELP " + f.name + " " + EscapeHelp(f.help) + "\n";
  out += "# TYPE " + f.name + " " + TypeName(f.type) + "\n";
  std::sort(f.points.begin(), f.points.end(),
            [](const auto& a, const auto& b) { return a.label_values < b.label_values; });
  for (const Family::Point& p : f.points) {
    ALLOT_CHECK(p.label_values.size() == f.label_names.size());
    AppendSeries(out, f.name, f.label_names, p.label_values);
    AppendLine(out, p.value);
  }
  std::sort(f.histogram_points.begin(), f.histogram_points.end(),
            [](const auto& a, const auto& b) { return a.label_values < b.label_values; });
  for (const Family::HistogramPoint& h : f.histogram_points) {
    ALLOT_CHECK(h.label_values.size() == f.label_names.size());
    ALLOT_CHECK(h.cumulative.size() == f.bounds.size() + 1);
    for (std::size_t i = 0; i <= f.bounds.size(); ++i) {
      const std::string le = i < f.bounds.size() ? FormatValue(f.bounds[i]) : "+Inf";
      AppendSeries(out, f.name + "_bucket", f.label_names, h.label_values, "le", le);
      AppendLine(out, static_cast<double>(h.cumulative[i]));
    }
    AppendSeries(out, f.name + "_sum", f.label_names, h.label_values);
    AppendLine(out, h.sum);
    AppendSeries(out, f.name + "_count", f.label_names, h.label_values);
    AppendLine(out, static_cast<double>(h.count));
  }
}

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  if (ec != std::errc()) return "NaN";  // cannot happen with 64 characters
  return std::string(buf, end);
}

std::string Render(std::vector<Family> families) {
  std::sort(families.begin(), families.end(),
            [](const Family& a, const Family& b) { return a.name < b.name; });
  std::string out;
  for (Family& f : families) RenderFamily(out, f);
  return out;
}

Histogram::Histogram(const std::vector<double>& bounds)
    : bounds_(bounds), buckets_(new std::atomic<std::uint64_t>[bounds.size() + 1]) {
  for (std::size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0);
}

void Histogram::Observe(double value) {
  // The first bound at or above the value (le is inclusive); past the last: +Inf.
  const auto it = std::lower_bound(bounds_.begin(), bounds_.end(), value);
  buckets_[static_cast<std::size_t>(it - bounds_.begin())].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

// Read without a lock: a scrape racing an observation may see its bucket and not yet its count,
// which the next scrape corrects. The +Inf bucket is the bucket total, so _count never disagrees
// with the buckets of the same snapshot.
Family::HistogramPoint Histogram::Snapshot() const {
  Family::HistogramPoint p;
  std::uint64_t running = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    p.cumulative.push_back(running);
  }
  p.count = running;
  p.sum = sum_.load(std::memory_order_relaxed);
  return p;
}

template <typename Series>
Series& SeriesFamily<Series>::With(const std::vector<std::string>& label_values) {
  ALLOT_CHECK(label_values.size() == label_names_.size());
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<Series>& s = series_[label_values];
  if (s == nullptr) {
    if constexpr (std::is_same_v<Series, Histogram>) {
      s = std::make_unique<Histogram>(bounds_);
    } else {
      s = std::make_unique<Series>();
    }
  }
  return *s;
}

template <typename Series>
Family SeriesFamily<Series>::Snapshot() const {
  Family f{.name = name_, .help = help_, .label_names = label_names_, .bounds = bounds_};
  std::lock_guard<std::mutex> lock(mu_);
  if constexpr (std::is_same_v<Series, Histogram>) {
    f.type = Type::kHistogram;
    for (const auto& [values, h] : series_) {
      Family::HistogramPoint p = h->Snapshot();
      p.label_values = values;
      f.histogram_points.push_back(std::move(p));
    }
  } else {
    f.type = Type::kCounter;
    for (const auto& [values, c] : series_) f.Add(values, c->Value());
  }
  return f;
}

template class SeriesFamily<Counter>;
template class SeriesFamily<Histogram>;

CounterFamily& Registry::AddCounter(std::string name, std::string help,
                                    std::vector<std::string> label_names) {
  std::lock_guard<std::mutex> lock(mu_);
  counters_.push_back(
      std::make_unique<CounterFamily>(std::move(name), std::move(help), std::move(label_names)));
  return *counters_.back();
}

HistogramFamily& Registry::AddHistogram(std::string name, std::string help,
                                        std::vector<std::string> label_names,
                                        std::vector<double> bounds) {
  ALLOT_CHECK(std::is_sorted(bounds.begin(), bounds.end()));
  std::lock_guard<std::mutex> lock(mu_);
  histograms_.push_back(std::make_unique<HistogramFamily>(
      std::move(name), std::move(help), std::move(label_names), std::move(bounds)));
  return *histograms_.back();
}

std::vector<Family> Registry::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Family> out;
  for (const auto& c : counters_) out.push_back(c->Snapshot());
  for (const auto& h : histograms_) out.push_back(h->Snapshot());
  return out;
}

std::vector<double> ExponentialBounds(double start, double factor, int count) {
  std::vector<double> bounds;
  double b = start;
  for (int i = 0; i < count; ++i, b *= factor) bounds.push_back(b);
  return bounds;
}

}  // namespace allot::server::metrics
