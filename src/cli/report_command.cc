// `allot report` (GET /allot/v1/report: per share usage, lost work, waits, preemptions and, with
// a price table, cost and what lending moved between shares) and `allot history export` (GET
// /allot/v1/history/jobs as Allot's trace CSV, for `allot sim --trace`).

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>

#include "cli/audit.h"
#include "cli/commands.h"
#include "common/civil_time.h"
#include "sim/trace.h"

namespace allot::cli {

namespace {

struct ReportArgs {
  std::string since = "7d";
  std::string until;
  std::string prices;
  std::string format = "text";
};

struct ExportArgs {
  std::string since = "30d";
  std::string until;
  std::string output;
};

// prices.yaml: `ml.g5.xlarge: 1.006`, dollars per instance-hour of each instance type.
std::map<std::string, double> ReadPrices(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw CliError("--prices " + path + ": " + e.what());
  }
  if (!root.IsMap()) {
    throw CliError("--prices " + path +
                   " must map instance types to dollars per instance-hour, "
                   "e.g. \"ml.g5.xlarge: 1.006\"");
  }
  std::map<std::string, double> prices;
  for (const auto& item : root) {
    const std::string unit = item.first.as<std::string>();
    double price = -1;
    try {
      price = item.second.as<double>();
    } catch (const YAML::Exception&) {
    }
    if (!(price >= 0) || !std::isfinite(price)) {
      throw CliError("--prices " + path + ": " + unit +
                     " must be a number of dollars per instance-hour, 0 or more");
    }
    prices[unit] = price;
  }
  return prices;
}

std::string Query(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string q;
  for (const auto& [key, value] : params) {
    if (value.empty()) continue;
    q += (q.empty() ? "" : "&") + key + "=" + PercentEncode(value);
  }
  return q;
}

std::pair<std::string, std::string> Window(const std::string& since, const std::string& until) {
  const Timestamp now = WallClockMillis();
  const Timestamp from = ParseTimeFlag(since, now, "--since");
  const Timestamp to = until.empty() ? now : ParseTimeFlag(until, now, "--until");
  if (from >= to) throw CliError("--since " + since + " is not before --until");
  return {std::to_string(from), std::to_string(to)};
}

std::string Fixed(double v, int decimals = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string Preemptions(const Json& p) {
  return std::to_string(p.value("reclaim", 0)) + "/" + std::to_string(p.value("in-share", 0)) +
         "/" + std::to_string(p.value("limit-lowered", 0));
}

std::vector<std::vector<std::string>> ShareRows(const Json& report, bool priced) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"queue/share", "used", "borrowed", "lent", "lost", "restart", "wait p50",
                  "wait p99", "preempted r/i/l", "jobs"});
  if (priced) rows.front().push_back("cost $");
  for (const Json& s : report.value("shares", Json::array())) {
    const Json& w = s["waits"];
    const Json& j = s["jobs"];
    std::vector<std::string> row = {s.value("queue", "") + "/" + s.value("share", ""),
                                    Fixed(s.value("usedInstanceHours", 0.0)),
                                    Fixed(s.value("borrowedInstanceHours", 0.0)),
                                    Fixed(s.value("lentInstanceHours", 0.0)),
                                    Fixed(s.value("lostInstanceHours", 0.0)),
                                    Fixed(s.value("restartInstanceHours", 0.0)),
                                    Fixed(w.value("p50Seconds", 0.0), 1) + " s",
                                    Fixed(w.value("p99Seconds", 0.0), 1) + " s",
                                    Preemptions(s["preemptions"]),
                                    std::to_string(j.value("succeeded", 0)) + " ok, " +
                                        std::to_string(j.value("failed", 0)) + " failed of " +
                                        std::to_string(j.value("submitted", 0))};
    if (priced) row.push_back(s.contains("cost") ? Fixed(s["cost"].get<double>(), 2) : "-");
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string LendingLine(const Json& f) {
  std::string line = f.value("borrower", "") + " used " + Fixed(f.value("instanceHours", 0.0)) +
                     " instance-hours of " + f.value("lender", "") + "'s idle " +
                     f.value("unit", "") + " in " + f.value("queue", "");
  if (f.contains("cost")) line += " ($" + Fixed(f["cost"].get<double>(), 2) + ")";
  return line;
}

void PrintText(const Json& report, bool priced, std::ostream& out) {
  out << "Usage from " << FormatRfc3339Utc(report.value("since", Timestamp{0})) << " to "
      << FormatRfc3339Utc(report.value("until", Timestamp{0}))
      << " (instance-hours; waits from submission to first start)\n\n";
  const auto rows = ShareRows(report, priced);
  std::vector<std::size_t> width(rows.front().size(), 0);
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i) {
      const std::string pad(width[i] - r[i].size(), ' ');
      line += (i == 0 ? r[i] + pad : "  " + pad + r[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
  if (rows.size() == 1) out << "(no share you may describe was used in this window)\n";
  const Json lending = report.value("lending", Json::array());
  if (!lending.empty()) {
    out << "\nLending (a borrower's hours shared among the lenders by what each lent):\n";
    for (const Json& f : lending) out << "  " << LendingLine(f) << '\n';
  }
  const Json unpriced = report.value("unpricedUnits", Json::array());
  if (priced && !unpriced.empty()) {
    out << "\nNo price for: ";
    for (std::size_t i = 0; i < unpriced.size(); ++i) {
      out << (i ? ", " : "") << unpriced[i].get<std::string>();
    }
    out << " (counted as $0)\n";
  }
}

std::string Html(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void PrintHtml(const Json& report, bool priced, std::ostream& out) {
  out << "<!doctype html><html><head><meta charset=\"utf-8\"><title>Allot usage report</title>"
         "<style>body{font-family:sans-serif;margin:1.5em;max-width:100%}"
         "table{border-collapse:collapse;font-size:.9em;width:100%}td,th{border:1px solid #ccc;"
         "padding:.25em .5em;text-align:right}td:first-child,th:first-child{text-align:left}"
         ".wrap{overflow-x:auto}</style></head><body>\n";
  out << "<h1>Usage report</h1><p>" << Html(FormatRfc3339Utc(report.value("since", Timestamp{0})))
      << " to " << Html(FormatRfc3339Utc(report.value("until", Timestamp{0})))
      << "; instance-hours, waits from submission to first start, preemptions by rule "
         "(reclaim/in-share/limit lowered).</p>\n<div class=\"wrap\"><table>\n";
  const auto rows = ShareRows(report, priced);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out << "<tr>";
    for (const std::string& cell : rows[r]) {
      out << (r == 0 ? "<th>" : "<td>") << Html(cell) << (r == 0 ? "</th>" : "</td>");
    }
    out << "</tr>\n";
  }
  out << "</table></div>\n";
  const Json lending = report.value("lending", Json::array());
  if (!lending.empty()) {
    out << "<h2>Lending</h2><ul>\n";
    for (const Json& f : lending) out << "<li>" << Html(LendingLine(f)) << "</li>\n";
    out << "</ul>\n";
  }
  out << "</body></html>\n";
}

int RunReport(const ReportArgs& a, const std::string& endpoint) {
  if (a.format != "text" && a.format != "json" && a.format != "html") {
    throw UsageError("--format must be one of text, json, html, got \"" + a.format + "\"");
  }
  const auto [since, until] = Window(a.since, a.until);
  std::string prices;
  if (!a.prices.empty()) {
    for (const auto& [unit, price] : ReadPrices(a.prices)) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", price);
      prices += (prices.empty() ? "" : ",") + unit + ":" + buf;
    }
  }
  Client client(LoadClientConfig(endpoint));
  const Json report = client.Get("/allot/v1/report",
                                 Query({{"since", since}, {"until", until}, {"prices", prices}}));
  const bool priced = !a.prices.empty();
  if (a.format == "json") {
    std::cout << report.dump(2) << '\n';
  } else if (a.format == "html") {
    PrintHtml(report, priced, std::cout);
  } else {
    PrintText(report, priced, std::cout);
  }
  return 0;
}

int RunExport(const ExportArgs& a, const std::string& endpoint) {
  const auto [since, until] = Window(a.since, a.until);
  Client client(LoadClientConfig(endpoint));
  const Json exported =
      client.Get("/allot/v1/history/jobs", Query({{"since", since}, {"until", until}}));
  sim::Trace trace;
  for (const Json& j : exported.value("jobs", Json::array())) {
    sim::TraceJob t;
    t.submit = j.value("submittedMs", Timestamp{0});
    t.duration = j.value("durationMs", Duration{1});
    t.queue = j.value("queue", "");
    t.share = j.value("share", "");
    t.unit = j.value("instanceType", "");
    t.count = j.value("instanceCount", std::int64_t{1});
    t.priority = j.value("priority", 0);
    t.name = j.value("name", "");
    if (j.contains("stopMs")) t.stop = j["stopMs"].get<Duration>();
    for (const Json& c : j.value("priorityChanges", Json::array())) {
      t.priority_changes.emplace_back(c[0].get<Duration>(), c[1].get<std::int32_t>());
    }
    trace.jobs.push_back(std::move(t));
  }
  sim::Normalize(&trace);
  if (a.output.empty()) {
    sim::WriteAllotCsv(trace, std::cout);
  } else {
    std::ofstream out(a.output);
    if (!out) throw CliError("cannot write " + a.output);
    sim::WriteAllotCsv(trace, out);
    if (!out) throw CliError("cannot write " + a.output);
  }
  std::fprintf(stderr,
               "allot history export: %zu jobs; left out: %lld not ended yet, %lld that never "
               "ran. Replay with: allot sim --trace FILE --config CLUSTER.yaml "
               "--restart-overhead 0\n",
               trace.jobs.size(), static_cast<long long>(exported.value("unfinished", 0)),
               static_cast<long long>(exported.value("neverRan", 0)));
  return 0;
}

}  // namespace

void AddReportCommands(CLI::App& app, Runner* run) {
  auto r = std::make_shared<ReportArgs>();
  CLI::App* report = app.add_subcommand(
      "report",
      "per share: instance-hours used, borrowed, lent and lost to preemption, waits, preemptions "
      "by rule and, with --prices, cost and what lending moved (docs/observability.md)");
  auto report_endpoint = AddEndpointOption(report);
  report->add_option("--since", r->since, "from this time: 7d, 24h (that long ago) or RFC 3339")
      ->capture_default_str();
  report->add_option("--until", r->until, "up to this time (same forms; default now)");
  report->add_option("--prices", r->prices,
                     "YAML of dollars per instance-hour by instance type, e.g. "
                     "\"ml.g5.xlarge: 1.006\"");
  report->add_option("--format", r->format, "text | json | html")->capture_default_str();
  report->callback([run, r, report_endpoint] {
    *run = [r, report_endpoint] { return RunReport(*r, *report_endpoint); };
  });

  CLI::App* history = app.add_subcommand("history", "the server's own job history");
  history->require_subcommand(1);
  auto e = std::make_shared<ExportArgs>();
  CLI::App* exp = history->add_subcommand(
      "export",
      "write the jobs submitted in a window, as they ran, in Allot's trace CSV for `allot sim "
      "--trace` (docs/sim.md)");
  auto export_endpoint = AddEndpointOption(exp);
  exp->add_option("--since", e->since, "jobs submitted from this time: 30d, 24h or RFC 3339")
      ->capture_default_str();
  exp->add_option("--until", e->until, "and before this time (default now)");
  exp->add_option("-o,--output", e->output, "write to this file instead of standard output");
  exp->callback([run, e, export_endpoint] {
    *run = [e, export_endpoint] { return RunExport(*e, *export_endpoint); };
  });
}

}  // namespace allot::cli
