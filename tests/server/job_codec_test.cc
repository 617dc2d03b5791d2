// The stored form of a job record: every field survives a round trip, a waiting job's record is
// small, and a record written before the typed records (a DescribeServiceJob document) is read.

#include "server/job_codec.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace allot::server {
namespace {

JobRecord FullRecord() {
  JobRecord j;
  j.seq = 42;
  j.id = "0b7e5a52-1c2d-4e3f-8a9b-0c1d2e3f4a5b";
  j.name = "Train-Big";
  j.MutableOptions().training_name = "custom-training-name";
  j.queue = "q";
  j.share = "team-a";
  j.status = model::JobStatus::kRunning;
  j.is_terminated = true;
  j.priority = 7;
  j.MutableOptions().preemption_retries = 3;
  j.attempt_timeout_seconds = 60;
  j.MutableOptions().timeout_config_seconds = 90;
  j.MutableOptions().retry = {.attempts = 4,
                              .evaluate_on_exit = {{model::RetryAction::kExit, "*OOM*"},
                                                   {model::RetryAction::kRetry, "*"}}};
  j.demand = {{"ml.g5.xlarge", 2}, {"ml.p4d.24xlarge", 1}};
  j.MutableOptions().tags = {{"owner", "ana"}, {"team", "a"}};
  j.created_at = 1000;
  j.scheduled_at = 2000;
  j.started_at = 2500;
  j.runnable_since = 1500;
  j.status_reason = "Cross-share \"preemption\" \\ caf\xc3\xa9";  // escapes and UTF-8
  j.attempt = 2;
  j.failed_attempts = 1;
  j.preemptions = 1;
  j.last_checkpoint = 2400;
  JobHistory& h = j.History();
  h.attempts = {{"arn:aws:sagemaker:local:0:training-job/a-1", 1100, 1900, "preempted", true},
                {"arn:aws:sagemaker:local:0:training-job/a-2", 2000, 0, "", false}};
  h.preemptions = {{.attempt = 1,
                    .preemptor = "other-job",
                    .preemptor_name = "other",
                    .preemptor_share = "team-b",
                    .runner_up = RunnerUpRecord{{"third-job", "third", "team-a"},
                                                model::PreemptionRule::kInShare,
                                                8,
                                                4321,
                                                1050,
                                                true},
                    .rule = model::PreemptionRule::kInShare,
                    .victim_priority = 7,
                    .work_lost_when_chosen = 1234,
                    .attempt_started_at = 1100,
                    .at = 1800,
                    .work_lost = 1300}};
  h.caused = {{.at = 1700,
               .victims = {{{"v-job", "v", "team-b"}, 2, model::PreemptionRule::kReclaim, 99}}}};
  h.preempted_attempt_count = 1;
  h.hosts = {{"algo-1", 100, 5555, 101, 5556}, {"algo-2", 200, 6666, 0, 0}};
  h.slots = {{"ml.g5.xlarge", 0}, {"ml.g5.xlarge", 1}, {"ml.p4d.24xlarge", -1}};
  h.dispatch_mode = model::DispatchMode::kBorrowed;
  h.stopping = StopRecord{model::StopKind::kPreemption, "reclaim"};
  h.stop_rule = model::PreemptionRule::kReclaim;
  h.files_bytes = 123456;
  h.files_removed_at = 2600;
  h.evicted = true;
  return j;
}

TEST(JobCodec, EveryFieldSurvivesARoundTrip) {
  const JobRecord j = FullRecord();
  const std::string stored = EncodeJob(j);
  // Written field by field, it is what dumping the same value writes: compact, keys ascending.
  EXPECT_EQ(nlohmann::json::parse(stored).dump(), stored);
  Result<DecodedJob> d = DecodeJob(j.id, stored);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->queue, "q");
  EXPECT_EQ(d->share, "team-a");
  const JobRecord& r = d->record;
  EXPECT_EQ(r.seq, 42u);
  EXPECT_EQ(r.name, "Train-Big");
  const JobOptions& o = r.options();
  EXPECT_EQ(o.training_name, "custom-training-name");
  EXPECT_EQ(r.status, model::JobStatus::kRunning);
  EXPECT_TRUE(r.is_terminated);
  EXPECT_EQ(r.priority, 7);
  EXPECT_EQ(o.preemption_retries, 3);
  EXPECT_EQ(r.attempt_timeout_seconds, 60);
  EXPECT_EQ(o.timeout_config_seconds, 90);
  ASSERT_TRUE(o.retry.has_value());
  EXPECT_EQ(o.retry->attempts, 4);
  ASSERT_EQ(o.retry->evaluate_on_exit.size(), 2u);
  EXPECT_EQ(o.retry->evaluate_on_exit[0].action, model::RetryAction::kExit);
  EXPECT_EQ(o.retry->evaluate_on_exit[0].on_status_reason, "*OOM*");
  ASSERT_EQ(r.demand.size(), 2u);
  EXPECT_EQ(r.demand[1].unit, "ml.p4d.24xlarge");
  EXPECT_EQ(o.tags, j.options().tags);
  EXPECT_EQ(r.status_reason, j.status_reason);
  EXPECT_EQ(r.last_checkpoint, 2400);
  ASSERT_NE(r.history, nullptr);
  EXPECT_EQ(*r.history, *j.history);
  // The same record encodes to the same bytes: a restart can tell whether it changed.
  JobRecord again = std::move(d).value().record;
  again.queue = "q";
  again.share = "team-a";
  EXPECT_EQ(EncodeJob(again), stored);
}

