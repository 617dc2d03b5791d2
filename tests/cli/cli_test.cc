// Unit tests of allot_cli: the YAML file, the submit request, endpoints, the bench summary.

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "cli/apply.h"
#include "cli/bench.h"
#include "cli/client.h"
#include "cli/format.h"
#include "cli/jobs.h"
#include "cli/shares.h"

namespace allot::cli {
namespace {

// A name a caller chose (and the server recorded) never breaks a row or drives the terminal.
TEST(Table, ShowsControlCharactersEscaped) {
  Table table({"RESOURCE", "OUTCOME"});
  table.Add({"zz\n2026-12-03T13:10:36Z  bob  Allowed\x1b[8m", "AccessDenied"});
  std::ostringstream out;
  table.Print(out);
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);  // the header and one row
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("zz\\x0a2026"), std::string::npos) << text;
  EXPECT_NE(text.find("\\x1b[8m"), std::string::npos) << text;
}

TEST(Describe, ShowsWhoSubmittedAndTheLimitsEachAttemptRanUnder) {
  const Json job = {
      {"jobId", "j1"},
      {"status", "SUCCEEDED"},
      {"attempts", {{{"startedAt", 1000}, {"stoppedAt", 2000}, {"statusReason", "done"}}}},
      {"allot",
       {{"attempt", 1},
        {"submittedBy", "alice"},
        {"attemptLimits",
         {{{"attempt", 1}, {"enforcedLimits", "uid=200001 gid=200001 pids=4096"}}}}}}};
  std::ostringstream out;
  PrintJob(job, out);
  EXPECT_NE(out.str().find("Submitted by"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("alice"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("limits: uid=200001 gid=200001 pids=4096"), std::string::npos)
      << out.str();
}

// What the operator's terminal must never get from a tenant's or a job's text: ESC, BEL, a
// newline that starts a line of its own, the C1 CSI (U+009B).
void ExpectNoControls(const std::string& text) {
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << text;
}

TEST(Format, EscapeControlsShowsControlsAndKeepsOtherText) {
  EXPECT_EQ(EscapeControls("a\x1b[2J\x1b]0;T\x07\nb\x7f"), "a\\x1b[2J\\x1b]0;T\\x07\\x0ab\\x7f");
  EXPECT_EQ(EscapeControls("\xc2\x9b"
                           "31m \xc2\x85"),
            "\\u009b31m \\u0085");
  // Printable UTF-8, whose later bytes lie in 0x80-0x9f too, stays as it is.
  EXPECT_EQ(EscapeControls("caf\xc3\xa9 \xe2\x82\xac \xc2\xa0 \xe6\x97\xa5"),
            "caf\xc3\xa9 \xe2\x82\xac \xc2\xa0 \xe6\x97\xa5");
  EXPECT_EQ(EscapeControls("\xc2"), "\xc2") << "a lead byte at the end";
}

// F6: a job's failure file and a tenant's TerminateServiceJob.reason become statusReason;
// `allot describe`, run by the operator, shows them escaped, as `allot audit` does.
TEST(Describe, ShowsWhatJobsAndCallersWroteEscaped) {
  const std::string hostile =
      "boom\x1b[2J\x1b]0;PWNED-TITLE\x07\x1b[32mFAKE: job SUCCEEDED\x1b[0m\nStatus:       "
      "SUCCEEDED\r\xc2\x9b"
      "2J";
  const Json payload = {
      {"AlgorithmSpecification",
       {{"ContainerEntrypoint", {"/bin/sh"}}, {"ContainerArguments", {"-c", "echo \x1b[8m"}}}},
      {"Environment", {{"X", "\x1b]0;env\x07"}}}};
  const Json job = {
      {"jobId", "j1"},
      {"jobName", "n"},
      {"status", "FAILED"},
      {"statusReason", hostile},
      {"serviceRequestPayload", payload.dump()},
      {"retryStrategy",
       {{"attempts", 2}, {"evaluateOnExit", {{{"action", "RETRY"}, {"onStatusReason", hostile}}}}}},
      {"attempts", {{{"startedAt", 1000}, {"stoppedAt", 2000}, {"statusReason", hostile}}}},
      {"preemptionSummary",
       {{"preemptedAttemptCount", 1},
        {"recentPreemptedAttempts", {{{"startedAt", 1000}, {"statusReason", hostile}}}}}},
      {"allot",
       {{"attempt", 1},
        {"submittedBy", "alice"},
        {"waitingReason", {{"message", hostile}, {"rule", "x"}}}}}};
  std::ostringstream out;
  PrintJob(job, out);
  const std::string text = out.str();
  ExpectNoControls(text);
  EXPECT_NE(text.find("Reason:       boom\\x1b[2J\\x1b]0;PWNED-TITLE\\x07\\x1b[32mFAKE: job "
                      "SUCCEEDED\\x1b[0m\\x0aStatus:       SUCCEEDED\\x0d\\u009b2J\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Command:      /bin/sh -c 'echo \\x1b[8m'"), std::string::npos) << text;
  // The one Status line is the server's: the reason's "Status:" stays inside its own line.
  std::size_t status_lines = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) status_lines += line.starts_with("Status:");
  EXPECT_EQ(status_lines, 1U) << text;
}

TEST(ClusterSpec, ParsesTheExampleShape) {
  const ClusterSpec spec = ParseClusterSpec(R"(
serviceEnvironments:
  - name: local-gpus
    capacityLimits: [{capacityUnit: ml.g5.xlarge, maxCapacity: 3}]
schedulingPolicies:
  - name: teams
jobQueues:
  - {name: training, serviceEnvironment: local-gpus, schedulingPolicy: teams, priority: 1}
quotaShares:
  - name: team-a
    jobQueue: training
    capacityLimits: [{capacityUnit: ml.g5.xlarge, maxCapacity: 1}]
    strategy: LEND_AND_BORROW
    borrowLimit: 200
    inSharePreemption: true
)",
                                            "test.yaml");
  ASSERT_EQ(spec.service_environments.size(), 1U);
  EXPECT_EQ(spec.service_environments[0]["capacityLimits"][0]["maxCapacity"], 3);
  ASSERT_EQ(spec.job_queues.size(), 1U);
  EXPECT_EQ(spec.job_queues[0]["priority"], 1);
  ASSERT_EQ(spec.quota_shares.size(), 1U);
  EXPECT_EQ(spec.quota_shares[0]["borrowLimit"], 200);
  EXPECT_EQ(spec.quota_shares[0]["inSharePreemption"], true);
}

