// The HTML report: one file that opens from disk without a server or a network, so it can be
// mailed or attached to a ticket. Styles are inline, charts are inline SVG drawn here (no
// script), and every name from the trace is escaped because trace files are user input.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "common/strings.h"
#include "sim/report.h"
#include "sim/report_format.h"

namespace allot::sim {
namespace {

using report::ShareKey;

// ---- Text and numbers ------------------------------------------------------------------------

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A value to draw: NaN or infinity from a broken run must not reach an SVG attribute.
double Drawable(double v) { return std::isfinite(v) ? v : 0; }

// An SVG coordinate or length, one decimal (a tenth of a pixel is finer than any screen).
std::string Px(double v) { return report::StripPointZero(report::Fixed(Drawable(v), 1)); }

// The first `n` characters, whole UTF-8 sequences only.
std::string FirstCodePoints(std::string_view text, std::size_t n) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && seen++ == n) {
      return std::string(text.substr(0, i));
    }
  }
  return std::string(text);
}

std::string Truncate(std::string_view text, std::size_t max_chars) {
  if (CodePoints(text) <= max_chars) return std::string(text);
  return FirstCodePoints(text, max_chars > 1 ? max_chars - 1 : 0) + "\u2026";
}

// No fonts are measured here (no script, no server): an 11px sans-serif character is about
// 6.2px wide on average, close enough to lay out legends and labels.
constexpr double kCharWidth = 6.2;

// ---- Colours ---------------------------------------------------------------------------------

// One colour per run by its position, the same in every chart (Tableau 10).
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr std::size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);
constexpr const char* kLimitColour = "#555";

std::string Colour(std::size_t run) { return kPalette[run % kPaletteSize]; }

// Lines of different policies that overlap (equal usage) stay apart by their dash pattern and
// their markers, not only by colour.
constexpr std::string_view kDashes[] = {"", "7 3", "2 2", "9 3 2 3", "4 4"};
std::string_view Dash(std::size_t run) { return kDashes[run % std::size(kDashes)]; }

void WriteMarker(std::size_t run, double x, double y, std::ostream& out);

// ---- Axes ------------------------------------------------------------------------------------

struct Ticks {
  double step = 1;
  std::vector<double> values;  // from 0 up to the axis's end
  double end() const { return values.back(); }
};

// Round steps (1, 2 or 5 times a power of ten) that cover [0, max] in about five ticks.
Ticks NiceTicks(double max, bool whole_numbers) {
  if (!std::isfinite(max) || max <= 0) max = 1;
  const double raw = max / 5;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  const double normalized = raw / magnitude;
  double step = (normalized <= 1 ? 1 : normalized <= 2 ? 2 : normalized <= 5 ? 5 : 10) * magnitude;
  if (whole_numbers) step = std::max(step, 1.0);
  const long count = std::lround(std::ceil(max / step - 1e-9));
  Ticks t;
  t.step = step;
  for (long k = 0; k <= count; ++k) t.values.push_back(static_cast<double>(k) * step);
  return t;
}

// Ticks at durations a person would pick (15m, 6h, 7d, ...), at most about six of them.
Ticks TimeTicks(double extent_seconds) {
  static constexpr double kSteps[] = {1,       2,       5,       10,       15,      30,     60,
                                      120,     300,     600,     900,      1800,    3600,   7200,
                                      10800,   21600,   43200,   86400,    172800,  604800, 1209600,
                                      2592000, 5184000, 7776000, 15552000, 31536000};
  if (!std::isfinite(extent_seconds) || extent_seconds <= 0) extent_seconds = 1;
  double step = kSteps[std::size(kSteps) - 1];
  if (extent_seconds / step > 6) {
    step *= std::ceil(extent_seconds / step / 6);  // whole years beyond that
  } else {
    for (double s : kSteps) {
      if (extent_seconds / s <= 6) {
        step = s;
        break;
      }
    }
  }
  Ticks t;
  t.step = step;
  const long count = std::lround(std::floor(extent_seconds / step + 1e-9));
  for (long k = 0; k <= count; ++k) t.values.push_back(static_cast<double>(k) * step);
  return t;
}

std::string TickLabel(double value, double step) {
  if (value >= 10000) return report::FormatCompact(value);
  const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return report::Fixed(value, std::min(decimals, 6));
}

// Maps a value range onto a pixel range; an empty range maps everything to its start.
struct Scale {
  double from0, from1, to0, to1;
  double operator()(double v) const {
    const double span = from1 - from0;
    if (!(std::fabs(span) > 0)) return to0;
    return to0 + (Drawable(v) - from0) / span * (to1 - to0);
  }
};