TEST(JobCodec, AWaitingJobsRecordIsSmallAndHasNoHistory) {
  JobRecord j;
  j.seq = 7;
  j.id = "0b7e5a52-1c2d-4e3f-8a9b-0c1d2e3f4a5b";
  j.name = "job-0000007";
  j.queue = "queue";
  j.share = "s1";
  j.status = model::JobStatus::kRunnable;
  j.demand = {{"ml.g5.xlarge", 1}};
  j.created_at = 1764720000000;
  j.runnable_since = 1764720000001;
  const std::string stored = EncodeJob(j);
  EXPECT_LT(stored.size(), 250u) << stored;
  EXPECT_EQ(nlohmann::json::parse(stored).dump(), stored);
  EXPECT_EQ(stored.find("hist"), std::string::npos) << stored;
  Result<DecodedJob> d = DecodeJob(j.id, stored);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->record.history, nullptr);
  EXPECT_EQ(d->record.extra, nullptr);
  EXPECT_EQ(d->record.Spec().retry.attempts, 1);
}

TEST(JobCodec, ADocumentFromBeforeTheTypedRecordsIsRead) {
  const std::string legacy = R"({
    "jobArn": "arn:aws:batch:local:000000000000:service-job/abc",
    "jobId": "abc", "jobName": "old", "jobQueue": "arn:aws:batch:local:000000000000:job-queue/q1",
    "quotaShareName": "s", "serviceJobType": "SAGEMAKER_TRAINING", "schedulingPriority": 5,
    "status": "RUNNING", "createdAt": 10, "scheduledAt": 20, "startedAt": 25,
    "statusReason": "why", "isTerminated": false,
    "capacityUsage": [{"capacityUnit": "ml.g5.xlarge", "quantity": 2.0}],
    "attempts": [
      {"serviceResourceId": {"name": "TrainingJobArn", "value": "arn:1"}, "startedAt": 12,
       "stoppedAt": 18, "statusReason": "Cross-share preemption"},
      {"serviceResourceId": {"name": "TrainingJobArn", "value": "arn:2"}, "startedAt": 20}],
    "latestAttempt": {"serviceResourceId": {"name": "TrainingJobArn", "value": "arn:2"}},
    "tags": {"k": "v"},
    "retryStrategy": {"attempts": 3, "evaluateOnExit": [{"action": "EXIT", "onStatusReason": "x*"}]},
    "timeoutConfig": {"attemptDurationSeconds": 100},
    "preemptionConfiguration": {"preemptionRetriesBeforeTermination": 2},
    "preemptionSummary": {"preemptedAttemptCount": 1, "recentPreemptedAttempts": [
      {"serviceResourceId": {"name": "TrainingJobArn", "value": "arn:1"}, "startedAt": 12,
       "stoppedAt": 18, "statusReason": "Cross-share preemption"}]},
    "allot": {"seq": 9, "attempt": 2, "failedAttempts": 0, "preemptions": 1, "lastCheckpoint": 15,
              "runnableSince": 19, "attemptTimeoutSeconds": 100, "dispatchMode": "BORROWED",
              "preemptionRecords": [{"attempt": 1, "preemptor": "p", "rule": "RECLAIM",
                "victimKey": {"priority": 5, "workLostInstanceSeconds": 1.5, "attemptStartedAt": 12},
                "at": 17, "workLostInstanceSeconds": 2.25}],
              "hosts": [{"host": "algo-1", "pid": 11, "start_time": 99, "child_pid": 12,
                         "child_start_time": 100}],
              "slots": [{"unit": "ml.g5.xlarge", "slot": 1}],
              "stopping": {"kind": "PREEMPTION", "reason": "r"}, "stopRule": "RECLAIM"}})";
  Result<DecodedJob> d = DecodeJob("abc", legacy);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->queue, "q1");
  EXPECT_EQ(d->share, "s");
  const JobRecord& r = d->record;
  EXPECT_EQ(r.seq, 9u);
  EXPECT_EQ(r.status, model::JobStatus::kRunning);
  EXPECT_EQ(r.priority, 5);
  EXPECT_EQ(r.demand, (model::Demand{{"ml.g5.xlarge", 2}}));
  EXPECT_EQ(r.options().tags, (std::vector<std::pair<std::string, std::string>>{{"k", "v"}}));
  EXPECT_EQ(r.options().retry->attempts, 3);
  EXPECT_EQ(r.options().timeout_config_seconds, 100);
  EXPECT_EQ(r.options().preemption_retries, 2);
  EXPECT_EQ(r.runnable_since, 19);
  ASSERT_NE(r.history, nullptr);
  const JobHistory& h = *r.history;
  ASSERT_EQ(h.attempts.size(), 2u);
  EXPECT_TRUE(h.attempts[0].preempted);
  EXPECT_FALSE(h.attempts[1].preempted);
  EXPECT_EQ(h.attempts[1].stopped_at, 0);
  ASSERT_EQ(h.preemptions.size(), 1u);
  EXPECT_EQ(h.preemptions[0].work_lost_when_chosen, 1500);
  EXPECT_EQ(h.preemptions[0].work_lost, 2250);
  EXPECT_EQ(h.hosts, (std::vector<exec::HostProcess>{{"algo-1", 11, 99, 12, 100}}));
  ASSERT_EQ(h.slots.size(), 1u);
  EXPECT_EQ(h.slots[0].slot, 1);
  EXPECT_EQ(h.dispatch_mode, model::DispatchMode::kBorrowed);
  ASSERT_TRUE(h.stopping.has_value());
  EXPECT_EQ(h.stopping->kind, model::StopKind::kPreemption);
}

