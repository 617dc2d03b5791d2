// The terminal report: the overall figures side by side per policy, then a block of compact
// figures per policy for every share, then the waits of each job group.

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "sim/report.h"
#include "sim/report_format.h"

namespace allot::sim {
namespace {

using report::AllGroups;
using report::AllShares;
using report::ShareKey;

// A table whose columns may be gathered under titled groups, one group per policy. Numbers are
// right-aligned, the first (label) column left-aligned; every column is padded to its widest
// cell so that the policies line up.
class TextTable {
 public:
  // Columns in one group sit one space apart; groups sit `group_gap` apart, which lets a wide
  // table of many small columns still fit a terminal line.
  explicit TextTable(std::string group_gap) : group_gap_(std::move(group_gap)) {}

  void AddLabelColumn(std::string header) { AddColumn(std::move(header), kNoGroup); }
  int AddGroup(std::string title) {
    group_titles_.push_back(std::move(title));
    return static_cast<int>(group_titles_.size()) - 1;
  }
  void AddColumn(std::string header, int group) { columns_.push_back({std::move(header), group}); }
  void AddRow(std::vector<std::string> cells) {
    cells.resize(columns_.size(), "-");
    rows_.push_back(std::move(cells));
  }

  void Print(std::ostream& out) const {
    const std::vector<std::size_t> width = Widths();
    if (AnyGroupTitle()) PrintGroupTitles(width, out);
    std::vector<std::string> header;
    for (const Column& c : columns_) header.push_back(c.header);
    PrintLine(header, width, out);
    for (const auto& row : rows_) PrintLine(row, width, out);
  }

 private:
  static constexpr int kNoGroup = -1;
  struct Column {
    std::string header;
    int group;
  };

  std::string Gap(std::size_t column) const {
    return columns_[column].group == columns_[column - 1].group ? " " : group_gap_;
  }

  bool AnyGroupTitle() const {
    return std::any_of(group_titles_.begin(), group_titles_.end(),
                       [](const std::string& t) { return !t.empty(); });
  }

  std::vector<std::size_t> Widths() const {
    std::vector<std::size_t> width(columns_.size(), 0);
    for (std::size_t i = 0; i < columns_.size(); ++i) width[i] = columns_[i].header.size();
    for (const auto& row : rows_) {
      for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    }
    WidenForTitles(width);
    return width;
  }

  // A policy's name may be wider than its block: the block's first column takes up the rest.
  void WidenForTitles(std::vector<std::size_t>& width) const {
    for (std::size_t first = 0; first < columns_.size(); ++first) {
      const int group = columns_[first].group;
      if (group == kNoGroup || (first > 0 && columns_[first - 1].group == group)) continue;
      std::size_t span = width[first];
      for (std::size_t i = first + 1; i < columns_.size() && columns_[i].group == group; ++i) {
        span += 1 + width[i];
      }
      const std::size_t title = group_titles_[static_cast<std::size_t>(group)].size();
      if (title > span) width[first] += title - span;
    }
  }

  void PrintGroupTitles(const std::vector<std::size_t>& width, std::ostream& out) const {
    std::string line;
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      if (i > 0) line += Gap(i);
      const int group = columns_[i].group;
      const bool starts_group = group != kNoGroup && (i == 0 || columns_[i - 1].group != group);
      if (starts_group) {
        const std::string& title = group_titles_[static_cast<std::size_t>(group)];
        line += title;
        line += std::string(width[i] - std::min(width[i], title.size()), ' ');
        // A title wider than its first column runs on into the group's next columns.
        std::size_t overrun = title.size() > width[i] ? title.size() - width[i] : 0;
        for (std::size_t j = i + 1; j < columns_.size() && columns_[j].group == group; ++j) {
          const std::size_t room = 1 + width[j];
          const std::size_t eaten = std::min(overrun, room);
          line += std::string(room - eaten, ' ');
          overrun -= eaten;
          i = j;
        }
      } else {
        line += std::string(width[i], ' ');
      }
    }
    PrintTrimmed(line, out);
  }

  void PrintLine(const std::vector<std::string>& cells, const std::vector<std::size_t>& width,
                 std::ostream& out) const {
    std::string line;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) line += Gap(i);
      const std::string pad(width[i] - cells[i].size(), ' ');
      line += columns_[i].group == kNoGroup ? cells[i] + pad : pad + cells[i];
    }
    PrintTrimmed(line, out);
  }

  static void PrintTrimmed(std::string line, std::ostream& out) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }

  std::string group_gap_;
  std::vector<std::string> group_titles_;
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

void WriteOverall(const ReportInput& in, std::ostream& out) {
  TextTable table("  ");
  table.AddLabelColumn("Overall");
  for (const RunResult& run : in.runs) table.AddColumn(run.policy, table.AddGroup(""));
  for (const report::OverallRow& row : report::OverallRows()) {
    std::vector<std::string> cells = {row.label};
    for (const RunResult& run : in.runs) cells.push_back(row.cell(run));
    table.AddRow(std::move(cells));
  }
  table.Print(out);
}

