#include "sim/trace.h"

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/csv.h"

namespace allot::sim {

void Normalize(Trace* trace) {
  std::vector<TraceJob>& jobs = trace->jobs;
  // Stable: jobs submitted together keep the order the trace gave them, which the replay keeps.
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; });
  if (jobs.empty()) return;
  const Duration start = jobs.front().submit;
  for (TraceJob& job : jobs) job.submit -= start;
}

namespace {

constexpr std::int64_t kMaxPriority = 9999;  // schedulingPriority's range in the Batch API

// Where each column of Allot's CSV sits; nullopt for an optional column the header lacks.
struct AllotColumns {
  std::size_t submit = 0;
  std::size_t duration = 0;
  std::size_t instance_type = 0;
  std::size_t instance_count = 0;
  std::size_t share = 0;
  std::size_t priority = 0;
  std::optional<std::size_t> checkpoint_interval;
  std::optional<std::size_t> queue;
  std::optional<std::size_t> name;
  std::optional<std::size_t> group;
  std::optional<std::size_t> stop;
  std::optional<std::size_t> priority_changes;
};

const std::vector<std::string_view>& AllowedAllotColumns() {
  static const std::vector<std::string_view> kColumns = {"submit_s",
                                                         "duration_s",
                                                         "instance_type",
                                                         "instance_count",
                                                         "share",
                                                         "priority",
                                                         "checkpoint_interval_s",
                                                         "queue",
                                                         "name",
                                                         "group",
                                                         "stop_s",
                                                         "priority_changes"};
  return kColumns;
}

Result<AllotColumns> FindAllotColumns(const CsvReader& csv) {
  ALLOT_RETURN_IF_ERROR(csv.OnlyColumns(AllowedAllotColumns()));
  AllotColumns c;
  ALLOT_RETURN_IF_ERROR(csv.RequireAll({{"submit_s", &c.submit},
                                        {"duration_s", &c.duration},
                                        {"instance_type", &c.instance_type},
                                        {"instance_count", &c.instance_count},
                                        {"share", &c.share},
                                        {"priority", &c.priority}}));
  c.checkpoint_interval = csv.Find("checkpoint_interval_s");
  c.queue = csv.Find("queue");
  c.name = csv.Find("name");
  c.group = csv.Find("group");
  c.stop = csv.Find("stop_s");
  c.priority_changes = csv.Find("priority_changes");
  return c;
}

std::string Got(const CsvReader& csv, std::size_t column) {
  return "got \"" + csv.Field(column) + "\"";
}

Status NonEmpty(const CsvReader& csv, std::size_t column) {
  if (csv.Field(column).empty()) return csv.FieldError(column, "must not be empty");
  return Status::Ok();
}

std::string OptionalText(const CsvReader& csv, std::optional<std::size_t> column) {
  return column ? csv.Field(*column) : std::string();
}

Status ReadTimes(const CsvReader& csv, const AllotColumns& c, TraceJob* job) {
  Result<Duration> submit = csv.Millis(c.submit);
  if (!submit.ok()) return submit.status();
  if (*submit < 0) return csv.FieldError(c.submit, "must be >= 0, " + Got(csv, c.submit));
  Result<Duration> duration = csv.Millis(c.duration);
  if (!duration.ok()) return duration.status();
  // Checked after rounding: a duration under half a millisecond would be a job with no work.
  if (*duration < 1) {
    return csv.FieldError(c.duration, "must be positive (at least 1 ms), " + Got(csv, c.duration));
  }
  job->submit = *submit;
  job->duration = *duration;
  return Status::Ok();
}

Status ReadDemand(const CsvReader& csv, const AllotColumns& c, TraceJob* job) {
  ALLOT_RETURN_IF_ERROR(NonEmpty(csv, c.instance_type));
  ALLOT_RETURN_IF_ERROR(NonEmpty(csv, c.share));
  Result<std::int64_t> count = csv.Int(c.instance_count);
  if (!count.ok()) return count.status();
  if (*count < 1) {
    return csv.FieldError(c.instance_count, "must be at least 1, " + Got(csv, c.instance_count));
  }
  Result<std::int64_t> priority = csv.Int(c.priority);
  if (!priority.ok()) return priority.status();
  if (*priority < 0 || *priority > kMaxPriority) {
    return csv.FieldError(c.priority, "must be 0 to 9999, " + Got(csv, c.priority));
  }
  job->unit = csv.Field(c.instance_type);
  job->share = csv.Field(c.share);
  job->count = *count;
  job->priority = static_cast<std::int32_t>(*priority);
  return Status::Ok();
}

// An empty field leaves the job on the simulation's default interval; 0 means never.
Status ReadCheckpointInterval(const CsvReader& csv, const AllotColumns& c, TraceJob* job) {
  if (!c.checkpoint_interval || csv.Field(*c.checkpoint_interval).empty()) return Status::Ok();
  const std::size_t column = *c.checkpoint_interval;
  Result<Duration> interval = csv.Millis(column);
  if (!interval.ok()) return interval.status();
  if (*interval < 0) return csv.FieldError(column, "must be >= 0, " + Got(csv, column));
  job->checkpoint_interval = *interval;
  return Status::Ok();
}

// An empty field leaves the job on the simulation's --stop-grace.
Status ReadStop(const CsvReader& csv, const AllotColumns& c, TraceJob* job) {
  if (!c.stop || csv.Field(*c.stop).empty()) return Status::Ok();
  Result<Duration> stop = csv.Millis(*c.stop);
  if (!stop.ok()) return stop.status();
  if (*stop < 0) return csv.FieldError(*c.stop, "must be >= 0, " + Got(csv, *c.stop));
  job->stop = *stop;
  return Status::Ok();
}

// "T:P;T:P", T seconds after the submission (ascending), P a priority.
Status ReadPriorityChanges(const CsvReader& csv, const AllotColumns& c, TraceJob* job) {
  if (!c.priority_changes || csv.Field(*c.priority_changes).empty()) return Status::Ok();
  const std::size_t column = *c.priority_changes;
  const std::string& text = csv.Field(column);
  const std::string form = "must be T:P;T:P (seconds after submission:priority 0-9999), ";
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(';', begin), text.size());
    const std::string item = text.substr(begin, end - begin);
    begin = end + 1;
    const std::size_t colon = item.find(':');
    if (colon == std::string::npos) return csv.FieldError(column, form + Got(csv, column));
    Result<double> at = ParseCsvDouble(item.substr(0, colon), csv.Where(), "priority_changes");
    Result<std::int64_t> priority =
        ParseCsvInt(item.substr(colon + 1), csv.Where(), "priority_changes");
    if (!at.ok() || !priority.ok() || *at < 0 || *priority < 0 || *priority > kMaxPriority) {
      return csv.FieldError(column, form + Got(csv, column));
    }
    Result<Duration> millis = SecondsToMillis(*at, csv.Where(), "priority_changes");
    if (!millis.ok()) return millis.status();
    if (!job->priority_changes.empty() && *millis < job->priority_changes.back().first) {
      return csv.FieldError(column, "times must not go back, " + Got(csv, column));
    }
    job->priority_changes.emplace_back(*millis, static_cast<std::int32_t>(*priority));
  }
  return Status::Ok();
}

