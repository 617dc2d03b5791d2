#include "sim/trace.h"

#include <algorithm>
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
};

const std::vector<std::string_view>& AllowedAllotColumns() {
  static const std::vector<std::string_view> kColumns = {
      "submit_s", "duration_s", "instance_type",         "instance_count",
      "share",    "priority",   "checkpoint_interval_s", "queue",
      "name",     "group"};
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

Result<TraceJob> ReadAllotJob(const CsvReader& csv, const AllotColumns& c) {
  TraceJob job;
  ALLOT_RETURN_IF_ERROR(ReadTimes(csv, c, &job));
  ALLOT_RETURN_IF_ERROR(ReadDemand(csv, c, &job));
  ALLOT_RETURN_IF_ERROR(ReadCheckpointInterval(csv, c, &job));
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

}  // namespace allot::sim