// ---- Chart frame: title, legend, plot area ---------------------------------------------------

enum class Mark { kLine, kDashed, kBox, kLightBox };

struct LegendEntry {
  std::string label;
  std::string colour;
  Mark mark;
  std::optional<std::size_t> run;  // a policy's line: its dash pattern and marker
};

std::vector<LegendEntry> PolicyLegend(const ReportInput& in, Mark mark) {
  std::vector<LegendEntry> entries;
  for (std::size_t i = 0; i < in.runs.size(); ++i) {
    entries.push_back({in.runs[i].policy, Colour(i), mark, i});
  }
  return entries;
}

constexpr double kTitleY = 17;
constexpr double kLegendTop = 28;
constexpr double kLegendRow = 16;

struct LegendPlace {
  double x, y;
};

// Entries left to right, wrapping onto a new row when the chart is full.
std::vector<LegendPlace> LayOutLegend(const std::vector<LegendEntry>& entries, double left,
                                      double right) {
  std::vector<LegendPlace> places;
  double x = left;
  double y = kLegendTop;
  for (const LegendEntry& e : entries) {
    const double width = 24 + kCharWidth * static_cast<double>(CodePoints(e.label)) + 14;
    if (x > left && x + width > right) {
      x = left;
      y += kLegendRow;
    }
    places.push_back({x, y});
    x += width;
  }
  return places;
}

double LegendHeight(const std::vector<LegendPlace>& places) {
  return places.empty() ? 0 : places.back().y - kLegendTop + kLegendRow;
}

void WriteLegendMark(const LegendEntry& e, double x, double y, std::ostream& out) {
  const std::string& c = e.colour;
  switch (e.mark) {
    case Mark::kLine:
    case Mark::kDashed:
      out << "<line x1=\"" << Px(x) << "\" y1=\"" << Px(y) << "\" x2=\"" << Px(x + 18) << "\" y2=\""
          << Px(y) << "\" stroke=\"" << c << "\" stroke-width=\"2\""
          << (e.mark == Mark::kDashed ? " stroke-dasharray=\"5 3\"" : "");
      if (e.run && !Dash(*e.run).empty()) out << " stroke-dasharray=\"" << Dash(*e.run) << "\"";
      out << "/>";
      if (e.mark == Mark::kLine && e.run) WriteMarker(*e.run, x + 9, y, out);
      break;
    case Mark::kBox:
    case Mark::kLightBox:
      out << "<rect x=\"" << Px(x + 3) << "\" y=\"" << Px(y - 5) << "\" width=\"12\" height=\"10\""
          << " fill=\"" << c << "\"" << (e.mark == Mark::kLightBox ? " fill-opacity=\"0.4\"" : "")
          << "/>";
      break;
  }
}

void WriteLegend(const std::vector<LegendEntry>& entries, const std::vector<LegendPlace>& places,
                 std::ostream& out) {
  out << "<g class=\"legend\">";
  for (std::size_t i = 0; i < entries.size(); ++i) {
    WriteLegendMark(entries[i], places[i].x, places[i].y, out);
    out << "<text x=\"" << Px(places[i].x + 24) << "\" y=\"" << Px(places[i].y + 4) << "\">"
        << Escape(entries[i].label) << "</text>";
  }
  out << "</g>\n";
}

struct Plot {
  double left, top, width, height;
  double right() const { return left + width; }
  double bottom() const { return top + height; }
};

// Opens an <svg> with its title and legend on top and returns where the plot goes below them.
Plot OpenChart(const std::string& title, const std::vector<LegendEntry>& legend, double width,
               double plot_height, double left_margin, double right_margin, std::ostream& out) {
  constexpr double kBottomMargin = 34;
  const std::vector<LegendPlace> places = LayOutLegend(legend, left_margin, width - right_margin);
  const double top = kLegendTop + LegendHeight(places) + 4;
  const double height = top + plot_height + kBottomMargin;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" << Px(width)
      << "\" height=\"" << Px(height) << "\" viewBox=\"0 0 " << Px(width) << " " << Px(height)
      << "\" role=\"img\" aria-label=\"" << Escape(title) << "\">\n"
      << "<text class=\"title\" x=\"" << Px(left_margin) << "\" y=\"" << Px(kTitleY) << "\">"
      << Escape(title) << "</text>\n";
  WriteLegend(legend, places, out);
  return {left_margin, top, width - left_margin - right_margin, plot_height};
}