Result<TraceJob> ReadAllotJob(const CsvReader& csv, const AllotColumns& c) {
  TraceJob job;
  ALLOT_RETURN_IF_ERROR(ReadTimes(csv, c, &job));
  ALLOT_RETURN_IF_ERROR(ReadDemand(csv, c, &job));
  ALLOT_RETURN_IF_ERROR(ReadCheckpointInterval(csv, c, &job));
  ALLOT_RETURN_IF_ERROR(ReadStop(csv, c, &job));
  ALLOT_RETURN_IF_ERROR(ReadPriorityChanges(csv, c, &job));
  job.queue = OptionalText(csv, c.queue);
  job.name = OptionalText(csv, c.name);
  job.group = OptionalText(csv, c.group);
  return job;
}

}  // namespace

Result<Trace> ReadAllotCsv(std::istream& in, const std::string& origin) {
  CsvReader csv(in, origin);
  ALLOT_RETURN_IF_ERROR(csv.ReadHeader());
  Result<AllotColumns> columns = FindAllotColumns(csv);
  if (!columns.ok()) return columns.status();
  return ReadTraceRecords(csv, [&](const CsvReader& r) { return ReadAllotJob(r, *columns); });
}

namespace {

// Milliseconds as seconds, exactly (3 decimals at most, no trailing zeros).
std::string Seconds3(Duration millis) {
  std::string out = std::to_string(millis / 1000);
  if (const Duration frac = millis % 1000; frac != 0) {
    char buf[8];
    std::snprintf(buf, sizeof buf, ".%03lld", static_cast<long long>(frac));
    std::string f = buf;
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  return out;
}

}  // namespace

void WriteAllotCsv(const Trace& trace, std::ostream& out) {
  out << "submit_s,duration_s,instance_type,instance_count,share,priority,checkpoint_interval_s,"
         "queue,name,group,stop_s,priority_changes\n";
  for (const TraceJob& j : trace.jobs) {
    std::string changes;
    for (const auto& [at, priority] : j.priority_changes) {
      if (!changes.empty()) changes += ';';
      changes += Seconds3(at) + ":" + std::to_string(priority);
    }
    out << Seconds3(j.submit) << ',' << Seconds3(j.duration) << ',' << j.unit << ',' << j.count
        << ',' << j.share << ',' << j.priority << ','
        << (j.checkpoint_interval ? Seconds3(*j.checkpoint_interval) : "") << ',' << j.queue << ','
        << j.name << ',' << j.group << ',' << (j.stop ? Seconds3(*j.stop) : "") << ',' << changes
        << '\n';
  }
}

}  // namespace allot::sim
