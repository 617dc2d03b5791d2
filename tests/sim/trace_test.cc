// The trace readers: Allot's CSV, the Philly job list, the Pollux workloads and Kueue's generator,
// on small inline inputs and on the fixtures in tests/sim/data/.

#include "sim/trace.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/csv.h"

namespace allot::sim {
namespace {

// tests/sim/data/, found next to this file so that no build setting is needed.
std::string DataDir() {
  const std::string file = __FILE__;
  return file.substr(0, file.find_last_of('/')) + "/data/";
}

constexpr const char* kFullPhilly = "/work/shared/data/traces/philly-pollux/philly.csv";

Result<Trace> Allot(const std::string& text) {
  std::istringstream in(text);
  return ReadAllotCsv(in, "t.csv");
}

Result<Trace> Philly(const std::string& text, const PhillyOptions& options = {}) {
  std::istringstream in(text);
  return ReadPhillyCsv(in, "p.csv", options);
}

Result<Trace> Pollux(const std::string& text) {
  std::istringstream in(text);
  return ReadPolluxWorkload(in, "w.csv", "pollux", "gpu");
}

// The error message of a failed read; fails the test if the read succeeded.
template <typename T>
std::string ErrorOf(const Result<T>& r) {
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.status().message();
}

void ExpectJob(const TraceJob& actual, const TraceJob& expected) {
  EXPECT_EQ(actual.submit, expected.submit) << expected.name;
  EXPECT_EQ(actual.duration, expected.duration) << expected.name;
  EXPECT_EQ(actual.queue, expected.queue) << expected.name;
  EXPECT_EQ(actual.share, expected.share) << expected.name;
  EXPECT_EQ(actual.unit, expected.unit) << expected.name;
  EXPECT_EQ(actual.count, expected.count) << expected.name;
  EXPECT_EQ(actual.priority, expected.priority) << expected.name;
  EXPECT_EQ(actual.checkpoint_interval, expected.checkpoint_interval) << expected.name;
  EXPECT_EQ(actual.name, expected.name);
  EXPECT_EQ(actual.group, expected.group) << expected.name;
}

std::map<std::string, int> CountBy(const Trace& t, std::string TraceJob::*field) {
  std::map<std::string, int> out;
  for (const TraceJob& j : t.jobs) ++out[j.*field];
  return out;
}

// ---------- the CSV helper ----------

TEST(CsvTest, SplitsTrimsAndDropsCarriageReturn) {
  Result<std::vector<std::string>> f = SplitCsvLine(" a ,b,\t c\t,,d \r", "x:1");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f, (std::vector<std::string>{"a", "b", "c", "", "d"}));
}

TEST(CsvTest, RejectsQuotes) {
  EXPECT_EQ(ErrorOf(SplitCsvLine("a,\"b,c\"", "x.csv:4")),
            "x.csv:4: quoted fields are not supported (found '\"')");
}

TEST(CsvTest, ParsesNumbersWholly) {
  EXPECT_EQ(*ParseCsvDouble("1.25", "w", "c"), 1.25);
  EXPECT_EQ(*ParseCsvInt("-42", "w", "c"), -42);
  EXPECT_EQ(ErrorOf(ParseCsvDouble("1.5s", "x:2", "column d")),
            "x:2: column d: \"1.5s\" is not a number");
  EXPECT_EQ(ErrorOf(ParseCsvDouble("nan", "x:2", "column d")),
            "x:2: column d: \"nan\" is not a number");
  EXPECT_EQ(ErrorOf(ParseCsvInt("2.0", "x:3", "column n")),
            "x:3: column n: \"2.0\" is not a whole number");
  EXPECT_EQ(ErrorOf(ParseCsvInt("", "x:3", "column n")),
            "x:3: column n: \"\" is not a whole number");
}

TEST(CsvTest, SecondsBecomeRoundedMillis) {
  EXPECT_EQ(*SecondsToMillis(1.0005, "w", "c"), 1001);
  EXPECT_EQ(*SecondsToMillis(0.0004, "w", "c"), 0);
  EXPECT_EQ(*SecondsToMillis(2.5, "w", "c"), 2500);
  EXPECT_FALSE(SecondsToMillis(1e300, "w", "c").ok());
}

TEST(CsvTest, ReaderSkipsBlankLinesAndCountsLines) {
  std::istringstream in("\n a , b \r\n1,2\n\n  \r\n3,4\n");
  CsvReader csv(in, "r.csv");
  ASSERT_TRUE(csv.ReadHeader().ok());
  EXPECT_EQ(csv.columns(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(csv.Find("b"), std::optional<std::size_t>(1));
  EXPECT_EQ(csv.Find("c"), std::nullopt);
  ASSERT_TRUE(*csv.Next());
  EXPECT_EQ(csv.Field(0), "1");
  EXPECT_EQ(csv.Where(), "r.csv:3");
  ASSERT_TRUE(*csv.Next());
  EXPECT_EQ(csv.Field(1), "4");
  EXPECT_EQ(csv.Where(), "r.csv:6");
  EXPECT_EQ(csv.record_number(), 2U);
  Result<bool> end = csv.Next();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(*end);
}

TEST(CsvTest, ReaderErrors) {
  {
    std::istringstream in("\n\n");
    CsvReader csv(in, "e.csv");
    EXPECT_EQ(csv.ReadHeader().message(), "e.csv: empty file, expected a header");
  }
  {
    std::istringstream in("a,,b\n");
    CsvReader csv(in, "e.csv");
    EXPECT_EQ(csv.ReadHeader().message(), "e.csv:1: the header has an empty column name");
  }
  {
    std::istringstream in("a,b,a\n");
    CsvReader csv(in, "e.csv");
    EXPECT_EQ(csv.ReadHeader().message(), "e.csv:1: column a appears twice in the header");
  }
  {
    std::istringstream in("a,b\n1,2\n1,2,3\n");
    CsvReader csv(in, "e.csv");
    ASSERT_TRUE(csv.ReadHeader().ok());
    EXPECT_EQ(csv.Require("c").status().message(), "e.csv: missing required column c");
    EXPECT_EQ(csv.OnlyColumns({"a"}).message(), "e.csv: unknown column b (allowed: a)");
    ASSERT_TRUE(*csv.Next());
    EXPECT_EQ(csv.FieldError(1, "too big").message(), "e.csv:2: column b: too big");
    EXPECT_EQ(ErrorOf(csv.Next()), "e.csv:3: expected 2 fields as in the header, got 3");
  }
}

// ---------- Normalize ----------

TEST(NormalizeTest, SortsStablyAndStartsAtZero) {
  Trace t;
  for (const auto& [submit, name] : std::vector<std::pair<Duration, std::string>>{
           {5000, "a"}, {3000, "b"}, {5000, "c"}, {3000, "d"}, {4000, "e"}}) {
    TraceJob j;
    j.submit = submit;
    j.name = name;
    t.jobs.push_back(j);
  }
  Normalize(&t);
  std::vector<std::string> names;
  std::vector<Duration> submits;
  for (const TraceJob& j : t.jobs) {
    names.push_back(j.name);
    submits.push_back(j.submit);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"b", "d", "e", "a", "c"}));
  EXPECT_EQ(submits, (std::vector<Duration>{0, 0, 1000, 2000, 2000}));
}

TEST(NormalizeTest, EmptyTraceStaysEmpty) {
  Trace t;
  Normalize(&t);
  EXPECT_TRUE(t.jobs.empty());
}

// ---------- Allot's CSV ----------

TEST(AllotCsvTest, ReadsRequiredAndOptionalColumnsInAnyOrder) {
  Result<Trace> t = Allot(
      "share,priority,submit_s,duration_s,instance_type,instance_count,name,queue,group,"
      "checkpoint_interval_s\n"
      "team-a,10,12.5,3600,ml.g5.xlarge,4,train,q1,big,600\n"
      "team-b,0,10,0.25,ml.g5.xlarge,1,eval,,small,\n"
      "team-a,9999,10.0004,1,ml.p4d.24xlarge,2,,q2,,0\n");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->jobs.size(), 3U);
  ExpectJob(t->jobs[0], {.submit = 0,
                         .duration = 250,
                         .queue = "",
                         .share = "team-b",
                         .unit = "ml.g5.xlarge",
                         .count = 1,
                         .priority = 0,
                         .checkpoint_interval = std::nullopt,
                         .name = "eval",
                         .group = "small"});
  // 10.0004 s rounds to 10000 ms: tied with eval, and kept after it.
  ExpectJob(t->jobs[1], {.submit = 0,
                         .duration = 1000,
                         .queue = "q2",
                         .share = "team-a",
                         .unit = "ml.p4d.24xlarge",
                         .count = 2,
                         .priority = 9999,
                         .checkpoint_interval = 0,
                         .name = "",
                         .group = ""});
  ExpectJob(t->jobs[2], {.submit = 2500,
                         .duration = 3'600'000,
                         .queue = "q1",
                         .share = "team-a",
                         .unit = "ml.g5.xlarge",
                         .count = 4,
                         .priority = 10,
                         .checkpoint_interval = 600'000,
                         .name = "train",
                         .group = "big"});
}