// Horizontal grid lines with their labels on the left: the value axis of a vertical chart.
void WriteValueAxis(const Plot& plot, const Ticks& ticks, const Scale& y, std::ostream& out) {
  out << "<g class=\"axis\">";
  for (double v : ticks.values) {
    out << "<line class=\"grid\" x1=\"" << Px(plot.left) << "\" y1=\"" << Px(y(v)) << "\" x2=\""
        << Px(plot.right()) << "\" y2=\"" << Px(y(v)) << "\"/>"
        << "<text x=\"" << Px(plot.left - 5) << "\" y=\"" << Px(y(v) + 4)
        << "\" text-anchor=\"end\">" << TickLabel(v, ticks.step) << "</text>";
  }
  out << "<line x1=\"" << Px(plot.left) << "\" y1=\"" << Px(plot.top) << "\" x2=\"" << Px(plot.left)
      << "\" y2=\"" << Px(plot.bottom()) << "\"/>"
      << "<line x1=\"" << Px(plot.left) << "\" y1=\"" << Px(plot.bottom()) << "\" x2=\""
      << Px(plot.right()) << "\" y2=\"" << Px(plot.bottom()) << "\"/></g>\n";
}

// Tick marks and labels under the plot, at positions already scaled.
void WriteBottomLabels(const Plot& plot, const std::vector<double>& xs,
                       const std::vector<std::string>& labels, std::ostream& out) {
  out << "<g class=\"axis\">";
  for (std::size_t i = 0; i < xs.size(); ++i) {
    out << "<line x1=\"" << Px(xs[i]) << "\" y1=\"" << Px(plot.bottom()) << "\" x2=\"" << Px(xs[i])
        << "\" y2=\"" << Px(plot.bottom() + 4) << "\"/>"
        << "<text x=\"" << Px(xs[i]) << "\" y=\"" << Px(plot.bottom() + 16)
        << "\" text-anchor=\"middle\">" << Escape(labels[i]) << "</text>";
  }
  out << "</g>\n";
}

void WriteAxisNote(const Plot& plot, std::string_view note, std::ostream& out) {
  out << "<text class=\"note\" x=\"" << Px(plot.right()) << "\" y=\"" << Px(plot.bottom() + 30)
      << "\" text-anchor=\"end\">" << Escape(note) << "</text>\n";
}

// ---- Usage over time -------------------------------------------------------------------------

struct UsageSeries {
  std::size_t run;
  const std::vector<double>* values;
  double bucket_seconds;
};

struct LimitMark {
  std::size_t run;
  double limit;
};

// The width of one bucket of a run; a run that did not say falls back to spreading its buckets
// over its span, so that a chart still has a time axis.
double BucketWidth(const RunResult& run, std::size_t buckets) {
  if (std::isfinite(run.bucket_seconds) && run.bucket_seconds > 0) return run.bucket_seconds;
  if (buckets > 0 && std::isfinite(run.span_seconds) && run.span_seconds > 0) {
    return run.span_seconds / static_cast<double>(buckets);
  }
  return 1;
}

// Circle, square, triangle, diamond: one shape per policy, in its colour.
void WriteMarker(std::size_t run, double x, double y, std::ostream& out) {
  const std::string c = Colour(run);
  switch (run % 4) {
    case 0:  // a path, so that only a one-point series draws a <circle>
      out << "<path d=\"M" << Px(x - 2.8) << " " << Px(y) << "a2.8 2.8 0 1 0 5.6 0a2.8 2.8 0 1 0 "
          << "-5.6 0Z\" fill=\"" << c << "\"/>";
      break;
    case 1:
      out << "<rect x=\"" << Px(x - 2.6) << "\" y=\"" << Px(y - 2.6)
          << "\" width=\"5.2\" height=\"5.2\" fill=\"" << c << "\"/>";
      break;
    case 2:
      out << "<path d=\"M" << Px(x) << " " << Px(y - 3.4) << "L" << Px(x + 3.2) << " "
          << Px(y + 2.4) << "L" << Px(x - 3.2) << " " << Px(y + 2.4) << "Z\" fill=\"" << c
          << "\"/>";
      break;
    default:
      out << "<path d=\"M" << Px(x) << " " << Px(y - 3.4) << "L" << Px(x + 3.4) << " " << Px(y)
          << "L" << Px(x) << " " << Px(y + 3.4) << "L" << Px(x - 3.4) << " " << Px(y)
          << "Z\" fill=\"none\" stroke=\"" << c << "\" stroke-width=\"1.3\"/>";
  }
}

