// The configuration records' stored form: documents written before the typed records (these are
// the exact bytes the server stored) read into records that write the same bytes back and
// describe themselves with the same wire documents; a corrupt document is an Internal error
// naming the record.

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "api/encode.h"
#include "server/config_codec.h"

namespace allot::server {
namespace {

constexpr char kArn[] = "arn:aws:batch:us-east-1:000000000000:";

std::string At(const std::string& resource) { return kArn + resource; }

// A stored document, as nlohmann's dump() wrote it (keys sorted, no spaces).
void ExpectCanonical(const std::string& doc) { ASSERT_EQ(Json::parse(doc).dump(), doc); }

const std::string kEnvironment =
    R"({"capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":4},)"
    R"({"capacityUnit":"ml.p4d.24xlarge","maxCapacity":0}],"serviceEnvironmentArn":")" +
    At("service-environment/env-1") +
    R"(","serviceEnvironmentName":"env-1","serviceEnvironmentType":"SAGEMAKER_TRAINING",)"
    R"("state":"ENABLED","status":"VALID","tags":{"owner":"ana","team":"a"}})";

const std::string kQuotaPolicy = R"({"arn":")" + At("scheduling-policy/qsp") +
                                 R"(","name":"qsp","quotaSharePolicy":)"
                                 R"({"idleResourceAssignmentStrategy":"FIFO"},"tags":{}})";
const std::string kPlainPolicy =
    R"({"arn":")" + At("scheduling-policy/plain") + R"(","name":"plain","tags":{"k":"v"}})";

const std::string kQuotaQueue =
    R"({"computeEnvironmentOrder":[],"jobQueueArn":")" + At("job-queue/q1") +
    R"(","jobQueueName":"q1","jobQueueType":"SAGEMAKER_TRAINING","jobStateTimeLimitActions":)"
    R"([{"action":"TERMINATE","maxTimeSeconds":600,"reason":"CAPACITY:INSUFFICIENT_INSTANCES",)"
    R"("state":"RUNNABLE"}],"priority":10,"schedulingPolicyArn":")" +
    At("scheduling-policy/qsp") +
    R"(","serviceEnvironmentOrder":[{"order":3,"serviceEnvironment":"env-1"}],)"
    R"("state":"DISABLED","status":"VALID","statusReason":"JobQueue Healthy","tags":{}})";
const std::string kPlainQueue =
    R"({"computeEnvironmentOrder":[],"jobQueueArn":")" + At("job-queue/fifo") +
    R"(","jobQueueName":"fifo","jobQueueType":"SAGEMAKER_TRAINING","jobStateTimeLimitActions":)"
    R"([],"priority":0,"serviceEnvironmentOrder":[{"order":1,"serviceEnvironment":"env-1"}],)"
    R"("state":"ENABLED","status":"VALID","statusReason":"JobQueue Healthy",)"
    R"("tags":{"team":"b"}})";

const std::string kBorrowingShare =
    R"({"capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":2}],"jobQueueArn":")" +
    At("job-queue/q1") +
    R"(","preemptionConfiguration":{"inSharePreemption":"ENABLED"},"quotaShareArn":")" +
    At("job-queue/q1/quota-share/team-a") +
    R"(","quotaShareName":"team-a","resourceSharingConfiguration":{"borrowLimit":-1,)"
    R"("strategy":"LEND_AND_BORROW"},"state":"ENABLED","status":"VALID","tags":{"k":"v"}})";
const std::string kReservedShare =
    R"({"capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":1},)"
    R"({"capacityUnit":"ml.p4d.24xlarge","maxCapacity":5}],"jobQueueArn":")" +
    At("job-queue/q1") +
    R"(","preemptionConfiguration":{"inSharePreemption":"DISABLED"},"quotaShareArn":")" +
    At("job-queue/q1/quota-share/team-b") +
    R"(","quotaShareName":"team-b","resourceSharingConfiguration":{"strategy":"RESERVE"},)"
    R"("state":"DISABLED","status":"VALID","tags":{}})";

