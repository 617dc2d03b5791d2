// The report and the histories at the wire: their request decoded from the path and the query
// (api/history_requests.h), and their answers written as docs/observability.md shows them
// (encode_history.cc): the keys, which numbers are integers, and what is left out.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "api/encode.h"
#include "api/history_requests.h"

namespace allot::api {
namespace {

using Json = nlohmann::json;
using Endpoint = HistoryRequest::Endpoint;

constexpr char kReport[] = "/allot/v1/report";
constexpr char kUsage[] = "/allot/v1/history/usage";
constexpr char kJobs[] = "/allot/v1/history/jobs";
constexpr Duration kDay = Seconds(86400);

std::string RefusalOf(const std::string& path, const QueryParams& params) {
  Result<HistoryRequest> r = DecodeHistory(path, params);
  if (r.ok()) return "accepted";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.status().message();
}

// --- decoding ---

TEST(DecodeHistory, EachPathIsItsEndpoint) {
  EXPECT_EQ(DecodeHistory(kReport, {})->endpoint, Endpoint::kReport);
  EXPECT_EQ(DecodeHistory(kUsage, {{"queue", "q"}})->endpoint, Endpoint::kUsage);
  EXPECT_EQ(DecodeHistory(kJobs, {})->endpoint, Endpoint::kJobs);
  Result<HistoryRequest> other = DecodeHistory("/allot/v1/history/report", {});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kNotFound);
}

TEST(DecodeHistory, AbsentParametersAreTheLastSevenDaysWithoutPrices) {
  Result<HistoryRequest> r = DecodeHistory(kReport, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->since, TimeBound::Ago(7 * kDay));
  EXPECT_EQ(r->until, TimeBound::Ago(0));
  EXPECT_EQ(r->queue, "");
  EXPECT_FALSE(r->prices.has_value());
  // An empty value is an absent one.
  r = DecodeHistory(kReport, {{"since", ""}, {"until", ""}, {"prices", ""}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->since, TimeBound::Ago(7 * kDay));
  EXPECT_EQ(r->until, TimeBound::Ago(0));
  EXPECT_FALSE(r->prices.has_value());
}

TEST(DecodeHistory, TimesAreEpochMillisecondsOrAges) {
  struct Case {
    const char* text;
    TimeBound want;
  };
  const Case kCases[] = {{"1767225600000", TimeBound::At(1767225600000)},
                         {"0", TimeBound::At(0)},
                         {"90s", TimeBound::Ago(Seconds(90))},
                         {"30m", TimeBound::Ago(Seconds(30 * 60))},
                         {"24h", TimeBound::Ago(Seconds(24 * 3600))},
                         {"7d", TimeBound::Ago(7 * kDay)},
                         {"0d", TimeBound::Ago(0)},
                         {"36500d", TimeBound::Ago(36500 * kDay)}};
  for (const Case& tc : kCases) {
    SCOPED_TRACE(tc.text);
    Result<HistoryRequest> r = DecodeHistory(kJobs, {{"since", tc.text}, {"until", tc.text}});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->since, tc.want);
    EXPECT_EQ(r->until, tc.want);
  }
  // A repeated parameter is refused: before, the first counted, and the second was not told.
  EXPECT_EQ(RefusalOf(kJobs, {{"since", "1d"}, {"since", "2d"}}),
            "query parameter since is given more than once");
}

TEST(DecodeHistory, AgesResolveAgainstTheServersNow) {
  EXPECT_EQ(TimeBound::Ago(Seconds(90)).Resolve(1'000'000), 910'000);
  EXPECT_EQ(TimeBound::At(5).Resolve(1'000'000), 5);
}

TEST(DecodeHistory, BadTimesAreRefusedNamingTheParameter) {
  EXPECT_EQ(RefusalOf(kReport, {{"since", "7x"}}),
            "since must be milliseconds since the epoch or an age such as 30m, 24h or 7d, got "
            "\"7x\"");
  EXPECT_EQ(RefusalOf(kUsage, {{"queue", "q"}, {"until", "-5"}}),
            "until must be milliseconds since the epoch or an age such as 30m, 24h or 7d, got "
            "\"-5\"");
  for (const char* bad :
       {"1.5h", "h", "5 m", "+5", "7dd", "36501d", "52560001m", "99999999999999999999"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(RefusalOf(kJobs, {{"since", bad}}).rfind("since must be milliseconds", 0), 0U);
    EXPECT_EQ(RefusalOf(kJobs, {{"until", bad}}).rfind("until must be milliseconds", 0), 0U);
  }
}

// Only usage takes a queue. Before, the report and the jobs' history ignored one, so a caller
// who filtered by queue got every queue's figures as if they were the queue's.
TEST(DecodeHistory, UsageNeedsAQueueTheOthersRefuseIt) {
  EXPECT_EQ(DecodeHistory(kUsage, {{"queue", "training"}})->queue, "training");
  EXPECT_EQ(RefusalOf(kUsage, {}), "queue is required: the job queue's name");
  EXPECT_EQ(RefusalOf(kUsage, {{"queue", ""}}), "queue is required: the job queue's name");
  EXPECT_EQ(RefusalOf(kReport, {{"queue", "training"}}),
            "unknown query parameter \"queue\": this call takes since, until, prices");
  EXPECT_EQ(RefusalOf(kJobs, {{"queue", "\xff"}}),
            "unknown query parameter \"queue\": this call takes since, until");
  EXPECT_EQ(RefusalOf(kUsage, {{"queue", "q"}, {"share", "\xff"}}),
            "unknown query parameter \"share\": this call takes queue, since, until");
  EXPECT_EQ(RefusalOf(kUsage, {{"queue", "a"}, {"queue", "b"}}),
            "query parameter queue is given more than once");
}

TEST(DecodeHistory, PricesAreInstanceTypeDollarPairs) {
  Result<HistoryRequest> r =
      DecodeHistory(kReport, {{"prices", "ml.g5.xlarge:1.006,ml.p4d.24xlarge:32.77,a:b:0"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::map<std::string, double> want = {
      {"ml.g5.xlarge", 1.006}, {"ml.p4d.24xlarge", 32.77}, {"a:b", 0}};
  EXPECT_EQ(r->prices, want);
  EXPECT_EQ(DecodeHistory(kReport, {{"prices", "x:1,x:2"}})->prices,
            (std::map<std::string, double>{{"x", 2}}));
  // Only the report is priced: the histories refuse the parameter.
  EXPECT_EQ(RefusalOf(kJobs, {{"prices", "x:1"}}),
            "unknown query parameter \"prices\": this call takes since, until");
  EXPECT_FALSE(DecodeHistory(kUsage, {{"queue", "q"}, {"prices", "cheap"}}).ok());
}

TEST(DecodeHistory, BadPricesAreRefusedQuotingThePair) {
  EXPECT_EQ(RefusalOf(kReport, {{"prices", "ml.g5.xlarge:cheap"}}),
            "prices must be INSTANCE_TYPE:DOLLARS_PER_HOUR pairs separated by commas, got "
            "\"ml.g5.xlarge:cheap\"");
  EXPECT_EQ(RefusalOf(kReport, {{"prices", "a:1,,b:2"}}),
            "prices must be INSTANCE_TYPE:DOLLARS_PER_HOUR pairs separated by commas, got \"\"");
  for (const char* bad : {"a:-1", "a:inf", "a:nan", ":1", "a1", "a:", "a:1x", "a: 1"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(RefusalOf(kReport, {{"prices", bad}}),
              std::string("prices must be INSTANCE_TYPE:DOLLARS_PER_HOUR pairs separated by "
                          "commas, got \"") +
                  bad + "\"");
  }
}

TEST(DecodeHistory, ValuesMustBeUtf8) {
  EXPECT_EQ(RefusalOf(kReport, {{"since", "7d\xff"}}), "since is not valid UTF-8");
  EXPECT_EQ(RefusalOf(kReport, {{"until", "\xc0\x80"}}), "until is not valid UTF-8");
  EXPECT_EQ(RefusalOf(kUsage, {{"queue", "q\xff"}}), "queue is not valid UTF-8");
  EXPECT_EQ(RefusalOf(kReport, {{"prices", "g\xff:1"}}), "prices is not valid UTF-8");
  EXPECT_EQ(DecodeHistory(kUsage, {{"queue", "\xc3\xa9quipe"}})->queue, "\xc3\xa9quipe");
}

// --- encoding ---

// The document as sent: dump() tells 2 from 2.0, so the number types are checked too.
std::string Sent(const Response& r) { return EncodeResponse(r).dump(); }

ShareReport TeamA() {
  ShareReport r;
  r.queue = "q";
  r.share = "a";
  r.used_by_unit = {{"g5", 1.5}, {"p4d", 0.5}};
  r.used_instance_hours = 2;
  r.borrowed_instance_hours = 0.25;
  r.lent_instance_hours = 0;
  r.lost_instance_hours = 0.125;
  r.restart_instance_hours = 0.0625;
  r.submitted = 3;
  r.succeeded = 2;
  r.failed = 1;
  r.waits = 2;
  r.wait_p50_seconds = 4;
  r.wait_p99_seconds = 9.5;
  r.preemptions = {{"reclaim", 1}};
  return r;
}

TEST(EncodeHistory, ReportKeysAndNumberTypes) {
  UsageReportResponse r;
  r.since = 1000;
  r.until = 2000;
  r.shares.push_back(TeamA());
  r.lending.push_back({"q", "g5", "a", "b", 0.25, std::nullopt});
  EXPECT_EQ(Sent(r), R"({"lending":[{"borrower":"a","instanceHours":0.25,"lender":"b","queue":"q",)"
                     R"("unit":"g5"}],"shares":[{"borrowedInstanceHours":0.25,)"
                     R"("jobs":{"failed":1,"submitted":3,"succeeded":2},"lentInstanceHours":0.0,)"
                     R"("lostInstanceHours":0.125,"preemptions":{"reclaim":1},"queue":"q",)"
                     R"("restartInstanceHours":0.0625,"share":"a","usedInstanceHours":2.0,)"
                     R"("usedInstanceHoursByUnit":{"g5":1.5,"p4d":0.5},)"
                     R"("waits":{"count":2,"p50Seconds":4.0,"p99Seconds":9.5}}],"since":1000,)"
                     R"("unpricedUnits":[],"until":2000})");
}

TEST(EncodeHistory, ReportCostsOnlyWithPrices) {
  UsageReportResponse r;
  r.shares.push_back(TeamA());
  r.shares[0].cost = 3;
  r.lending.push_back({"q", "g5", "a", "(other shares)", 0.5, 1.25});
  r.unpriced_units = {"p4d"};
  const Json doc = EncodeResponse(r);
  EXPECT_EQ(doc["shares"][0]["cost"].dump(), "3.0");
  EXPECT_EQ(doc["lending"][0]["cost"].dump(), "1.25");
  EXPECT_EQ(doc["unpricedUnits"], Json::array({"p4d"}));
  // Empty tables are still there, as objects and arrays.
  UsageReportResponse empty;
  empty.shares.emplace_back();
  const Json bare = EncodeResponse(empty);
  EXPECT_EQ(bare["shares"][0]["preemptions"], Json::object());
  EXPECT_EQ(bare["shares"][0]["usedInstanceHoursByUnit"], Json::object());
  EXPECT_FALSE(bare["shares"][0].contains("cost"));
  EXPECT_EQ(bare["lending"], Json::array());
}

TEST(EncodeHistory, UsageSeriesPointsAreArrays) {
  UsageHistoryResponse r{.queue = "q", .step = Seconds(300)};
  r.series.push_back({"a", "g5", 2, {{1767225600000, 1, 0, 1, 0.5}}});
  EXPECT_EQ(Sent(r),
            R"({"queue":"q","series":[{"limit":2.0,"points":[[1767225600000,1.0,0.0,1.0,0.5]],)"
            R"("share":"a","unit":"g5"}],"stepSeconds":300})");
  // The step in whole seconds; an empty history is still a document.
  EXPECT_EQ(Sent(UsageHistoryResponse{.queue = "q", .step = 10'500}),
            R"({"queue":"q","series":[],"stepSeconds":10})");
}

TEST(EncodeHistory, ExportedJobsAndTheirCounts) {
  JobHistoryResponse r;
  r.unfinished = 2;
  r.never_ran = 1;
  ExportedJob j{.id = "j-1",
                .name = "train",
                .queue = "q",
                .share = "a",
                .unit = "g5",
                .count = 2,
                .priority = 5,
                .submitted = 1000,
                .duration = 60'000,
                .stop = 1500,
                .priority_changes = {{2000, 9}}};
  r.jobs.push_back(j);
  j.stop.reset();
  j.priority_changes.clear();
  r.jobs.push_back(j);
  EXPECT_EQ(Sent(r),
            R"({"jobs":[{"durationMs":60000,"id":"j-1","instanceCount":2,"instanceType":"g5",)"
            R"("name":"train","priority":5,"priorityChanges":[[2000,9]],"queue":"q",)"
            R"("share":"a","stopMs":1500,"submittedMs":1000},)"
            R"({"durationMs":60000,"id":"j-1","instanceCount":2,"instanceType":"g5",)"
            R"("name":"train","priority":5,"priorityChanges":[],"queue":"q","share":"a",)"
            R"("submittedMs":1000}],"neverRan":1,"unfinished":2})");
}

}  // namespace
}  // namespace allot::api