void WriteShares(const ReportInput& in, std::ostream& out) {
  const std::vector<ShareKey> keys = AllShares(in);
  if (keys.empty()) return;
  const bool many_queues = report::ManyQueues(keys);
  TextTable table(" | ");
  table.AddLabelColumn(many_queues ? "queue/share" : "share");
  for (const RunResult& run : in.runs) {
    const int group = table.AddGroup(run.policy);
    for (const report::ShareColumn& c : report::ShareColumns()) {
      table.AddColumn(c.short_header, group);
    }
  }
  for (const ShareKey& key : keys) {
    std::vector<std::string> cells = {report::ShareLabel(key, many_queues)};
    for (const RunResult& run : in.runs) {
      const ShareResult* share = report::FindShare(run, key);
      for (const report::ShareColumn& c : report::ShareColumns()) {
        cells.push_back(share != nullptr ? c.cell(share->figures) : "-");
      }
    }
    table.AddRow(std::move(cells));
  }
  out << "\nPer share (" << report::kShareColumnsLegend << ")\n";
  table.Print(out);
}

void WriteGroups(const ReportInput& in, std::ostream& out) {
  const std::vector<std::string> names = AllGroups(in);
  if (names.empty()) return;
  TextTable table(" | ");
  table.AddLabelColumn("group");
  for (const RunResult& run : in.runs) {
    const int group = table.AddGroup(run.policy);
    for (const report::GroupColumn& c : report::GroupColumns()) table.AddColumn(c.header, group);
  }
  for (const std::string& name : names) {
    std::vector<std::string> cells = {name};
    for (const RunResult& run : in.runs) {
      const GroupResult* g = report::FindGroup(run, name);
      for (const report::GroupColumn& c : report::GroupColumns()) {
        cells.push_back(g != nullptr ? c.cell(g->wait) : "-");
      }
    }
    table.AddRow(std::move(cells));
  }
  out << "\nWait per job group (mean, p50, p99)\n";
  table.Print(out);
}

// A job as the report names it: its trace name, else its row in the trace.
std::string JobLabel(const JobResult& job, std::size_t index) {
  return job.name.empty() ? "#" + std::to_string(index + 1) : job.name;
}

void WriteUnfinished(const ReportInput& in, std::ostream& out) {
  constexpr std::size_t kNamed = 10;
  for (const RunResult& run : in.runs) {
    std::vector<std::string> names;
    std::size_t count = 0;
    for (std::size_t i = 0; i < run.jobs.size(); ++i) {
      if (run.jobs[i].status != "UNFINISHED") continue;
      if (++count <= kNamed) names.push_back(JobLabel(run.jobs[i], i));
    }
    if (count == 0) continue;
    std::string line;
    for (const std::string& n : names) line += (line.empty() ? "" : ", ") + n;
    if (count > kNamed) line += ", and " + std::to_string(count - kNamed) + " more";
    out << "\nUnfinished under " << run.policy << " (" << count << "): " << line << "\n";
  }
}

std::string Signed(double value, int decimals, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.*f%s", decimals, value, unit);
  return buf;
}

// Each policy against the first: utilization, p99 wait and lost work, in one line.
void WriteTradeOff(const ReportInput& in, std::ostream& out) {
  if (in.runs.size() < 2) {
    out << "\nTrade-off: one policy replayed; add --policies or --compare to weigh others\n";
    return;
  }
  const Figures& base = in.runs.front().overall;
  std::string line = "Trade-off vs " + in.runs.front().policy + ":";
  for (std::size_t i = 1; i < in.runs.size(); ++i) {
    const Figures& f = in.runs[i].overall;
    std::string wait = base.wait.p99 > 0
                           ? Signed(100.0 * (f.wait.p99 - base.wait.p99) / base.wait.p99, 0, "%")
                           : Signed(f.wait.p99 - base.wait.p99, 0, " s");
    line += std::string(i > 1 ? ";" : "") + " " + in.runs[i].policy + " util " +
            Signed(100.0 * (f.utilization - base.utilization), 1, " pts") + ", p99 wait " + wait +
            ", lost " + Signed(f.lost_instance_hours - base.lost_instance_hours, 1, " inst-h");
    if (f.unfinished != base.unfinished) {
      line += ", unfinished " + Signed(static_cast<double>(f.unfinished - base.unfinished), 0, "");
    }
  }
  out << "\n" << line << "\n";
}

}  // namespace

void WriteJobsCsv(const ReportInput& in, std::ostream& out) {
  out << "policy,job,name,queue,share,submit_s,first_start_s,end_s,status,attempts,preemptions,"
         "lost_instance_hours\n";
  auto seconds = [](double t) {
    if (t < 0) return std::string();
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", t);
    return std::string(buf);
  };
  for (const RunResult& run : in.runs) {
    for (std::size_t i = 0; i < run.jobs.size(); ++i) {
      const JobResult& j = run.jobs[i];
      char lost[32];
      std::snprintf(lost, sizeof lost, "%.6f", j.lost_instance_hours);
      out << run.policy << ',' << i + 1 << ',' << j.name << ',' << j.queue << ',' << j.share << ','
          << seconds(j.submit) << ',' << seconds(j.first_start) << ',' << seconds(j.end) << ','
          << j.status << ',' << j.attempts << ',' << j.preemptions << ',' << lost << '\n';
    }
  }
}

void WriteText(const ReportInput& in, std::ostream& out) {
  out << "Trace: " << in.trace << "\n";
  if (in.runs.empty()) {
    out << "\nNo runs.\n";
    return;
  }
  out << "\n";
  WriteOverall(in, out);
  WriteShares(in, out);
  WriteGroups(in, out);
  WriteUnfinished(in, out);
  WriteTradeOff(in, out);
}

}  // namespace allot::sim