TEST(JobCodec, CorruptOrNewerRecordsAreErrorsNamingTheJob) {
  for (const char* bad : {"not json", "[]", R"({"v": 2, "seq": "x"})",
                          R"({"v": 2, "seq": 1, "id": "a", "name": "n", "queue": "q",
                              "status": "BOGUS", "created": 1, "demand": []})"}) {
    Result<DecodedJob> d = DecodeJob("job-x", bad);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_EQ(d.status().code(), StatusCode::kInternal);
    EXPECT_NE(d.status().message().find("job-x"), std::string::npos) << d.status().message();
  }
  // Why the text is not JSON is said, without quoting it.
  Result<DecodedJob> truncated = DecodeJob("job-z", R"({"v": 2, "seq)");
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.status().message(),
            "corrupt job record job-z in the store: the record is not valid JSON: unexpected end "
            "of input (at byte 13)");
  Result<DecodedJob> newer = DecodeJob("job-y", R"({"v": 3})");
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.status().message().find("newer Allot"), std::string::npos);
}

TEST(ClientTokenCodec, ReadsBackWhatItWritesAndNamesACorruptRecord) {
  const std::string stored = EncodeClientToken({"j-1", "h1"});
  EXPECT_EQ(stored, R"({"hash":"h1","jobId":"j-1"})");  // the form stored since the first release
  Result<ClientTokenRecord> back = DecodeClientToken("q1/t", stored);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->job_id, "j-1");
  EXPECT_EQ(back->request_hash, "h1");
  for (const char* bad : {"", "[]", R"({"jobId":"j"})", R"({"jobId":1,"hash":"h"})"}) {
    Result<ClientTokenRecord> r = DecodeClientToken("q1/t", bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInternal);
    EXPECT_NE(r.status().message().find("client token record q1/t"), std::string::npos);
  }
}

}  // namespace
}  // namespace allot::server