TEST(ClusterSpec, RefusesMistakesWithTheirPlace) {
  auto message = [](const std::string& yaml) {
    try {
      ParseClusterSpec(yaml, "f.yaml");
    } catch (const CliError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("jobQueus: []").find("unknown top-level key \"jobQueus\""), std::string::npos);
  EXPECT_NE(message("quotaShares: [{name: a, jobQueue: q, strategy: LEND, borrowLimit: 5, "
                    "capacityLimits: [{capacityUnit: u, maxCapacity: 1}]}]")
                .find("quotaShares[0] (a): borrowLimit is allowed only with strategy "
                      "LEND_AND_BORROW"),
            std::string::npos);
  EXPECT_NE(message("serviceEnvironments: [{name: e, capacityLimits: [{capacityUnit: u, "
                    "maxCapacity: \"3\"}]}]")
                .find("maxCapacity must be a whole number"),
            std::string::npos);
  EXPECT_NE(message("schedulingPolicies: [{name: p}, {name: p}]").find("listed twice"),
            std::string::npos);
  EXPECT_NE(message("a: [").find("not valid YAML"), std::string::npos);
  // The server's rules (model/rules.h), applied before any call: the same words as the server.
  const std::string share =
      "quotaShares: [{name: a, jobQueue: q, strategy: LEND_AND_BORROW, "
      "capacityLimits: [{capacityUnit: u, maxCapacity: 1}], borrowLimit: ";
  EXPECT_NE(message(share + "-2}]").find("quotaShares[0] (a): borrowLimit"), std::string::npos)
      << message(share + "-2}]");
  EXPECT_NE(message(share + "10001}]").find("borrowLimit"), std::string::npos);
  EXPECT_EQ(message(share + "-1}]"), "no error");
  EXPECT_NE(message("schedulingPolicies: [{name: \"bad name\"}]").find("name"), std::string::npos);
  EXPECT_NE(message("serviceEnvironments: [{name: e, capacityLimits: [{capacityUnit: u, "
                    "maxCapacity: 1000001}]}]")
                .find("maxCapacity"),
            std::string::npos);
  EXPECT_NE(message("jobQueues: [{name: q, serviceEnvironment: e, jobStateTimeLimitActions: "
                    "[{reason: r, maxTimeSeconds: 5}]}]")
                .find("maxTimeSeconds"),
            std::string::npos);
}

TEST(Submit, BuildsTheSageMakerPayload) {
  SubmitOptions o;
  o.queue = "training";
  o.share = "team-a";
  o.priority = 7;
  o.instance_type = "ml.g5.xlarge";
  o.instance_count = 2;
  o.env = {"A=1", "B=x=y"};
  o.retries = 2;
  o.preemption_retries = 4;
  o.timeout_seconds = 60;
  o.command = {"/bin/sh", "-c", "echo hi"};
  const Json r = BuildSubmitRequest(o, JobNameFromCommand(o.command));
  EXPECT_EQ(r["jobName"], "sh");
  EXPECT_EQ(r["jobQueue"], "training");
  EXPECT_EQ(r["quotaShareName"], "team-a");
  EXPECT_EQ(r["serviceJobType"], "SAGEMAKER_TRAINING");
  EXPECT_EQ(r["schedulingPriority"], 7);
  EXPECT_EQ(r["retryStrategy"]["attempts"], 3);
  EXPECT_EQ(r["preemptionConfiguration"]["preemptionRetriesBeforeTermination"], 4);
  EXPECT_EQ(r["timeoutConfig"]["attemptDurationSeconds"], 60);
  const Json p = Json::parse(r["serviceRequestPayload"].get<std::string>());
  EXPECT_EQ(p["TrainingJobName"], "sh");
  EXPECT_EQ(p["AlgorithmSpecification"]["ContainerEntrypoint"], Json::array({"/bin/sh"}));
  EXPECT_EQ(p["AlgorithmSpecification"]["ContainerArguments"], Json::array({"-c", "echo hi"}));
  EXPECT_EQ(p["ResourceConfig"]["InstanceType"], "ml.g5.xlarge");
  EXPECT_EQ(p["ResourceConfig"]["InstanceCount"], 2);
  EXPECT_EQ(p["Environment"]["B"], "x=y");
}

TEST(Submit, RefusesABadEnvAndNoCommand) {
  SubmitOptions o;
  o.instance_type = "u";
  EXPECT_THROW(BuildSubmitRequest(o, "x"), CliError);
  o.command = {"true"};
  o.env = {"NOEQUALS"};
  EXPECT_THROW(BuildSubmitRequest(o, "x"), CliError);
  EXPECT_EQ(JobNameFromCommand({"/usr/bin/python3.11"}), "python3-11");
}

TEST(Endpoint, HostHeaderAndPath) {
  Endpoint e = ParseEndpoint("http://127.0.0.1:8742/");
  EXPECT_EQ(e.scheme_host, "http://127.0.0.1:8742");
  EXPECT_EQ(e.host_header, "127.0.0.1:8742");
  EXPECT_EQ(e.base_path, "");
  e = ParseEndpoint("http://example.com:80/prefix");
  EXPECT_EQ(e.host_header, "example.com");
  EXPECT_EQ(e.base_path, "/prefix");
  EXPECT_THROW(ParseEndpoint("127.0.0.1:8742"), CliError);
  EXPECT_THROW(ParseEndpoint("http://h:x"), CliError);
}

TEST(Client, SignedRequestCarriesSigV4) {
  ClientConfig c;
  c.endpoint = ParseEndpoint("http://127.0.0.1:8742");
  c.region = "local";
  c.credentials = {"AKIAEXAMPLE", "secret"};
  const api::HttpRequest r = SignedRequest(c, "SubmitServiceJob", "{}", 1'700'000'000'000);
  EXPECT_EQ(r.path, "/v1/submitservicejob");
  const auto auth = api::FindHeader(r, "Authorization");
  ASSERT_TRUE(auth.has_value());
  EXPECT_NE(auth->find("Credential=AKIAEXAMPLE/20231114/local/batch/aws4_request"),
            std::string::npos);
  const api::VerifyResult v = api::Verify(
      r, [](std::string_view) { return std::optional<std::string>("secret"); }, 1'700'000'000'000);
  EXPECT_TRUE(v.ok());
}

TEST(Client, ErrorsCarryTheServerMessage) {
  const ApiError e = ErrorFromAnswer(400, R"({"__type":"ClientException","message":"no queue"})");
  EXPECT_EQ(e.type(), "ClientException");
  EXPECT_STREQ(e.what(), "no queue");
}

TEST(Bench, LineFormatAndPercentiles) {
  std::vector<std::int64_t> us;
  for (int i = 100; i >= 1; --i) us.push_back(i * 1000);
  const LatencySummary s = Summarize(us);
  EXPECT_DOUBLE_EQ(s.mean_ms, 50.5);
  EXPECT_DOUBLE_EQ(s.p50_ms, 50);
  EXPECT_DOUBLE_EQ(s.p90_ms, 90);
  EXPECT_DOUBLE_EQ(s.p99_ms, 99);
  EXPECT_EQ(BenchLine(200, 2.0, s),
            "submitted 200 jobs in 2.00 s: 100.0 jobs/s, mean 50.50 ms, p50 50.00 ms, "
            "p90 90.00 ms, p99 99.00 ms");
}

TEST(Shares, TablePerShareAndUnit) {
  const Json shares = Json::parse(R"([{"quotaShareName": "team-a",
      "capacityLimits": [{"capacityUnit": "g", "maxCapacity": 1}],
      "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": 200},
      "preemptionConfiguration": {"inSharePreemption": "ENABLED"}}])");
  const Json snapshot = Json::parse(R"({"queueUtilization": {
      "totalCapacityUsage": [{"capacityUnit": "g", "quantity": 2.0}],
      "quotaShareUtilization": {"topCapacityUtilization": [{"quotaShareName": "team-a",
        "capacityUsage": [{"capacityUnit": "g", "quantity": 2.0}],
        "borrowed": [{"capacityUnit": "g", "quantity": 1.0}],
        "lent": [{"capacityUnit": "g", "quantity": 0.0}], "waitingJobs": 3}]}}})");
  const Json env = Json::parse(R"({"serviceEnvironmentName": "e",
      "capacityLimits": [{"capacityUnit": "g", "maxCapacity": 3}]})");
  std::ostringstream out;
  PrintShares("training", shares, snapshot, env, out);
  EXPECT_NE(out.str().find(
                "team-a  LEND_AND_BORROW (200%)  in-share  g     1      2     1         0     3"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("in use in training (service environment e): g 2 of 3"),
            std::string::npos)
      << out.str();
}

TEST(Format, ShellQuote) {
  EXPECT_EQ(ShellJoin({"/bin/sh", "-c", "echo it's"}), "/bin/sh -c 'echo it'\\''s'");
}

}  // namespace
}  // namespace allot::cli