TEST(AllotCsvTest, OnlyRequiredColumns) {
  Result<Trace> t = Allot(
      "submit_s,duration_s,instance_type,instance_count,share,priority\r\n"
      "100,60,gpu,8,s,5\r\n"
      "\r\n");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->jobs.size(), 1U);
  ExpectJob(t->jobs[0], {.submit = 0,
                         .duration = 60'000,
                         .queue = "",
                         .share = "s",
                         .unit = "gpu",
                         .count = 8,
                         .priority = 5});
}

TEST(AllotCsvTest, HeaderOnlyIsAnEmptyTrace) {
  Result<Trace> t = Allot("submit_s,duration_s,instance_type,instance_count,share,priority\n");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->jobs.empty());
}

TEST(AllotCsvTest, HeaderErrors) {
  EXPECT_EQ(ErrorOf(Allot("submit_s,duration_s,instance_type,instance_count,share\n")),
            "t.csv: missing required column priority");
  EXPECT_EQ(ErrorOf(Allot("submit_s,duration_s,instance_type,instance_count,share,priority,"
                          "user\n")),
            "t.csv: unknown column user (allowed: submit_s, duration_s, instance_type, "
            "instance_count, share, priority, checkpoint_interval_s, queue, name, group, stop_s, "
            "priority_changes)");
  EXPECT_EQ(ErrorOf(Allot("")), "t.csv: empty file, expected a header");
}