TEST(ConfigRecords, AServiceEnvironmentRoundTrips) {
  ExpectCanonical(kEnvironment);
  Result<ServiceEnvironmentRecord> env = DecodeEnvironment("env-1", kEnvironment);
  ASSERT_TRUE(env.ok()) << env.status().message();
  EXPECT_EQ(env->name, "env-1");
  EXPECT_EQ(env->state, model::State::kEnabled);
  EXPECT_EQ(env->capacity_limits,
            (std::vector<model::CapacityLimit>{{"ml.g5.xlarge", 4}, {"ml.p4d.24xlarge", 0}}));
  EXPECT_EQ(env->tags, (TagList{{"owner", "ana"}, {"team", "a"}}));
  EXPECT_FALSE(UsesNumInstances(*env));
  EXPECT_EQ(Encode(*env), kEnvironment);
  EXPECT_EQ(DescribeEnvironment(*env), Json::parse(kEnvironment));
}

TEST(ConfigRecords, SchedulingPoliciesRoundTrip) {
  for (const std::string& doc : {kQuotaPolicy, kPlainPolicy}) {
    ExpectCanonical(doc);
    Result<SchedulingPolicyRecord> policy = DecodePolicy("p", doc);
    ASSERT_TRUE(policy.ok()) << policy.status().message();
    EXPECT_EQ(Encode(*policy), doc);
    EXPECT_EQ(DescribePolicy(*policy), Json::parse(doc));
    const api::Response listed = api::ListSchedulingPoliciesResponse{{policy->arn}};
    EXPECT_EQ(api::EncodeResponse(listed),
              (Json{{"schedulingPolicies", {{{"arn", Json::parse(doc)["arn"]}}}}}));
  }
  EXPECT_TRUE(DecodePolicy("qsp", kQuotaPolicy)->takes_quota_shares());
  EXPECT_FALSE(DecodePolicy("plain", kPlainPolicy)->takes_quota_shares());
}

TEST(ConfigRecords, JobQueuesRoundTrip) {
  for (const std::string& doc : {kQuotaQueue, kPlainQueue}) {
    ExpectCanonical(doc);
    Result<JobQueueRecord> queue = DecodeQueue("q", doc);
    ASSERT_TRUE(queue.ok()) << queue.status().message();
    EXPECT_EQ(Encode(*queue), doc);
    EXPECT_EQ(DescribeQueue(*queue), Json::parse(doc));
    // A queue stored before computeEnvironmentOrder was written reads as the same queue.
    Json older = Json::parse(doc);
    older.erase("computeEnvironmentOrder");
    Result<JobQueueRecord> old = DecodeQueue("q", older.dump());
    ASSERT_TRUE(old.ok()) << old.status().message();
    EXPECT_EQ(Encode(*old), doc);
  }
  const JobQueueRecord q1 = DecodeQueue("q1", kQuotaQueue).value();
  EXPECT_EQ(q1.environment(), "env-1");
  EXPECT_EQ(q1.environment_order.front().order, 3);
  EXPECT_EQ(q1.priority, 10);
  EXPECT_EQ(q1.state, model::State::kDisabled);
  EXPECT_EQ(q1.scheduling_policy_arn, At("scheduling-policy/qsp"));
  const model::JobQueueConfig engine = EngineConfig(q1);
  ASSERT_EQ(engine.time_limit_actions.size(), 1U);
  EXPECT_EQ(engine.time_limit_actions[0].reason, "CAPACITY:INSUFFICIENT_INSTANCES");
  EXPECT_EQ(engine.time_limit_actions[0].max_time_seconds, 600);
  EXPECT_TRUE(DecodeQueue("fifo", kPlainQueue)->scheduling_policy_arn.empty());
}