void WritePolyline(const UsageSeries& s, const std::string& policy, const Scale& x, const Scale& y,
                   std::ostream& out) {
  const std::vector<double>& values = *s.values;
  if (values.empty()) return;
  out << "<polyline class=\"series\" fill=\"none\" stroke=\"" << Colour(s.run)
      << "\" stroke-width=\"1.5\"";
  if (!Dash(s.run).empty()) out << " stroke-dasharray=\"" << Dash(s.run) << "\"";
  out << " points=\"";
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double t = static_cast<double>(i) * s.bucket_seconds;
    out << (i > 0 ? " " : "") << Px(x(t)) << "," << Px(y(std::max(0.0, Drawable(values[i]))));
  }
  out << "\"><title>" << Escape(policy) << "</title></polyline>\n";
  // About eight markers a line, each policy's shifted so that equal lines show every shape.
  const std::size_t every = std::max<std::size_t>(1, values.size() / 8);
  for (std::size_t i = (s.run * every / 4) % every; i < values.size(); i += every) {
    const double t = static_cast<double>(i) * s.bucket_seconds;
    WriteMarker(s.run, x(t), y(std::max(0.0, Drawable(values[i]))), out);
  }
  out << "\n";
  if (values.size() == 1) {  // a line of one point is invisible
    out << "<circle cx=\"" << Px(x(0)) << "\" cy=\"" << Px(y(std::max(0.0, Drawable(values[0]))))
        << "\" r=\"2.5\" fill=\"" << Colour(s.run) << "\"/>\n";
  }
}

void WriteLimits(const std::vector<LimitMark>& limits, const Plot& plot, const Scale& y,
                 std::ostream& out) {
  const bool all_equal = std::all_of(limits.begin(), limits.end(), [&](const LimitMark& m) {
    return m.limit == limits.front().limit;
  });
  for (const LimitMark& m : limits) {
    const std::string colour = all_equal ? kLimitColour : Colour(m.run);
    out << "<line class=\"limit\" x1=\"" << Px(plot.left) << "\" y1=\"" << Px(y(m.limit))
        << "\" x2=\"" << Px(plot.right()) << "\" y2=\"" << Px(y(m.limit)) << "\" stroke=\""
        << colour << "\" stroke-width=\"1.2\" stroke-dasharray=\"5 3\"><title>limit "
        << report::FormatCompact(m.limit) << "</title></line>\n";
    if (all_equal) break;  // one line says it for every policy
  }
}

void WriteUsageChart(const ReportInput& in, const std::string& title,
                     const std::vector<UsageSeries>& series, const std::vector<LimitMark>& limits,
                     std::ostream& out) {
  double extent = 0;
  double top = 0;
  for (const UsageSeries& s : series) {
    extent = std::max(extent, static_cast<double>(s.values->size()) * s.bucket_seconds);
    for (double v : *s.values) top = std::max(top, Drawable(v));
  }
  for (const LimitMark& m : limits) top = std::max(top, Drawable(m.limit));
  std::vector<LegendEntry> legend = PolicyLegend(in, Mark::kLine);
  legend.push_back({"limit", kLimitColour, Mark::kDashed});
  const Plot plot = OpenChart(title, legend, 400, 150, 46, 14, out);
  const Ticks y_ticks = NiceTicks(top, false);
  const Ticks x_ticks = TimeTicks(extent);
  const double x_end = std::max(Drawable(extent), x_ticks.end());
  const Scale x{0, x_end, plot.left, plot.right()};
  const Scale y{0, y_ticks.end(), plot.bottom(), plot.top};
  WriteValueAxis(plot, y_ticks, y, out);
  std::vector<double> xs;
  std::vector<std::string> labels;
  for (double t : x_ticks.values) {
    xs.push_back(x(t));
    labels.push_back(report::FormatDuration(t));
  }
  WriteBottomLabels(plot, xs, labels, out);
  WriteAxisNote(plot, "instances held over time", out);
  WriteLimits(limits, plot, y, out);
  for (const UsageSeries& s : series) WritePolyline(s, in.runs[s.run].policy, x, y, out);
  out << "</svg>\n";
}