TEST(AllotCsvTest, FieldErrorsNameLineAndColumn) {
  const std::string header =
      "submit_s,duration_s,instance_type,instance_count,share,priority,checkpoint_interval_s\n"
      "0,1,gpu,1,s,0,\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"-1,1,gpu,1,s,0,", "t.csv:3: column submit_s: must be >= 0, got \"-1\""},
      {"x,1,gpu,1,s,0,", "t.csv:3: column submit_s: \"x\" is not a number"},
      {"0,0,gpu,1,s,0,", "t.csv:3: column duration_s: must be positive (at least 1 ms), got \"0\""},
      {"0,0.0001,gpu,1,s,0,",
       "t.csv:3: column duration_s: must be positive (at least 1 ms), got \"0.0001\""},
      {"0,-5,gpu,1,s,0,",
       "t.csv:3: column duration_s: must be positive (at least 1 ms), got \"-5\""},
      {"0,1,,1,s,0,", "t.csv:3: column instance_type: must not be empty"},
      {"0,1,gpu,1,,0,", "t.csv:3: column share: must not be empty"},
      {"0,1,gpu,0,s,0,", "t.csv:3: column instance_count: must be at least 1, got \"0\""},
      {"0,1,gpu,1.5,s,0,", "t.csv:3: column instance_count: \"1.5\" is not a whole number"},
      {"0,1,gpu,1,s,10000,", "t.csv:3: column priority: must be 0 to 9999, got \"10000\""},
      {"0,1,gpu,1,s,-1,", "t.csv:3: column priority: must be 0 to 9999, got \"-1\""},
      {"0,1,gpu,1,s,0,-60", "t.csv:3: column checkpoint_interval_s: must be >= 0, got \"-60\""},
      {"0,1,gpu,1,s,0", "t.csv:3: expected 7 fields as in the header, got 6"},
      {"0,1,\"gpu\",1,s,0,", "t.csv:3: quoted fields are not supported (found '\"')"},
  };
  for (const auto& [row, message] : cases) {
    EXPECT_EQ(ErrorOf(Allot(header + row + "\n")), message) << row;
  }
}

// ---------- Philly ----------

const char* const kPhillyHeader = "timestamp,duration,num_gpus,gpu_time,cluster\n";