TEST(ConfigRecords, QuotaSharesRoundTripAndListWithoutTags) {
  for (const std::string& doc : {kBorrowingShare, kReservedShare}) {
    ExpectCanonical(doc);
    Result<QuotaShareRecord> share = DecodeShare("q1/s", doc);
    ASSERT_TRUE(share.ok()) << share.status().message();
    EXPECT_EQ(share->queue, "q1");
    EXPECT_EQ(Encode(*share), doc);
    EXPECT_EQ(DescribeShare(*share), Json::parse(doc));
    Json summary = Json::parse(doc);
    summary.erase("tags");
    EXPECT_EQ(api::Encode(ToWire(*share, /*with_tags=*/false)), summary);
  }
  const QuotaShareRecord a = DecodeShare("q1/team-a", kBorrowingShare).value();
  EXPECT_EQ(a.Key(), "q1/team-a");
  EXPECT_EQ(a.strategy, model::SharingStrategy::kLendAndBorrow);
  EXPECT_EQ(a.borrow_limit, -1);
  EXPECT_TRUE(a.in_share_preemption);
  const QuotaShareRecord b = DecodeShare("q1/team-b", kReservedShare).value();
  EXPECT_EQ(b.borrow_limit, std::nullopt);  // written back without one
  EXPECT_EQ(EngineConfig(b).borrow_limit, model::kUnlimitedBorrow);
  EXPECT_EQ(EngineConfig(b).state, model::State::kDisabled);
  EXPECT_FALSE(EngineConfig(b).in_share_preemption);
}

// `doc` with `key` set to `value` (null: removed).
std::string With(const std::string& doc, const std::string& key, const Json& value) {
  Json j = Json::parse(doc);
  if (value.is_null()) {
    j.erase(key);
  } else {
    j[key] = value;
  }
  return j.dump();
}

template <typename Decode>
void ExpectCorrupt(Decode decode, const std::string& what, const std::string& key,
                   const std::string& doc) {
  auto decoded = decode(key, doc);
  ASSERT_FALSE(decoded.ok()) << doc;
  EXPECT_EQ(decoded.status().code(), StatusCode::kInternal);
  const std::string& m = decoded.status().message();
  EXPECT_NE(m.find(what + " record " + key), std::string::npos) << m;
}

TEST(ConfigRecords, CorruptDocumentsAreInternalErrorsNamingTheRecord) {
  for (const std::string& doc :
       {std::string("not json"), std::string("[1]"),
        With(kEnvironment, "serviceEnvironmentArn", nullptr),
        With(kEnvironment, "capacityLimits", "ml.g5.xlarge"),
        With(kEnvironment, "capacityLimits", Json::array({{{"capacityUnit", "x"}}})),
        With(kEnvironment, "state", "PAUSED"), With(kEnvironment, "tags", {{"k", 1}})}) {
    ExpectCorrupt(DecodeEnvironment, "service environment", "env-1", doc);
  }
  for (const std::string& doc : {std::string("{"), With(kQuotaPolicy, "quotaSharePolicy", "FIFO"),
                                 With(kQuotaPolicy, "name", 7)}) {
    ExpectCorrupt(DecodePolicy, "scheduling policy", "qsp", doc);
  }
  for (const std::string& doc :
       {With(kQuotaQueue, "serviceEnvironmentOrder", Json::array()),
        With(kQuotaQueue, "priority", 10000000000LL), With(kQuotaQueue, "priority", "10"),
        With(kQuotaQueue, "jobStateTimeLimitActions",
             Json::array({{{"action", "CANCEL"},
                           {"maxTimeSeconds", 600},
                           {"reason", "r"},
                           {"state", "RUNNABLE"}}}))}) {
    ExpectCorrupt(DecodeQueue, "job queue", "q1", doc);
  }
  for (const std::string& doc :
       {With(kBorrowingShare, "jobQueueArn", "q1"),
        With(kBorrowingShare, "resourceSharingConfiguration", {{"strategy", "SHARE"}}),
        With(kBorrowingShare, "preemptionConfiguration", {{"inSharePreemption", "yes"}}),
        With(kBorrowingShare, "status", nullptr)}) {
    ExpectCorrupt(DecodeShare, "quota share", "q1/team-a", doc);
  }
}

}  // namespace
}  // namespace allot::server