void WriteUsageCharts(const ReportInput& in, const std::vector<ShareKey>& keys, bool many_queues,
                      std::ostream& out) {
  out << "<h2>Usage over time</h2>\n<p>Mean instances held per chart bucket, one line per "
         "policy; the dashed line is the limit (the pool's, or the share's).</p>\n"
      << "<div class=\"grid\">\n";
  std::vector<UsageSeries> pool;
  std::vector<LimitMark> pool_limit;
  for (std::size_t i = 0; i < in.runs.size(); ++i) {
    const RunResult& run = in.runs[i];
    pool.push_back({i, &run.pool_usage, BucketWidth(run, run.pool_usage.size())});
    pool_limit.push_back({i, static_cast<double>(run.overall.limit)});
  }
  WriteUsageChart(in, "Pool (all queues)", pool, pool_limit, out);
  for (const ShareKey& key : keys) {
    std::vector<UsageSeries> series;
    std::vector<LimitMark> limits;
    for (std::size_t i = 0; i < in.runs.size(); ++i) {
      const ShareResult* share = report::FindShare(in.runs[i], key);
      if (share == nullptr) continue;
      series.push_back({i, &share->usage, BucketWidth(in.runs[i], share->usage.size())});
      limits.push_back({i, static_cast<double>(share->figures.limit)});
    }
    WriteUsageChart(in, report::ShareLabel(key, many_queues), series, limits, out);
  }
  out << "</div>\n";
}

// ---- Wait-time distribution ------------------------------------------------------------------

struct HistogramSeries {
  std::size_t run;
  const std::int64_t* counts;  // kWaitBins of them
};

void WriteWaitChart(const ReportInput& in, const std::string& title,
                    const std::vector<HistogramSeries>& series, std::ostream& out) {
  std::int64_t most = 0;
  for (const HistogramSeries& s : series) {
    for (int b = 0; b < kWaitBins; ++b) most = std::max(most, s.counts[b]);
  }
  const Plot plot = OpenChart(title, PolicyLegend(in, Mark::kBox), 400, 150, 46, 14, out);
  const Ticks y_ticks = NiceTicks(static_cast<double>(most), true);
  const Scale y{0, y_ticks.end(), plot.bottom(), plot.top};
  WriteValueAxis(plot, y_ticks, y, out);
  // Every run keeps its slot in each bin, so a colour sits in the same place in every chart.
  const double bin_width = plot.width / kWaitBins;
  const double bar_width =
      bin_width * 0.8 / static_cast<double>(std::max<std::size_t>(1, in.runs.size()));
  std::vector<double> centres;
  for (int b = 0; b < kWaitBins; ++b) {
    const double bin_left = plot.left + bin_width * b;
    centres.push_back(bin_left + bin_width / 2);
    for (const HistogramSeries& s : series) {
      const std::int64_t count = s.counts[b];
      if (count <= 0) continue;
      const double x = bin_left + bin_width * 0.1 + bar_width * static_cast<double>(s.run);
      const double y_top = y(static_cast<double>(count));
      out << "<rect x=\"" << Px(x) << "\" y=\"" << Px(y_top) << "\" width=\""
          << Px(std::max(1.0, bar_width - 1)) << "\" height=\"" << Px(plot.bottom() - y_top)
          << "\" fill=\"" << Colour(s.run) << "\"><title>" << Escape(in.runs[s.run].policy) << ": "
          << report::FormatCount(count) << " waits "
          << Escape(report::WaitBinLabels()[static_cast<std::size_t>(b)]) << "</title></rect>";
    }
  }
  out << "\n";
  WriteBottomLabels(plot, centres, report::WaitBinLabels(), out);
  WriteAxisNote(plot, "jobs by wait before first dispatch", out);
  out << "</svg>\n";
}

void WriteWaitCharts(const ReportInput& in, const std::vector<ShareKey>& keys, bool many_queues,
                     std::ostream& out) {
  out << "<h2>Wait-time distribution</h2>\n<p>Jobs by their wait from submission to first "
         "dispatch, in decade bins; one bar per policy.</p>\n<div class=\"grid\">\n";
  std::vector<HistogramSeries> overall;
  for (std::size_t i = 0; i < in.runs.size(); ++i) {
    overall.push_back({i, in.runs[i].overall.wait_histogram});
  }
  WriteWaitChart(in, "All shares", overall, out);
  for (const ShareKey& key : keys) {
    std::vector<HistogramSeries> series;
    for (std::size_t i = 0; i < in.runs.size(); ++i) {
      const ShareResult* share = report::FindShare(in.runs[i], key);
      if (share != nullptr) series.push_back({i, share->figures.wait_histogram});
    }
    WriteWaitChart(in, report::ShareLabel(key, many_queues), series, out);
  }
  out << "</div>\n";
}

// ---- Lost work -------------------------------------------------------------------------------

struct LostBar {
  std::size_t run;
  double lost;
  double restart;
};