TEST(PhillyTest, ReadsJobsAndTimestamps) {
  Result<Trace> t = Philly(std::string(kPhillyHeader) +
                           "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
                           "2017-10-09 06:13:03,2951.5,16,47224.0,6214e9\n"
                           "2017-10-10 06:13:03,10.0,8,80.0,6214e9\n"
                           "\n");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->jobs.size(), 3U);
  ExpectJob(t->jobs[0], {.submit = 0,
                         .duration = 2'951'500,
                         .queue = "philly",
                         .share = "6214e9",
                         .unit = "gpu",
                         .count = 16,
                         .priority = 100,
                         .name = "philly-2",
                         .group = ">8"});
  // 07:01:55 - 06:13:03 = 48 min 52 s.
  ExpectJob(t->jobs[1], {.submit = (48 * 60 + 52) * 1000,
                         .duration = 66'000,
                         .queue = "philly",
                         .share = "11cb48",
                         .unit = "gpu",
                         .count = 1,
                         .priority = 0,
                         .name = "philly-1",
                         .group = "1"});
  ExpectJob(t->jobs[2], {.submit = 24 * 3600 * 1000,
                         .duration = 10'000,
                         .queue = "philly",
                         .share = "6214e9",
                         .unit = "gpu",
                         .count = 8,
                         .priority = 0,
                         .name = "philly-3",
                         .group = "2-8"});
}

TEST(PhillyTest, TimestampsCrossMonthsYearsAndLeapDays) {
  // 2016 is a leap year: 2016-02-28 .. 2016-03-01 is two days; 2017-12-31 23:59:59 to
  // 2018-01-01 00:00:00 one second; 1970-01-01 to 2017-09-04 is 17,413 days.
  Result<Trace> t = Philly(std::string(kPhillyHeader) +
                           "1970-01-01 00:00:00,1,1,1,a\n"
                           "2016-02-28 12:00:00,1,1,1,a\n"
                           "2016-03-01 12:00:00,1,1,1,a\n"
                           "2017-09-04 00:00:00,1,1,1,a\n"
                           "2017-12-31 23:59:59,1,1,1,a\n"
                           "2018-01-01 00:00:00,1,1,1,a\n");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const Duration day = 86'400'000;
  EXPECT_EQ(t->jobs[2].submit - t->jobs[1].submit, 2 * day);
  EXPECT_EQ(t->jobs[3].submit, 17'413 * day);
  EXPECT_EQ(t->jobs[5].submit - t->jobs[4].submit, 1000);
  // 2016-02-28 12:00 is 16,859.5 days after the epoch.
  EXPECT_EQ(t->jobs[1].submit, 16'859 * day + day / 2);
}

TEST(PhillyTest, OptionsSetQueueUnitAndLargeJobs) {
  const PhillyOptions options{.queue = "q", .unit = "ml.p4d", .large_gpus = 2, .large_priority = 7};
  Result<Trace> t = Philly(std::string(kPhillyHeader) +
                               "2017-10-09 07:01:55,66.0,2,132.0,vc\n"
                               "2017-10-09 07:01:56,66.0,4,264.0,vc\n",
                           options);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->jobs[0].priority, 0);
  EXPECT_EQ(t->jobs[1].priority, 7);
  EXPECT_EQ(t->jobs[1].queue, "q");
  EXPECT_EQ(t->jobs[1].unit, "ml.p4d");
  EXPECT_EQ(t->jobs[1].group, "2-8");
}

TEST(PhillyTest, Errors) {
  EXPECT_EQ(ErrorOf(Philly("timestamp,duration,gpu_time,cluster\n")),
            "p.csv: missing required column num_gpus");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"2017-10-09T07:01:55,1,1,1,a",
       "p.csv:2: column timestamp: expected YYYY-MM-DD HH:MM:SS, got \"2017-10-09T07:01:55\""},
      {"2017-02-29 07:01:55,1,1,1,a",
       "p.csv:2: column timestamp: expected YYYY-MM-DD HH:MM:SS, got \"2017-02-29 07:01:55\""},
      {"2017-10-09 24:00:00,1,1,1,a",
       "p.csv:2: column timestamp: expected YYYY-MM-DD HH:MM:SS, got \"2017-10-09 24:00:00\""},
      {"2017-1-09 07:01:55,1,1,1,a",
       "p.csv:2: column timestamp: expected YYYY-MM-DD HH:MM:SS, got \"2017-1-09 07:01:55\""},
      {"2017-10-09 07:01:55,0.0,1,0,a", "p.csv:2: column duration: must be positive, got \"0.0\""},
      {"2017-10-09 07:01:55,abc,1,0,a", "p.csv:2: column duration: \"abc\" is not a number"},
      {"2017-10-09 07:01:55,1,0,0,a", "p.csv:2: column num_gpus: must be at least 1, got \"0\""},
      {"2017-10-09 07:01:55,1,1,1,", "p.csv:2: column cluster: must not be empty"},
  };
  for (const auto& [row, message] : cases) {
    EXPECT_EQ(ErrorOf(Philly(std::string(kPhillyHeader) + row + "\n")), message) << row;
  }
}

