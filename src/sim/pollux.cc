// The Pollux paper's simulator workloads (petuum/adaptdl osdi21-artifact, simulator/workloads*/):
// 160 jobs sampled from Philly over eight hours, each mapped to one of six models by GPU-time.

#include <algorithm>
#include <iterator>
#include <string_view>
#include <utility>

#include "common/strings.h"
#include "sim/csv.h"
#include "sim/trace.h"

namespace allot::sim {

namespace {

constexpr Duration kMillisPerHour = 3600 * kMillisPerSecond;

// The workload files name the model but not its work. Pollux sorts the sampled Philly jobs into
// GPU-time classes and gives each class its models; we assume a typical GPU-time inside each
// class (an assumption of ours, not a number from the artifact):
//   application   GPU-hours
//   ncf           0.25
//   cifar10       0.5
//   deepspeech2   3
//   bert          5
//   yolov3        30
//   imagenet      300
struct PolluxApplication {
  std::string_view name;
  Duration gpu_millis;
};
constexpr PolluxApplication kApplications[] = {
    {"bert", 5 * kMillisPerHour},        {"cifar10", kMillisPerHour / 2},
    {"deepspeech2", 3 * kMillisPerHour}, {"imagenet", 300 * kMillisPerHour},
    {"ncf", kMillisPerHour / 4},         {"yolov3", 30 * kMillisPerHour},
};

std::string KnownApplications() {
  std::vector<std::string_view> names;
  names.reserve(std::size(kApplications));
  for (const PolluxApplication& application : kApplications) names.push_back(application.name);
  return Join(names, ", ");
}

struct PolluxColumns {
  std::size_t name = 0;
  std::size_t time = 0;
  std::size_t application = 0;
  std::size_t replicas = 0;
};

// batch_size is Pollux's own tuning knob; a fixed-size replay does not use it.
Result<PolluxColumns> FindPolluxColumns(const CsvReader& csv) {
  PolluxColumns c;
  ALLOT_RETURN_IF_ERROR(csv.RequireAll({{"name", &c.name},
                                        {"time", &c.time},
                                        {"application", &c.application},
                                        {"num_replicas", &c.replicas}}));
  return c;
}

Result<TraceJob> ReadPolluxJob(const CsvReader& csv, const PolluxColumns& c,
                               const std::string& queue, const std::string& unit) {
  Result<Duration> submit = csv.Millis(c.time);
  if (!submit.ok()) return submit.status();
  if (*submit < 0) {
    return csv.FieldError(c.time, "must be >= 0, got \"" + csv.Field(c.time) + "\"");
  }
  const std::string& application = csv.Field(c.application);
  const std::optional<Duration> gpu_millis = PolluxGpuMillis(application);
  if (!gpu_millis) {
    return csv.FieldError(c.application, "unknown application \"" + application +
                                             "\" (known: " + KnownApplications() + ")");
  }
  Result<std::int64_t> replicas = csv.Int(c.replicas);
  if (!replicas.ok()) return replicas.status();
  if (*replicas < 1) {
    return csv.FieldError(c.replicas, "must be at least 1, got \"" + csv.Field(c.replicas) + "\"");
  }
  TraceJob job;
  job.submit = *submit;
  // Perfect scaling: the same GPU-time spread over the replicas.
  job.duration = std::max<Duration>(1, *gpu_millis / *replicas);
  job.queue = queue;
  job.share = application;
  job.unit = unit;
  job.count = *replicas;
  job.name = csv.Field(c.name);
  job.group = application;
  return job;
}

}  // namespace

std::optional<Duration> PolluxGpuMillis(const std::string& application) {
  for (const PolluxApplication& a : kApplications) {
    if (a.name == application) return a.gpu_millis;
  }
  return std::nullopt;
}

Result<Trace> ReadPolluxWorkload(std::istream& in, const std::string& origin,
                                 const std::string& queue, const std::string& unit) {
  CsvReader csv(in, origin);
  ALLOT_RETURN_IF_ERROR(csv.ReadHeader());
  Result<PolluxColumns> columns = FindPolluxColumns(csv);
  if (!columns.ok()) return columns.status();
  return ReadTraceRecords(
      csv, [&](const CsvReader& r) { return ReadPolluxJob(r, *columns, queue, unit); });
}

}  // namespace allot::sim
