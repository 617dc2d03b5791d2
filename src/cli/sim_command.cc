// `allot sim`: replays a job history through the engine under one or more quota policies and
// reports what each one does to utilization, waiting and lost work (docs/sim.md).

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/commands.h"
#include "cli/sim_cluster.h"
#include "sim/report.h"
#include "sim/simulate.h"
#include "sim/trace.h"

namespace allot::cli {

namespace {

struct SimOpts {
  std::string trace;
  std::string format = "allot";
  std::string config;
  std::vector<std::string> compare;
  std::string policies;
  std::string vc_config;
  std::optional<std::string> checkpoint_interval, restart_overhead, stop_grace;
  bool checkpoint_on_stop = false;
  bool check_invariants = false;
  double compress = 1;
  std::int64_t max_jobs = 0;
  std::string json, html, jobs;
  bool quiet = false;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw CliError("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

template <typename T>
T Must(Result<T> r) {
  if (!r.ok()) throw CliError(r.status().message());
  return std::move(r).value();
}

// "90s", "30m", "2h", "1d", "500ms" or plain seconds; "0" is zero.
Duration ParseDuration(const std::string& flag, const std::string& text) {
  std::size_t end = 0;
  double value = 0;
  try {
    value = std::stod(text, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  const std::string unit = text.substr(end);
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1000;
  if (unit == "ms") scale = 1;
  if (unit == "m") scale = 60'000;
  if (unit == "h") scale = 3'600'000;
  if (unit == "d") scale = 86'400'000;
  if (end == 0 || scale == 0 || value < 0) {
    throw CliError(flag + " must be a duration such as 90s, 30m, 2h or 0, got \"" + text + "\"");
  }
  return static_cast<Duration>(std::llround(value * scale));
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

struct Loaded {
  sim::Trace trace;
  std::optional<sim::Cluster> generated;  // the cluster a format brings (philly, kueue)
};

Loaded LoadTrace(const SimOpts& o) {
  Loaded l;
  if (o.format == "kueue-baseline") {
    const std::string text = o.trace.empty() ? std::string() : ReadFile(o.trace);
    sim::Generated g = Must(sim::GenerateKueue(text, o.trace.empty() ? "kueue baseline" : o.trace));
    l.trace = std::move(g.trace);
    l.generated = std::move(g.cluster);
    return l;
  }
  if (o.trace.empty()) throw CliError("--trace is required with --format " + o.format);
  std::ifstream in(o.trace);
  if (!in) throw CliError("cannot read " + o.trace);
  if (o.format == "allot") {
    l.trace = Must(sim::ReadAllotCsv(in, o.trace));
  } else if (o.format == "philly") {
    const sim::PhillyOptions philly;
    l.trace = Must(sim::ReadPhillyCsv(in, o.trace, philly));
    if (!o.vc_config.empty()) {
      std::ifstream vc(o.vc_config);
      if (!vc) throw CliError("cannot read " + o.vc_config);
      l.generated = Must(sim::PhillyCluster(vc, o.vc_config, l.trace, philly));
    }
  } else if (o.format == "pollux") {
    l.trace = Must(sim::ReadPolluxWorkload(in, o.trace, "", "gpu"));
  } else {
    throw CliError("--format must be one of allot, philly, pollux, kueue-baseline, got \"" +
                   o.format + "\"");
  }
  return l;
}

// Arrivals `factor` times as fast (--compress), and at most --max-jobs of them.
void Reshape(const SimOpts& o, sim::Trace* trace) {
  if (o.compress <= 0) throw CliError("--compress must be above 0");
  if (o.max_jobs > 0 && trace->jobs.size() > static_cast<std::size_t>(o.max_jobs)) {
    trace->jobs.resize(static_cast<std::size_t>(o.max_jobs));
  }
  if (o.compress == 1) return;
  for (sim::TraceJob& j : trace->jobs) {
    j.submit = static_cast<Duration>(static_cast<double>(j.submit) / o.compress);
  }
}

std::vector<sim::Policy> Policies(const SimOpts& o, const std::optional<sim::Cluster>& generated) {
  std::optional<sim::Cluster> base = generated;
  if (!o.config.empty()) base = ToSimCluster(LoadClusterSpec(o.config), o.config);
  if (!base) {
    throw CliError("--config is required with --format " + o.format +
                   (o.format == "philly" ? " unless --vc-config is given" : ""));
  }
  std::vector<std::string> kinds = SplitList(o.policies);
  if (kinds.empty()) {
    // A cluster file is replayed as written; a generated cluster under the three policies.
    kinds = o.config.empty() ? std::vector<std::string>{"reserve", "kueue", "allot"}
                             : std::vector<std::string>{"configured"};
  }
  std::vector<sim::Policy> out;
  out.reserve(kinds.size() + o.compare.size());
  for (const std::string& k : kinds) out.push_back(Must(sim::DerivePolicy(*base, k)));
  for (const std::string& file : o.compare) {
    sim::Policy p =
        Must(sim::DerivePolicy(ToSimCluster(LoadClusterSpec(file), file), "configured"));
    p.name = file;
    out.push_back(std::move(p));
  }
  return out;
}

sim::SimOptions Options(const SimOpts& o) {
  sim::SimOptions s;
  if (o.format == "kueue-baseline") {  // Kueue's runs: no checkpoints, instant stops
    s.restart_overhead = 0;
    s.stop_grace = 0;
  }
  if (o.checkpoint_interval)
    s.checkpoint_interval = ParseDuration("--checkpoint-interval", *o.checkpoint_interval);
  if (o.restart_overhead)
    s.restart_overhead = ParseDuration("--restart-overhead", *o.restart_overhead);
  if (o.stop_grace) s.stop_grace = ParseDuration("--stop-grace", *o.stop_grace);
  s.checkpoint_on_stop = o.checkpoint_on_stop;
  s.check_invariants = s.check_invariants || o.check_invariants;
  return s;
}

void WriteTo(const std::string& path, void (*write)(const sim::ReportInput&, std::ostream&),
             const sim::ReportInput& report) {
  std::ofstream out(path);
  if (!out) throw CliError("cannot write " + path);
  write(report, out);
  if (!out) throw CliError("cannot write " + path);
}

int RunSim(const SimOpts& o) {
  Loaded loaded = LoadTrace(o);
  Reshape(o, &loaded.trace);
  const std::vector<sim::Policy> policies = Policies(o, loaded.generated);
  const sim::SimOptions options = Options(o);
  sim::ReportInput report;
  report.trace = (o.trace.empty() ? std::string("kueue baseline") : o.trace) + " (" + o.format +
                 ", " + std::to_string(loaded.trace.jobs.size()) + " jobs)";
  for (const sim::Policy& p : policies) {
    const auto begin = std::chrono::steady_clock::now();
    sim::RunResult r = Must(sim::Simulate(loaded.trace, p, options));
    const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - begin;
    std::fprintf(stderr, "allot sim: %s: %zu jobs, %lld engine events, %lld decisions in %.3f s\n",
                 p.name.c_str(), loaded.trace.jobs.size(), static_cast<long long>(r.engine_events),
                 static_cast<long long>(r.decisions), wall.count());
    report.runs.push_back(std::move(r));
  }
  if (!o.quiet) sim::WriteText(report, std::cout);
  if (!o.json.empty()) WriteTo(o.json, &sim::WriteJson, report);
  if (!o.html.empty()) WriteTo(o.html, &sim::WriteHtml, report);
  if (!o.jobs.empty()) WriteTo(o.jobs, &sim::WriteJobsCsv, report);
  return 0;
}

}  // namespace

void AddSimCommand(CLI::App& app, Runner* run) {
  auto o = std::make_shared<SimOpts>();
  CLI::App* sub = app.add_subcommand(
      "sim",
      "replay a job history through the scheduler in virtual time and compare quota "
      "configurations (docs/sim.md)");
  sub->add_option("--trace", o->trace,
                  "job history (for kueue-baseline: a Kueue generator "
                  "YAML; default: Kueue's baseline)");
  sub->add_option("--format", o->format, "allot | philly | pollux | kueue-baseline")
      ->capture_default_str();
  sub->add_option("--config", o->config, "cluster YAML, as `allot apply` reads");
  sub->add_option("--compare", o->compare,
                  "more cluster YAML files to replay the same trace under");
  sub->add_option("--policies", o->policies,
                  "comma-separated variants of --config: configured, reserve, kueue, allot "
                  "(default: configured; reserve,kueue,allot for a generated cluster)");
  sub->add_option("--vc-config", o->vc_config,
                  "philly: philly_vc.csv (vc,node num) for the shares' limits, 8 GPUs per node");
  sub->add_option("--checkpoint-interval", o->checkpoint_interval,
                  "jobs checkpoint after every interval of work; 0 = never (default 30m)");
  sub->add_option("--restart-overhead", o->restart_overhead,
                  "a resumed attempt works again after this (default 60s)");
  sub->add_option("--stop-grace", o->stop_grace, "a stopped attempt ends after this (default 30s)");
  sub->add_flag(
      "--checkpoint-on-stop", o->checkpoint_on_stop,
      "jobs save their progress when stopped (as scripts using the Python training helper, "
      "python/allot/training.py, do on SIGTERM)");
  sub->add_flag("--check-invariants", o->check_invariants,
                "check the scheduling invariants after every event (always on in debug builds)");
  sub->add_option("--compress", o->compress, "arrivals this many times as fast")
      ->capture_default_str();
  sub->add_option("--max-jobs", o->max_jobs, "replay only the first N jobs");
  sub->add_option("--json", o->json, "write every figure as JSON to this file");
  sub->add_option("--html", o->html, "write an HTML report with charts to this file");
  sub->add_option("--jobs", o->jobs,
                  "write one CSV row per job and policy to this file: first start, end, status, "
                  "attempts, preemptions, lost work");
  sub->add_flag("-q,--quiet", o->quiet, "no table on standard output");
  sub->callback([o, run] { *run = [o] { return RunSim(*o); }; });
}

}  // namespace allot::cli