TEST(PhillyTest, ReadsTheFixture) {
  std::ifstream in(DataDir() + "philly-3000.csv");
  ASSERT_TRUE(in) << DataDir();
  Result<Trace> t = ReadPhillyCsv(in, "philly-3000.csv", {});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->jobs.size(), 3000U);
  // The earliest row is line 1986 (2017-09-07 09:57:50), the latest line 2
  // (2017-10-09 07:01:55): 31 days 21:04:05 apart.
  EXPECT_EQ(t->jobs.front().name, "philly-1985");
  EXPECT_EQ(t->jobs.front().duration, 2'643'038'000);
  EXPECT_EQ(t->jobs.back().name, "philly-1");
  EXPECT_EQ(t->jobs.back().submit, 2'754'245'000);
  EXPECT_EQ(CountBy(*t, &TraceJob::group),
            (std::map<std::string, int>{{"1", 2850}, {"2-8", 148}, {">8", 2}}));
  EXPECT_EQ(CountBy(*t, &TraceJob::share).size(), 11U);
  int large = 0;
  for (const TraceJob& j : t->jobs) large += j.priority == 100 ? 1 : 0;
  EXPECT_EQ(large, 2);
}

TEST(PhillyTest, ReadsTheFullTraceIfPresent) {
  std::ifstream in(kFullPhilly);
  if (!in) GTEST_SKIP() << kFullPhilly << " is not here";
  Result<Trace> t = ReadPhillyCsv(in, "philly.csv", {});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->jobs.size(), 82'247U);
  EXPECT_EQ(CountBy(*t, &TraceJob::share).size(), 15U);
  EXPECT_EQ(CountBy(*t, &TraceJob::group),
            (std::map<std::string, int>{{"1", 76'627}, {"2-8", 5331}, {">8", 289}}));
  EXPECT_EQ(t->jobs.front().submit, 0);
  EXPECT_EQ(t->jobs.back().submit, 9'408'690'000);  // 2017-09-04 .. 2017-12-22
}

// ---------- Pollux ----------

TEST(PolluxTest, GpuTimeClasses) {
  const Duration hour = 3'600'000;
  EXPECT_EQ(PolluxGpuMillis("ncf"), hour / 4);
  EXPECT_EQ(PolluxGpuMillis("cifar10"), hour / 2);
  EXPECT_EQ(PolluxGpuMillis("deepspeech2"), 3 * hour);
  EXPECT_EQ(PolluxGpuMillis("bert"), 5 * hour);
  EXPECT_EQ(PolluxGpuMillis("yolov3"), 30 * hour);
  EXPECT_EQ(PolluxGpuMillis("imagenet"), 300 * hour);
  EXPECT_EQ(PolluxGpuMillis("resnet"), std::nullopt);
}

TEST(PolluxTest, ReadsAWorkload) {
  Result<Trace> t = Pollux(
      "name,time,application,num_replicas,batch_size\n"
      "cifar10-0,107,cifar10,6,2048\n"
      "ncf-2,135,ncf,1,32768\n"
      "imagenet-1,110,imagenet,7,128\n");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->jobs.size(), 3U);
  ExpectJob(t->jobs[0], {.submit = 0,
                         .duration = 300'000,
                         .queue = "pollux",
                         .share = "cifar10",
                         .unit = "gpu",
                         .count = 6,
                         .priority = 0,
                         .name = "cifar10-0",
                         .group = "cifar10"});
  // 300 GPU-hours over 7 replicas, rounded down to the millisecond.
  ExpectJob(t->jobs[1], {.submit = 3000,
                         .duration = 154'285'714,
                         .queue = "pollux",
                         .share = "imagenet",
                         .unit = "gpu",
                         .count = 7,
                         .priority = 0,
                         .name = "imagenet-1",
                         .group = "imagenet"});
  ExpectJob(t->jobs[2], {.submit = 28'000,
                         .duration = 900'000,
                         .queue = "pollux",
                         .share = "ncf",
                         .unit = "gpu",
                         .count = 1,
                         .priority = 0,
                         .name = "ncf-2",
                         .group = "ncf"});
}

TEST(PolluxTest, Errors) {
  const std::string header = "name,time,application,num_replicas,batch_size\n";
  EXPECT_EQ(ErrorOf(Pollux(header + "x,1,resnet,1,32\n")),
            "w.csv:2: column application: unknown application \"resnet\" (known: bert, "
            "cifar10, deepspeech2, imagenet, ncf, yolov3)");
  EXPECT_EQ(ErrorOf(Pollux(header + "x,1,ncf,0,32\n")),
            "w.csv:2: column num_replicas: must be at least 1, got \"0\"");
  EXPECT_EQ(ErrorOf(Pollux(header + "x,-1,ncf,1,32\n")),
            "w.csv:2: column time: must be >= 0, got \"-1\"");
  EXPECT_EQ(ErrorOf(Pollux("name,time,num_replicas\n")),
            "w.csv: missing required column application");
}

TEST(PolluxTest, ReadsAllEightFixtures) {
  for (int i = 1; i <= 8; ++i) {
    const std::string path = DataDir() + "pollux/workload-" + std::to_string(i) + ".csv";
    std::ifstream in(path);
    ASSERT_TRUE(in) << path;
    Result<Trace> t = ReadPolluxWorkload(in, path, "pollux", "gpu");
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->jobs.size(), 160U) << path;
    EXPECT_EQ(t->jobs.front().submit, 0) << path;
    EXPECT_LE(t->jobs.back().submit, 8 * 3'600'000) << path;  // an eight-hour window
    for (const TraceJob& j : t->jobs) {
      EXPECT_EQ(j.share, j.group);
      EXPECT_EQ(j.duration, std::max<Duration>(1, *PolluxGpuMillis(j.share) / j.count));
    }
  }
  // workload-1 starts with cifar10-0 at 107 s on 6 replicas.
  std::ifstream in(DataDir() + "pollux/workload-1.csv");
  Result<Trace> t = ReadPolluxWorkload(in, "workload-1.csv", "pollux", "gpu");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->jobs.front().name, "cifar10-0");
  EXPECT_EQ(t->jobs.front().count, 6);
}

// ---------- Kueue ----------

TEST(KueueTest, BaselineHasKueuesNumbers) {
  Result<Generated> g = GenerateKueue("", "baseline");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Trace& t = g->trace;
  ASSERT_EQ(t.jobs.size(), 15'000U);
  EXPECT_EQ(CountBy(t, &TraceJob::group),
            (std::map<std::string, int>{{"large", 1500}, {"medium", 3000}, {"small", 10'500}}));
  EXPECT_EQ(CountBy(t, &TraceJob::queue).size(), 5U);
  std::map<std::int32_t, int> priorities;
  std::set<std::string> shares;
  for (const TraceJob& j : t.jobs) {
    ++priorities[j.priority];
    shares.insert(j.queue + "/" + j.share);
    EXPECT_EQ(j.unit, "cpu");
    EXPECT_EQ(j.checkpoint_interval, std::optional<Duration>(0));
  }
  EXPECT_EQ(priorities, (std::map<std::int32_t, int>{{50, 10'500}, {100, 3000}, {200, 1500}}));
  EXPECT_EQ(shares.size(), 30U);
  // Every set starts at 0; the last: small 349 x 100 ms = 34.9 s, medium 99 x 500 = 49.5 s,
  // large 49 x 1200 = 58.8 s.
  EXPECT_EQ(t.jobs.front().submit, 0);
  EXPECT_EQ(t.jobs.back().submit, 58'800);
  // Ties keep generation order: cohort-0's cq-0 small, medium, large, then cq-1 ...
  ExpectJob(t.jobs[0], {.submit = 0,
                        .duration = 200,
                        .queue = "cohort-0",
                        .share = "cq-0",
                        .unit = "cpu",
                        .count = 1,
                        .priority = 50,
                        .checkpoint_interval = 0,
                        .name = "cq-0-small-0",
                        .group = "small"});
  ExpectJob(t.jobs[1], {.submit = 0,
                        .duration = 500,
                        .queue = "cohort-0",
                        .share = "cq-0",
                        .unit = "cpu",
                        .count = 5,
                        .priority = 100,
                        .checkpoint_interval = 0,
                        .name = "cq-0-medium-0",
                        .group = "medium"});
  ExpectJob(t.jobs[2], {.submit = 0,
                        .duration = 1000,
                        .queue = "cohort-0",
                        .share = "cq-0",
                        .unit = "cpu",
                        .count = 20,
                        .priority = 200,
                        .checkpoint_interval = 0,
                        .name = "cq-0-large-0",
                        .group = "large"});
  EXPECT_EQ(t.jobs[3].name, "cq-1-small-0");
  EXPECT_EQ(t.jobs[89].queue, "cohort-4");
  EXPECT_EQ(t.jobs[89].name, "cq-5-large-0");
  EXPECT_EQ(t.jobs[90].submit, 100);
  EXPECT_EQ(t.jobs.back().queue, "cohort-4");
  EXPECT_EQ(t.jobs.back().name, "cq-5-large-49");
}

TEST(KueueTest, ExampleFileIsTheBaseline) {
  const std::string path = DataDir() + "../../../examples/sim/kueue-baseline.yaml";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  Result<Generated> file = GenerateKueue(text.str(), path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  Result<Generated> baseline = GenerateKueue(KueueBaselineYaml(), "baseline");
  ASSERT_TRUE(baseline.ok());
  ASSERT_EQ(file->trace.jobs.size(), baseline->trace.jobs.size());
  for (std::size_t i = 0; i < file->trace.jobs.size(); ++i) {
    ExpectJob(file->trace.jobs[i], baseline->trace.jobs[i]);
  }
  EXPECT_EQ(file->cluster.shares.size(), baseline->cluster.shares.size());
}

TEST(KueueTest, SeveralSetsAndWorkloadsKeepGenerationOrder) {
  Result<Generated> g = GenerateKueue(R"(
cohorts:
- className: team
  count: 1
  queuesSets:
  - className: a
    count: 1
    nominalQuota: "8"
    workloadsSets:
    - count: 2
      creationIntervalMs: 300
      workloads:
      - {className: x, runtimeMs: 10, priority: 1, request: "2"}
      - {className: y, runtimeMs: 20, priority: 2, request: 3}
  - className: b
    count: 1
    nominalQuota: 4
    borrowingLimit: 1
    withinClusterQueue: Never
    workloadsSets:
    - count: 1
      creationIntervalMs: 0
      workloads:
      - {className: z, runtimeMs: 5, priority: 0, request: 1}
)",
                                      "small.yaml", "gpu");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::vector<std::string> names;
  std::vector<Duration> submits;
  for (const TraceJob& j : g->trace.jobs) {
    names.push_back(j.name);
    submits.push_back(j.submit);
  }
  // Shares are numbered across the cohort's queuesSets: a-0, then b-1.
  EXPECT_EQ(names,
            (std::vector<std::string>{"a-0-x-0", "a-0-y-0", "b-1-z-0", "a-0-x-1", "a-0-y-1"}));
  EXPECT_EQ(submits, (std::vector<Duration>{0, 0, 0, 300, 300}));
  ExpectJob(g->trace.jobs[1], {.submit = 0,
                               .duration = 20,
                               .queue = "team-0",
                               .share = "a-0",
                               .unit = "gpu",
                               .count = 3,
                               .priority = 2,
                               .checkpoint_interval = 0,
                               .name = "a-0-y-0",
                               .group = "y"});
}

TEST(KueueTest, Errors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"cohorts: [", "k.yaml: yaml-cpp: error at line 1"},
      {"queues: []", "k.yaml: unknown field \"queues\" (allowed: cohorts, resourceFlavor)"},
      {"cohorts: []", "k.yaml: cohorts: must not be empty"},
      {"resourceFlavor: {name: rf}", "k.yaml: cohorts: is required (a non-empty list)"},
      {"cohorts: [{className: c, count: 1}]",
       "k.yaml: cohorts[0].queuesSets: is required (a non-empty list)"},
      {"cohorts: [{className: c, count: 0, queuesSets: [{className: q}]}]",
       "k.yaml: cohorts[0].count: must be at least 1, got 0"},
      {"cohorts: [{className: c, count: 1, queuesSets: [{className: q, count: 1}]}]",
       "k.yaml: cohorts[0].queuesSets[0].nominalQuota: is required"},
      {"cohorts: [{className: c, count: 1, queuesSets: [{className: q, count: 1, "
       "nominalQuota: 500m}]}]",
       "k.yaml: cohorts[0].queuesSets[0].nominalQuota: \"500m\" is not a whole number"},
      {"cohorts: [{className: c, count: 1, queuesSets: [{className: q, count: 1, "
       "nominalQuota: 5, withinClusterQueue: Always}]}]",
       "k.yaml: cohorts[0].queuesSets[0].withinClusterQueue: must be one of Never, "
       "LowerPriority, LowerOrNewerEqualPriority, got \"Always\""},
      {"cohorts: [{className: c, count: 1, queuesSets: [{className: q, count: 1, "
       "nominalQuota: 5, deviceNominalQuota: 2}]}]",
       "k.yaml: cohorts[0].queuesSets[0]: unknown field \"deviceNominalQuota\" (allowed: "
       "className, count, nominalQuota, borrowingLimit, reclaimWithinCohort, "
       "withinClusterQueue, workloadsSets)"},
      {"cohorts: [{className: c, count: 1, queuesSets: [{className: q, count: 1, "
       "nominalQuota: 5, workloadsSets: [{count: 1, creationIntervalMs: 1, workloads: "
       "[{className: w, runtimeMs: 0, priority: 0, request: 1}]}]}]}]",
       "k.yaml: cohorts[0].queuesSets[0].workloadsSets[0].workloads[0].runtimeMs: must be at "
       "least 1, got 0"},
      {"cohorts: [{className: c, count: 1, queuesSets: [{className: q, count: 1, "
       "nominalQuota: 5, workloadsSets: [{count: 1, creationIntervalMs: 1, workloads: "
       "[{className: w, runtimeMs: 1, priority: 10000, request: 1}]}]}]}]",
       "k.yaml: cohorts[0].queuesSets[0].workloadsSets[0].workloads[0].priority: must be at "
       "most 9999"},
      {"cohorts: [{className: c, count: 1, queuesSets: [{className: q, count: 1, "
       "nominalQuota: 5, workloadsSets: [{count: 1, creationIntervalMs: 1, workloads: "
       "[{className: w, runtimeMs: 1, priority: 0, request: 1, podCount: 2}]}]}]}]",
       "k.yaml: cohorts[0].queuesSets[0].workloadsSets[0].workloads[0]: unknown field "
       "\"podCount\" (allowed: className, runtimeMs, priority, request)"},
      {"cohorts: [{className: c, count: 1, queuesSets: [{className: q, count: 1, "
       "nominalQuota: 5, workloadsSets: [{count: 20000000, creationIntervalMs: 1, workloads: "
       "[{className: w, runtimeMs: 1, priority: 0, request: 1}]}]}]}]",
       "k.yaml: cohorts[0].queuesSets[0].workloadsSets[0].count: is too large"},
      {"cohorts: [{className: c, count: 1, queuesSets: [{className: q, count: 1, "
       "nominalQuota: 5}]}, {className: c, count: 1, queuesSets: [{className: q, count: 1, "
       "nominalQuota: 5}]}]",
       "k.yaml: two cohorts are named c-0 (give each cohort entry its own className)"},
      {"cohorts: [{className: '', count: 1, queuesSets: [{className: q}]}]",
       "k.yaml: cohorts[0].className: must be a non-empty string"},
      {"cohorts: [3]", "k.yaml: cohorts[0]: must be a mapping"},
      {"- 1", "k.yaml: the file must be a mapping with a cohorts list"},
  };
  for (const auto& [yaml, message] : cases) {
    Result<Generated> g = GenerateKueue(yaml, "k.yaml");
    const std::string error = ErrorOf(g);
    EXPECT_NE(error.find(message), std::string::npos) << yaml << "\n  gave: " << error;
  }
}

}  // namespace
}  // namespace allot::sim