struct LostRow {
  std::string label;
  std::vector<LostBar> bars;
};

constexpr double kLostBarHeight = 10;
constexpr double kLostBarGap = 2;
constexpr double kLostRowGap = 10;

void WriteLostRow(const ReportInput& in, const LostRow& row, double row_top, const Plot& plot,
                  const Scale& x, std::ostream& out) {
  const double band = static_cast<double>(in.runs.size()) * (kLostBarHeight + kLostBarGap);
  const std::size_t max_chars = static_cast<std::size_t>((plot.left - 10) / kCharWidth);
  out << "<text x=\"" << Px(plot.left - 6) << "\" y=\"" << Px(row_top + band / 2 + 4)
      << "\" text-anchor=\"end\"><title>" << Escape(row.label) << "</title>"
      << Escape(Truncate(row.label, max_chars)) << "</text>";
  for (const LostBar& bar : row.bars) {
    const double lost = std::max(0.0, Drawable(bar.lost));
    const double restart = std::max(0.0, Drawable(bar.restart));
    const double y = row_top + static_cast<double>(bar.run) * (kLostBarHeight + kLostBarGap);
    const std::string tip = Escape(in.runs[bar.run].policy) + ": lost " +
                            report::FormatAmount(lost) + ", restart " +
                            report::FormatAmount(restart) + " inst-h";
    out << "<rect x=\"" << Px(plot.left) << "\" y=\"" << Px(y) << "\" width=\""
        << Px(x(lost) - plot.left) << "\" height=\"" << Px(kLostBarHeight) << "\" fill=\""
        << Colour(bar.run) << "\"><title>" << tip << "</title></rect>"
        << "<rect x=\"" << Px(x(lost)) << "\" y=\"" << Px(y) << "\" width=\""
        << Px(x(lost + restart) - x(lost)) << "\" height=\"" << Px(kLostBarHeight) << "\" fill=\""
        << Colour(bar.run) << "\" fill-opacity=\"0.4\"><title>" << tip << "</title></rect>"
        << "<text class=\"value\" x=\"" << Px(x(lost + restart) + 4) << "\" y=\""
        << Px(y + kLostBarHeight - 1) << "\">" << report::FormatCompact(lost + restart)
        << "</text>";
  }
  out << "\n";
}

void WriteLostChart(const ReportInput& in, const std::vector<LostRow>& rows, std::ostream& out) {
  std::size_t longest = 0;
  double most = 0;
  for (const LostRow& row : rows) {
    longest = std::max(longest, CodePoints(row.label));
    for (const LostBar& bar : row.bars) {
      most =
          std::max(most, std::max(0.0, Drawable(bar.lost)) + std::max(0.0, Drawable(bar.restart)));
    }
  }
  const double label_width =
      std::clamp(kCharWidth * static_cast<double>(longest) + 14, 60.0, 220.0);
  const double band = static_cast<double>(in.runs.size()) * (kLostBarHeight + kLostBarGap);
  const double plot_height =
      std::max(20.0, static_cast<double>(rows.size()) * (band + kLostRowGap));
  std::vector<LegendEntry> legend = PolicyLegend(in, Mark::kBox);
  legend.push_back({"restart overhead (lighter part)", "#888", Mark::kLightBox});
  const Plot plot =
      OpenChart("Lost work per share", legend, 680, plot_height, label_width, 50, out);
  const Ticks x_ticks = NiceTicks(most, false);
  const Scale x{0, x_ticks.end(), plot.left, plot.right()};
  std::vector<double> xs;
  std::vector<std::string> labels;
  out << "<g class=\"axis\">";
  for (double v : x_ticks.values) {
    out << "<line class=\"grid\" x1=\"" << Px(x(v)) << "\" y1=\"" << Px(plot.top) << "\" x2=\""
        << Px(x(v)) << "\" y2=\"" << Px(plot.bottom()) << "\"/>";
    xs.push_back(x(v));
    labels.push_back(TickLabel(v, x_ticks.step));
  }
  out << "<line x1=\"" << Px(plot.left) << "\" y1=\"" << Px(plot.top) << "\" x2=\"" << Px(plot.left)
      << "\" y2=\"" << Px(plot.bottom()) << "\"/></g>\n";
  WriteBottomLabels(plot, xs, labels, out);
  WriteAxisNote(plot, "instance-hours lost at preemptions (+ restart overhead)", out);
  if (rows.empty()) {
    out << "<text class=\"note\" x=\"" << Px(plot.left + 6) << "\" y=\"" << Px(plot.top + 14)
        << "\">no shares</text>\n";
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const double row_top =
        plot.top + kLostRowGap / 2 + static_cast<double>(r) * (band + kLostRowGap);
    WriteLostRow(in, rows[r], row_top, plot, x, out);
  }
  out << "</svg>\n";
}

