#pragma once

// Reports of one or more runs of the same trace (one per policy): a terminal table, JSON and a
// self-contained HTML page with SVG charts (docs/sim.md, Reports).

#include <ostream>
#include <string>
#include <vector>

#include "sim/result.h"

namespace allot::sim {

struct ReportInput {
  std::string trace;  // what was replayed, e.g. "philly.csv (philly, 82,247 jobs)"
  std::vector<RunResult> runs;
};

// Overall figures side by side per policy, then per share per policy; the jobs each policy left
// unfinished, by name; last, the trade-off between the policies in one line.
void WriteText(const ReportInput& in, std::ostream& out);

// `allot sim --jobs`: one CSV row per job and policy (JobResult).
void WriteJobsCsv(const ReportInput& in, std::ostream& out);

// Every figure of every run; numbers rounded to 3 decimals so the output is stable.
void WriteJson(const ReportInput& in, std::ostream& out);

// One HTML file that opens without a server: the tables, usage per share over time against its
// limit (one line per policy), wait-time distributions and lost work per share.
void WriteHtml(const ReportInput& in, std::ostream& out);

}  // namespace allot::sim
