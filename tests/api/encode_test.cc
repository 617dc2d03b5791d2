// The typed responses written as AWS documents them (api/encode.h): the keys botocore's model
// names, and what is left out when a response leaves a field unset.

#include "api/encode.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace allot::api {
namespace {

using Json = nlohmann::json;

// Each alternative of Response, default-constructed, encodes to a JSON object.
template <std::size_t... I>
std::vector<bool> AlternativesAreObjects(std::index_sequence<I...> /*indexes*/) {
  return {EncodeResponse(Response(std::in_place_index<I>)).is_object()...};
}

TEST(EncodeResponse, EveryResponseIsAJsonObject) {
  const std::vector<bool> objects =
      AlternativesAreObjects(std::make_index_sequence<std::variant_size_v<Response>>());
  for (std::size_t i = 0; i < objects.size(); ++i) EXPECT_TRUE(objects[i]) << "alternative " << i;
  EXPECT_EQ(EncodeResponse(EmptyResponse{}), Json::object());
}

TEST(EncodeResponse, ChangedResourcesUseEachActionsOwnKeys) {
  EXPECT_EQ(EncodeResponse(ServiceEnvironmentChanged{"env", "arn:e"}),
            (Json{{"serviceEnvironmentName", "env"}, {"serviceEnvironmentArn", "arn:e"}}));
  EXPECT_EQ(EncodeResponse(SchedulingPolicyCreated{"p", "arn:p"}),
            (Json{{"name", "p"}, {"arn", "arn:p"}}));
  EXPECT_EQ(EncodeResponse(JobQueueChanged{"q", "arn:q"}),
            (Json{{"jobQueueName", "q"}, {"jobQueueArn", "arn:q"}}));
  EXPECT_EQ(EncodeResponse(QuotaShareChanged{"s", "arn:s"}),
            (Json{{"quotaShareName", "s"}, {"quotaShareArn", "arn:s"}}));
  EXPECT_EQ(EncodeResponse(ServiceJobChanged{"arn:j", "train", "id-1"}),
            (Json{{"jobArn", "arn:j"}, {"jobName", "train"}, {"jobId", "id-1"}}));
  EXPECT_EQ(EncodeResponse(ListTagsForResourceResponse{{{"a", "1"}, {"b", "2"}}}),
            (Json{{"tags", {{"a", "1"}, {"b", "2"}}}}));
}

TEST(EncodeResponse, ListsCarryANextTokenOnlyWhenThereIsOne) {
  ListSchedulingPoliciesResponse policies{{"arn:p1", "arn:p2"}, std::nullopt};
  EXPECT_EQ(EncodeResponse(policies),
            (Json{{"schedulingPolicies", {{{"arn", "arn:p1"}}, {{"arn", "arn:p2"}}}}}));
  policies.next_token = "p2";
  EXPECT_EQ(EncodeResponse(policies)["nextToken"], "p2");
  EXPECT_EQ(EncodeResponse(DescribeJobQueuesResponse{}), (Json{{"jobQueues", Json::array()}}));
  EXPECT_EQ(EncodeResponse(ListServiceJobsResponse{{}, "17.3"}),
            (Json{{"jobSummaryList", Json::array()}, {"nextToken", "17.3"}}));
}

// JobQueueDetail's required members are all there, computeEnvironmentOrder too: a
// SAGEMAKER_TRAINING queue has none, and says so with an empty list.
TEST(EncodeResponse, AJobQueueHasEveryMemberTheModelRequires) {
  DescribeJobQueuesResponse queues;
  queues.queues.push_back({.name = "q",
                           .arn = "arn:q",
                           .status = "VALID",
                           .priority = 3,
                           .environment_order = {{1, "arn:e"}},
                           .type = "SAGEMAKER_TRAINING"});
  const Json q = EncodeResponse(queues)["jobQueues"][0];
  for (const char* required :
       {"jobQueueName", "jobQueueArn", "state", "priority", "computeEnvironmentOrder"}) {
    EXPECT_TRUE(q.contains(required)) << required << " in " << q.dump();
  }
  EXPECT_EQ(q["computeEnvironmentOrder"], Json::array());
  EXPECT_EQ(q["serviceEnvironmentOrder"],
            (Json::array({{{"order", 1}, {"serviceEnvironment", "arn:e"}}})));
}

TEST(EncodeResponse, AQuotaShareListedLeavesItsTagsOut) {
  QuotaShareDetail share{.name = "a",
                         .arn = "arn:s",
                         .job_queue_arn = "arn:q",
                         .capacity_limits = {{"ml.g5.xlarge", 2}},
                         .strategy = model::SharingStrategy::kLendAndBorrow,
                         .borrow_limit = 50,
                         .in_share_preemption = true,
                         .state = model::State::kDisabled,
                         .status = "VALID",
                         .tags = TagList{{"team", "a"}}};
  const Json described = EncodeResponse(share);
  EXPECT_EQ(described["tags"], (Json{{"team", "a"}}));
  EXPECT_EQ(described["state"], "DISABLED");
  EXPECT_EQ(described["resourceSharingConfiguration"],
            (Json{{"strategy", "LEND_AND_BORROW"}, {"borrowLimit", 50}}));
  EXPECT_EQ(described["preemptionConfiguration"], (Json{{"inSharePreemption", "ENABLED"}}));
  share.tags.reset();
  share.borrow_limit.reset();
  const Json listed = EncodeResponse(ListQuotaSharesResponse{{share}, std::nullopt});
  EXPECT_FALSE(listed["quotaShares"][0].contains("tags"));
  EXPECT_EQ(listed["quotaShares"][0]["resourceSharingConfiguration"],
            (Json{{"strategy", "LEND_AND_BORROW"}}));
}

TEST(EncodeResponse, AJobSummaryLeavesOutWhatHasNotHappened) {
  ServiceJobSummary job{.arn = "arn:j", .id = "id-1", .name = "train", .created_at = 1000};
  job.capacity_usage = {{"ml.g5.xlarge", 2}};
  const Json fresh = Encode(job);
  for (const char* absent : {"scheduledAt", "startedAt", "stoppedAt", "quotaShareName",
                             "statusReason", "latestAttempt"}) {
    EXPECT_FALSE(fresh.contains(absent)) << absent;
  }
  EXPECT_EQ(fresh["status"], "SUBMITTED");
  EXPECT_EQ(fresh["serviceJobType"], "SAGEMAKER_TRAINING");
  ASSERT_TRUE(fresh["capacityUsage"][0]["quantity"].is_number_float());  // AWS's Double
  EXPECT_EQ(fresh["capacityUsage"][0]["quantity"].get<double>(), 2.0);
  job.started_at = 2000;
  job.share = "team-a";
  job.latest_attempt_arn = "arn:sagemaker:t";
  const Json started = Encode(job);
  EXPECT_EQ(started["startedAt"], 2000);
  EXPECT_EQ(started["quotaShareName"], "team-a");
  EXPECT_EQ(
      started["latestAttempt"],
      (Json{{"serviceResourceId", {{"name", "TrainingJobArn"}, {"value", "arn:sagemaker:t"}}}}));
}

// A preemption record whose preemptor the reader may not describe keeps only its share; work
// lost is written in instance-seconds.
TEST(EncodeResponse, AnUnnamedPreemptorKeepsOnlyItsShare) {
  ServiceJobDetail job;
  job.summary.status = model::JobStatus::kRunnable;
  PreemptionDetail p{.attempt = 1,
                     .preemptor_share = "team-b",
                     .rule = model::PreemptionRule::kReclaim,
                     .key = {.priority = 3, .work_lost = 1500, .attempt_started_at = 10},
                     .at = 20,
                     .work_lost = 2500};
  p.runner_up = RunnerUpDetail{.share = "team-c", .rule = model::PreemptionRule::kReclaim};
  job.allot.preemption_records.push_back(p);
  job.allot.preemptions_made.push_back({.at = 5, .victims = {{.share = "team-d", .attempt = 2}}});
  const Json doc = Encode(job);
  const Json& record = doc["allot"]["preemptionRecords"][0];
  EXPECT_FALSE(record.contains("preemptor"));
  EXPECT_FALSE(record.contains("preemptorName"));
  EXPECT_EQ(record["preemptorShare"], "team-b");
  EXPECT_EQ(record["victimKey"]["workLostInstanceSeconds"].get<double>(), 1.5);
  EXPECT_EQ(record["workLostInstanceSeconds"].get<double>(), 2.5);
  EXPECT_EQ(record["runnerUp"],
            (Json{{"share", "team-c"},
                  {"rule", "RECLAIM"},
                  {"putBack", false},
                  {"victimKey",
                   {{"priority", 0}, {"workLostInstanceSeconds", 0.0}, {"attemptStartedAt", 0}}}}));
  const Json& victim = doc["allot"]["preemptionsMade"][0]["victims"][0];
  EXPECT_FALSE(victim.contains("jobId"));
  EXPECT_FALSE(victim.contains("jobName"));
  EXPECT_EQ(victim["share"], "team-d");
  EXPECT_FALSE(doc.contains("preemptionSummary"));  // no attempt was preempted
  EXPECT_FALSE(doc.contains("serviceRequestPayload"));
}

TEST(EncodeResponse, AJobDetailCarriesItsOptionsAndPreemptionSummary) {
  ServiceJobDetail job;
  job.job_queue_arn = "arn:q";
  job.scheduling_priority = 7;
  job.timeout_config_seconds = 60;
  job.preemption_retries = 2;
  job.retry = model::RetryStrategy{.attempts = 3};
  job.payload = R"({"TrainingJobName":"t"})";
  job.attempts = {{"arn:t1", 1, 2, "preempted"}, {"arn:t2", 3, 0, ""}};
  job.preempted_attempt_count = 1;
  job.recent_preempted_attempts = {job.attempts[0]};
  const Json doc = Encode(job);
  EXPECT_EQ(doc["jobQueue"], "arn:q");
  EXPECT_EQ(doc["schedulingPriority"], 7);
  EXPECT_EQ(doc["timeoutConfig"], (Json{{"attemptDurationSeconds", 60}}));
  EXPECT_EQ(doc["preemptionConfiguration"], (Json{{"preemptionRetriesBeforeTermination", 2}}));
  EXPECT_EQ(doc["retryStrategy"], (Json{{"attempts", 3}, {"evaluateOnExit", Json::array()}}));
  EXPECT_EQ(doc["serviceRequestPayload"], R"({"TrainingJobName":"t"})");  // a string, verbatim
  EXPECT_FALSE(doc["attempts"][1].contains("stoppedAt"));                 // still running
  EXPECT_EQ(doc["attempts"][0]["statusReason"], "preempted");
  EXPECT_EQ(doc["preemptionSummary"]["preemptedAttemptCount"], 1);
  EXPECT_EQ(doc["preemptionSummary"]["recentPreemptedAttempts"][0]["stoppedAt"], 2);
}

// A job the caller may not describe keeps its place in the snapshot, without its ARN.
TEST(EncodeResponse, ASnapshotEntryWithoutAnArnKeepsItsTime) {
  JobQueueSnapshotResponse r{.last_updated_at = 9,
                             .front_of_queue = {{"arn:j", 4}, {std::nullopt, 5}}};
  EXPECT_EQ(EncodeResponse(r)["frontOfQueue"]["jobs"],
            (Json{{{"jobArn", "arn:j"}, {"earliestTimeAtPosition", 4}},
                  {{"earliestTimeAtPosition", 5}}}));
}

TEST(EncodeResponse, ASnapshotHasQuotaShareUtilizationOnlyForAQueueWithShares) {
  JobQueueSnapshotResponse plain{.last_updated_at = 9, .front_of_queue = {{"arn:j", 4}}};
  plain.total_usage = {{"ml.g5.xlarge", 1}};
  const Json p = EncodeResponse(plain);
  EXPECT_EQ(p["frontOfQueue"],
            (Json{{"jobs", {{{"jobArn", "arn:j"}, {"earliestTimeAtPosition", 4}}}},
                  {"lastUpdatedAt", 9}}));
  EXPECT_EQ(p["frontOfQuotaShares"], (Json{{"quotaShares", Json::object()}, {"lastUpdatedAt", 9}}));
  EXPECT_FALSE(p["queueUtilization"].contains("quotaShareUtilization"));
  EXPECT_EQ(p["queueUtilization"]["totalCapacityUsage"][0]["quantity"].get<double>(), 1.0);

  JobQueueSnapshotResponse shared = plain;
  shared.share_utilization = {{.name = "a", .used = {{"ml.g5.xlarge", 1}}, .waiting_jobs = 3}};
  shared.front_of_shares = {{"a", {{"arn:j", 4}}}};
  const Json s = EncodeResponse(shared);
  const Json& top = s["queueUtilization"]["quotaShareUtilization"]["topCapacityUtilization"];
  ASSERT_EQ(top.size(), 1U);
  EXPECT_EQ(top[0]["quotaShareName"], "a");
  EXPECT_EQ(top[0]["waitingJobs"], 3);
  EXPECT_EQ(top[0]["borrowed"], Json::array());
  EXPECT_EQ(s["frontOfQuotaShares"]["quotaShares"]["a"][0]["jobArn"], "arn:j");
}

}  // namespace
}  // namespace allot::api