void WriteLostWork(const ReportInput& in, const std::vector<ShareKey>& keys, bool many_queues,
                   std::ostream& out) {
  std::vector<LostRow> rows;
  for (const ShareKey& key : keys) {
    LostRow row{report::ShareLabel(key, many_queues), {}};
    for (std::size_t i = 0; i < in.runs.size(); ++i) {
      const ShareResult* share = report::FindShare(in.runs[i], key);
      if (share == nullptr) continue;
      row.bars.push_back(
          {i, share->figures.lost_instance_hours, share->figures.restart_instance_hours});
    }
    rows.push_back(std::move(row));
  }
  out << "<h2>Lost work</h2>\n<p>Work since the last checkpoint lost at each preemption of a "
         "share's jobs, plus the restart overhead of resumed attempts, per policy.</p>\n";
  WriteLostChart(in, rows, out);
}

// ---- Tables ----------------------------------------------------------------------------------

std::string Swatch(std::size_t run) {
  return "<span class=\"swatch\" style=\"background:" + Colour(run) + "\"></span>";
}

void WritePolicies(const ReportInput& in, std::ostream& out) {
  out << "<ul class=\"policies\">\n";
  for (std::size_t i = 0; i < in.runs.size(); ++i) {
    const RunResult& run = in.runs[i];
    out << "<li>" << Swatch(i) << "<b>" << Escape(run.policy) << "</b>";
    if (!run.victim_order.empty()) out << " (victims: " << Escape(run.victim_order) << ")";
    out << "</li>\n";
  }
  out << "</ul>\n";
}

void WriteOverallTable(const ReportInput& in, std::ostream& out) {
  out << "<h2>Overall</h2>\n<div class=\"scroll\"><table>\n<thead><tr><th></th>";
  for (std::size_t i = 0; i < in.runs.size(); ++i) {
    out << "<th>" << Swatch(i) << Escape(in.runs[i].policy) << "</th>";
  }
  out << "</tr></thead>\n<tbody>\n";
  for (const report::OverallRow& row : report::OverallRows()) {
    out << "<tr><th scope=\"row\">" << Escape(row.label) << "</th>";
    for (const RunResult& run : in.runs) out << "<td>" << Escape(row.cell(run)) << "</td>";
    out << "</tr>\n";
  }
  out << "</tbody></table></div>\n";
}

// Two header rows: the policies over their blocks of columns, then the columns.
void WriteBlockHeader(const ReportInput& in, std::string_view corner,
                      const std::vector<std::string>& columns, std::ostream& out) {
  out << "<thead><tr><th rowspan=\"2\">" << Escape(corner) << "</th>";
  for (std::size_t i = 0; i < in.runs.size(); ++i) {
    out << "<th class=\"block\" colspan=\"" << columns.size() << "\">" << Swatch(i)
        << Escape(in.runs[i].policy) << "</th>";
  }
  out << "</tr>\n<tr>";
  for (std::size_t i = 0; i < in.runs.size(); ++i) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      out << "<th" << (c == 0 ? " class=\"block\"" : "") << ">" << Escape(columns[c]) << "</th>";
    }
  }
  out << "</tr></thead>\n";
}

// One row per share and policy, the share's rows together: the table is as wide as one
// policy's columns however many policies ran, so it fits the page.
void WriteShareTable(const ReportInput& in, const std::vector<ShareKey>& keys, bool many_queues,
                     std::ostream& out) {
  if (keys.empty()) return;
  const bool policies = in.runs.size() > 1;
  out << "<h2>Per share</h2>\n<p>util % = used / (limit &times; span), above 100 when the share "
         "borrowed; preempt = attempts ended by reclaim or in-share preemption.</p>\n"
      << "<div class=\"scroll fit\"><table>\n<thead><tr><th>"
      << (many_queues ? "queue/share" : "share") << "</th>" << (policies ? "<th>policy</th>" : "");
  for (const report::ShareColumn& c : report::ShareColumns()) {
    out << "<th>" << Escape(c.header) << "</th>";
  }
  out << "</tr></thead>\n<tbody>\n";
  for (const ShareKey& key : keys) {
    for (std::size_t i = 0; i < in.runs.size(); ++i) {
      out << "<tr" << (i == 0 ? " class=\"first\"" : "") << ">";
      if (i == 0) {
        out << "<th scope=\"rowgroup\" rowspan=\"" << in.runs.size() << "\">"
            << Escape(report::ShareLabel(key, many_queues)) << "</th>";
      }
      if (policies)
        out << "<td class=\"policy\">" << Swatch(i) << Escape(in.runs[i].policy) << "</td>";
      const ShareResult* share = report::FindShare(in.runs[i], key);
      for (const report::ShareColumn& c : report::ShareColumns()) {
        out << "<td>" << Escape(share != nullptr ? c.cell(share->figures) : "-") << "</td>";
      }
      out << "</tr>\n";
    }
  }
  out << "</tbody></table></div>\n";
}

void WriteGroupTable(const ReportInput& in, std::ostream& out) {
  const std::vector<std::string> names = report::AllGroups(in);
  if (names.empty()) return;
  std::vector<std::string> headers;
  for (const report::GroupColumn& c : report::GroupColumns()) headers.push_back(c.header);
  out << "<h2>Wait per job group</h2>\n<div class=\"scroll\"><table>\n";
  WriteBlockHeader(in, "group", headers, out);
  out << "<tbody>\n";
  for (const std::string& name : names) {
    out << "<tr><th scope=\"row\">" << Escape(name) << "</th>";
    for (const RunResult& run : in.runs) {
      const GroupResult* group = report::FindGroup(run, name);
      for (std::size_t c = 0; c < report::GroupColumns().size(); ++c) {
        const std::string cell =
            group != nullptr ? report::GroupColumns()[c].cell(group->wait) : "-";
        out << "<td" << (c == 0 ? " class=\"block\"" : "") << ">" << Escape(cell) << "</td>";
      }
    }
    out << "</tr>\n";
  }
  out << "</tbody></table></div>\n";
}

// ---- The page --------------------------------------------------------------------------------

constexpr std::string_view kStyle = R"(
body { font-family: system-ui, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px;
       color: #222; background: #fff; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 17px; margin-top: 28px; }
p.trace { color: #555; margin-top: 0; }
table { border-collapse: collapse; font-size: 13px; }
th, td { padding: 3px 8px; border-bottom: 1px solid #e4e4e4; white-space: nowrap; }
thead th { background: #f4f4f4; text-align: center; }
tbody th { text-align: left; font-weight: normal; }
td { text-align: right; font-variant-numeric: tabular-nums; }
.block { border-left: 2px solid #ccc; }
.scroll { overflow-x: auto; }
.fit table { width: 100%; }
.fit thead th { white-space: normal; }
.fit tr.first th, .fit tr.first td { border-top: 2px solid #ccc; }
.fit tbody th { vertical-align: top; }
td.policy { text-align: left; }
.swatch { display: inline-block; width: 11px; height: 11px; margin-right: 5px;
          vertical-align: -1px; border-radius: 2px; }
ul.policies { list-style: none; padding: 0; }
ul.policies li { margin: 2px 0; }
.grid { display: flex; flex-wrap: wrap; gap: 14px; }
svg.chart { border: 1px solid #e4e4e4; background: #fff; max-width: 100%; height: auto;
            font-size: 11px; }
svg .title { font-size: 13px; font-weight: bold; }
svg .note, svg .value { fill: #666; font-size: 10px; }
svg .axis line { stroke: #888; stroke-width: 1; }
svg .axis line.grid { stroke: #eee; }
svg .axis text { fill: #444; font-size: 10px; }
)";

}  // namespace

void WriteHtml(const ReportInput& in, std::ostream& out) {
  const std::vector<ShareKey> keys = report::AllShares(in);
  const bool many_queues = !keys.empty() && report::ManyQueues(keys);
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<title>Allot simulation: " << Escape(in.trace) << "</title>\n<style>" << kStyle
      << "</style>\n</head>\n<body>\n<h1>Allot simulation</h1>\n<p class=\"trace\">"
      << Escape(in.trace) << "</p>\n";
  if (in.runs.empty()) {
    out << "<p>No runs.</p>\n</body>\n</html>\n";
    return;
  }
  WritePolicies(in, out);
  WriteOverallTable(in, out);
  WriteShareTable(in, keys, many_queues, out);
  WriteGroupTable(in, out);
  WriteUsageCharts(in, keys, many_queues, out);
  WriteWaitCharts(in, keys, many_queues, out);
  WriteLostWork(in, keys, many_queues, out);
  out << "</body>\n</html>\n";
}

}  // namespace allot::sim
