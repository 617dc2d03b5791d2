// Policies and the audit trail in the controller (issue 10, sections 2 and 3): a denied call
// changes nothing and is audited; an audit record commits in the batch of its change, so a
// failed write loses both; users are rolled back like everything else; keys from before users
// become the admin's.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "auth/policy.h"
#include "server/controller.h"
#include "server/support/controller_fixture.h"
#include "server/support/test_dir.h"
#include "server/wire_call.h"
#include "store/faulty_store.h"

namespace allot::server {
namespace {

namespace fs = std::filesystem;

std::string Payload() {
  return Json{{"AlgorithmSpecification",
               {{"ContainerEntrypoint", {"/bin/sh", "-c"}}, {"ContainerArguments", {"exit 0"}}}},
              {"ResourceConfig", {{"InstanceType", "ml.g5.xlarge"}, {"InstanceCount", 1}}}}
      .dump();
}

Caller UserWith(const std::string& name, const std::string& policy_json) {
  Caller c;
  c.user = name;
  c.arn = "arn:aws:iam::000000000000:user/" + name;
  c.source = "192.0.2.7";
  c.request_id = "req-" + name;
  Result<auth::Policy> p = auth::ParsePolicy(policy_json);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (p.ok()) c.policies = std::make_shared<const std::vector<auth::Policy>>(1, p.value());
  return c;
}

// May submit to and update jobs of queue q (no quota shares) at priority 10 at most.
constexpr const char* kCapped = R"({"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
  "Action": ["batch:SubmitServiceJob", "batch:UpdateServiceJob"], "Resource": "*",
  "Condition": {"NumericLessThanEquals": {"batch:SchedulingPriority": 10}}}]})";

class TenancyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("allot-tenancy");
    fs::create_directories(dir_);
  }
  void TearDown() override {
    controller_.reset();
    fs::remove_all(dir_);
  }

  void Start(Duration audit_retention = Options().audit_retention,
             Duration history_interval = Options().history_interval) {
    Options options;
    options.data_dir = dir_.string();
    options.sandbox = false;
    options.audit_retention = audit_retention;
    options.history_interval = history_interval;
    // The stand-in for `allot __supervise` (not this test program, which would run its tests).
    options.supervisor_exe = SupervisorExe();
    controller_ = StartOverFaultyStore(options, dir_, &store_);
    ASSERT_NE(controller_, nullptr);
  }

  // Queue q (no quota shares) on service environment env of `capacity` ml.g5.xlarge.
  // A plain queue q on service environment env, under scheduling `policy` when one is named.
  void MakeQueue(int capacity = 0, const std::string& policy = "") {
    ASSERT_TRUE(
        Call("createserviceenvironment",
             {{"serviceEnvironmentName", "env"},
              {"serviceEnvironmentType", "SAGEMAKER_TRAINING"},
              {"capacityLimits", {{{"capacityUnit", "ml.g5.xlarge"}, {"maxCapacity", capacity}}}}})
            .ok());
    Json queue = {{"jobQueueName", "q"},
                  {"priority", 1},
                  {"serviceEnvironmentOrder", {{{"order", 1}, {"serviceEnvironment", "env"}}}}};
    if (!policy.empty()) queue["schedulingPolicyArn"] = policy;
    ASSERT_TRUE(Call("createjobqueue", queue).ok());
  }

  // A quota-managed queue qm (on service environment env2) with the given shares, each
  // LEND_AND_BORROW without a borrowLimit.
  void MakeQuotaQueue(const std::vector<std::string>& shares) {
    ASSERT_TRUE(
        Call("createschedulingpolicy",
             {{"name", "qp"}, {"quotaSharePolicy", {{"idleResourceAssignmentStrategy", "FIFO"}}}})
            .ok());
    ASSERT_TRUE(Call("createserviceenvironment",
                     {{"serviceEnvironmentName", "env2"},
                      {"serviceEnvironmentType", "SAGEMAKER_TRAINING"},
                      {"capacityLimits", {{{"capacityUnit", "ml.g5.xlarge"}, {"maxCapacity", 0}}}}})
                    .ok());
    ASSERT_TRUE(Call("createjobqueue", {{"jobQueueName", "qm"},
                                        {"priority", 1},
                                        {"schedulingPolicyArn", "qp"},
                                        {"serviceEnvironmentOrder",
                                         {{{"order", 1}, {"serviceEnvironment", "env2"}}}}})
                    .ok());
    for (const std::string& share : shares) {
      Result<Json> made =
          Call("createquotashare",
               {{"quotaShareName", share},
                {"jobQueue", "qm"},
                {"capacityLimits", {{{"capacityUnit", "ml.g5.xlarge"}, {"maxCapacity", 1}}}},
                {"resourceSharingConfiguration", {{"strategy", "LEND_AND_BORROW"}}},
                {"preemptionConfiguration", {{"inSharePreemption", "DISABLED"}}}});
      ASSERT_TRUE(made.ok()) << made.status().ToString();
    }
  }

  Result<Json> Call(const std::string& action, const Json& request,
                    const Caller& caller = Caller::System()) {
    Result<WireReply> answer = CallAction(*controller_, action, request, caller);
    if (!answer.ok()) return answer.status();
    if (answer->durable.valid()) {
      if (Status s = answer->durable.get(); !s.ok()) return s;
    }
    return answer->body;
  }

  Json SubmitRequest(int priority) {
    return {{"jobName", "j"},
            {"jobQueue", "q"},
            {"serviceJobType", "SAGEMAKER_TRAINING"},
            {"schedulingPriority", priority},
            {"serviceRequestPayload", Payload()}};
  }

  std::vector<AuditRecord> Audit() {
    auto records = store_->Range(store::Kind::kAudit, {.limit = 1000});
    EXPECT_TRUE(records.ok());
    std::vector<AuditRecord> out;
    for (const store::Record& r : records.value())
      out.push_back(DecodeAudit(r.key, r.value).value());
    return out;
  }

  fs::path dir_;
  store::FaultyStore* store_ = nullptr;
  std::unique_ptr<Controller> controller_;
};

TEST_F(TenancyTest, ADeniedCallChangesNothingAndIsAuditedWithWhatItAsked) {
  Start();
  MakeQueue();
  const Caller alice = UserWith("alice", kCapped);
  Result<Json> job = Call("submitservicejob", SubmitRequest(10), alice);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const std::string id = job.value()["jobId"];
  Result<Json> raise = Call("updateservicejob", {{"jobId", id}, {"schedulingPriority", 11}}, alice);
  ASSERT_FALSE(raise.ok());
  EXPECT_EQ(raise.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(raise.status().message(),
            "User: arn:aws:iam::000000000000:user/alice is not authorized to perform: "
            "batch:UpdateServiceJob on resource: arn:aws:batch:local:000000000000:service-job/" +
                id + " because no identity-based policy allows the batch:UpdateServiceJob action");
  EXPECT_EQ(Call("describeservicejob", {{"jobId", id}}).value()["schedulingPriority"], 10);
  EXPECT_EQ(Call("describeservicejob", {{"jobId", id}}).value()["allot"]["submittedBy"], "alice");
  const std::vector<AuditRecord> audit = Audit();
  ASSERT_GE(audit.size(), 4u);  // the environment, the queue, the submission, the raise
  const AuditRecord& denied = audit.back();
  EXPECT_EQ(denied.action, "batch:UpdateServiceJob");
  EXPECT_EQ(denied.outcome, "AccessDenied");
  EXPECT_EQ(denied.user, "alice");
  EXPECT_EQ(denied.source, "192.0.2.7");
  EXPECT_EQ(denied.request_id, "req-alice");
  ASSERT_EQ(denied.changes.size(), 1u);
  EXPECT_EQ(denied.changes[0].field, "schedulingPriority");
  EXPECT_EQ(denied.changes[0].old_value, "10");
  EXPECT_EQ(denied.changes[0].new_value, "11");
  const AuditRecord& submitted = audit[audit.size() - 2];
  EXPECT_EQ(submitted.outcome, "Allowed");
  EXPECT_EQ(submitted.resource, "arn:aws:batch:local:000000000000:service-job/" + id);
  // A refused (invalid) call is audited with its error; a read is not audited.
  Json no_queue = SubmitRequest(5);
  no_queue["jobQueue"] = "nope";
  ASSERT_FALSE(Call("submitservicejob", no_queue, alice).ok());
  ASSERT_FALSE(Call("describeservicejob", {{"jobId", id}}, alice).ok());
  EXPECT_EQ(Audit().size(), audit.size() + 1);
  EXPECT_EQ(Audit().back().outcome.rfind("ClientException: ", 0), 0u);
}

// A denied update's record shows what it asked to change; a request refused while it was
// decoded names where it was aimed, and a submission the priority it asked for.
TEST_F(TenancyTest, RefusedCallsAreAuditedWithWhereTheyAimedAndWhatTheyAsked) {
  Start();
  MakeQueue();
  const Caller alice = UserWith("alice", kCapped);
  ASSERT_EQ(Call("updatejobqueue", {{"jobQueue", "q"}, {"priority", 7}}, alice).status().code(),
            StatusCode::kPermissionDenied);
  AuditRecord denied = Audit().back();
  EXPECT_EQ(denied.action, "batch:UpdateJobQueue");
  EXPECT_EQ(denied.outcome, "AccessDenied");
  EXPECT_EQ(denied.resource, "arn:aws:batch:local:000000000000:job-queue/q");
  ASSERT_EQ(denied.changes.size(), 1u);
  EXPECT_EQ(denied.changes[0].field, "priority");
  EXPECT_EQ(denied.changes[0].old_value, "1");
  EXPECT_EQ(denied.changes[0].new_value, "7");

  Json bad_payload = SubmitRequest(5);
  bad_payload["serviceRequestPayload"] = "{}";
  ASSERT_EQ(Call("submitservicejob", bad_payload, alice).status().code(),
            StatusCode::kInvalidArgument);
  const AuditRecord refused = Audit().back();
  EXPECT_EQ(refused.action, "batch:SubmitServiceJob");
  EXPECT_EQ(refused.outcome.rfind("ClientException: serviceRequestPayload", 0), 0u)
      << refused.outcome;
  EXPECT_EQ(refused.resource, "arn:aws:batch:local:000000000000:job-queue/q");
  ASSERT_EQ(refused.changes.size(), 1u);
  EXPECT_EQ(refused.changes[0].field, "schedulingPriority");
  EXPECT_EQ(refused.changes[0].new_value, "5");
}

// An update's record compares what the queue would hold: a policy or an environment named by
// name where the record holds its ARN (or the other way round) is no change; a real change shows
// the old and new values as the record holds them.
TEST_F(TenancyTest, AQueueUpdateNamingTheSameResourceOtherwiseRecordsNoChange) {
  Start();
  for (const char* name : {"p1", "p2"}) {
    ASSERT_TRUE(Call("createschedulingpolicy", {{"name", name}}).ok());
  }
  MakeQueue(0, "p1");
  const std::string at = "arn:aws:batch:local:000000000000:";
  auto update = [&](const Json& fields) {
    Json request = fields;
    request["jobQueue"] = "q";
    EXPECT_TRUE(Call("updatejobqueue", request).ok());
    return Audit().back().changes;
  };
  auto order = [](const std::string& env, int position) {
    return Json::array({{{"order", position}, {"serviceEnvironment", env}}});
  };
  EXPECT_TRUE(update({{"schedulingPolicyArn", "p1"}}).empty());
  EXPECT_TRUE(update({{"schedulingPolicyArn", at + "scheduling-policy/p1"}}).empty());
  std::vector<AuditChange> changes = update({{"schedulingPolicyArn", "p2"}});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].field, "schedulingPolicyArn");
  EXPECT_EQ(changes[0].old_value, Json(at + "scheduling-policy/p1").dump());
  EXPECT_EQ(changes[0].new_value, Json(at + "scheduling-policy/p2").dump());

  EXPECT_TRUE(
      update({{"serviceEnvironmentOrder", order(at + "service-environment/env", 1)}}).empty());
  changes = update({{"serviceEnvironmentOrder", order(at + "service-environment/env", 2)}});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].field, "serviceEnvironmentOrder");
  EXPECT_EQ(changes[0].old_value, order("env", 1).dump());
  EXPECT_EQ(changes[0].new_value, order("env", 2).dump());
}

// An update's record compares each field as the record would hold it after the update: a field
// sent with a default left out (LEND_AND_BORROW without its borrowLimit, which the record holds
// as -1) or sent as null is no change; a real change shows old and new as the record holds them.
TEST_F(TenancyTest, AnUpdateLeavingAFieldAsItIsRecordsNoChange) {
  Start();
  MakeQueue();
  MakeQuotaQueue({"team"});
  const std::string share = "arn:aws:batch:local:000000000000:job-queue/qm/quota-share/team";
  auto update = [&](const std::string& action, const Json& request) {
    Result<Json> done = Call(action, request);
    EXPECT_TRUE(done.ok()) << done.status().ToString();
    return Audit().back().changes;
  };
  auto sharing = [](const Json& config) { return Json{{"resourceSharingConfiguration", config}}; };
  Json same = sharing({{"strategy", "LEND_AND_BORROW"}});
  same["quotaShareArn"] = share;
  EXPECT_TRUE(update("updatequotashare", same).empty());
  Json raised = sharing({{"strategy", "LEND_AND_BORROW"}, {"borrowLimit", 50}});
  raised["quotaShareArn"] = share;
  std::vector<AuditChange> changes = update("updatequotashare", raised);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].field, "resourceSharingConfiguration");
  EXPECT_EQ(changes[0].old_value, R"({"borrowLimit":-1,"strategy":"LEND_AND_BORROW"})");
  EXPECT_EQ(changes[0].new_value, R"({"borrowLimit":50,"strategy":"LEND_AND_BORROW"})");
  EXPECT_TRUE(update("updatequotashare", {{"quotaShareArn", share}, {"state", nullptr}}).empty());

  EXPECT_TRUE(update("updatejobqueue", {{"jobQueue", "q"}, {"priority", nullptr}}).empty());
  EXPECT_TRUE(
      update("updateserviceenvironment", {{"serviceEnvironment", "env"}, {"state", nullptr}})
          .empty());
  changes =
      update("updateserviceenvironment", {{"serviceEnvironment", "env"}, {"state", "DISABLED"}});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].old_value, R"("ENABLED")");
  EXPECT_EQ(changes[0].new_value, R"("DISABLED")");
}

// "_fifo" is a valid quota share name (AWS allows [A-Za-z0-9_-]): in a quota-managed queue it is
// an ordinary share, seen in the history by DescribeQuotaShare on its own ARN. Only a plain
// queue's internal share (which its samples name "_fifo") is seen by GetJobQueueSnapshot on the
// queue.
TEST_F(TenancyTest, AShareNamedLikeTheImplicitShareIsSeenByItsOwnArn) {
  Start();
  MakeQueue();
  MakeQuotaQueue({"_fifo"});
  ASSERT_TRUE(Call("submitservicejob", SubmitRequest(1)).ok());
  Json in_share = SubmitRequest(1);
  in_share["jobQueue"] = "qm";
  in_share["quotaShareName"] = "_fifo";
  ASSERT_TRUE(Call("submitservicejob", in_share).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the window ends before now
  auto unfinished = [&](const Caller& caller) -> std::int64_t {
    api::HistoryRequest request;
    request.endpoint = api::HistoryRequest::Endpoint::kJobs;
    Result<Controller::Reply> reply = controller_->HistoryCall(caller, request);
    EXPECT_TRUE(reply.ok()) << reply.status().ToString();
    if (!reply.ok()) return -1;
    return std::get<api::JobHistoryResponse>(reply->body).unfinished;
  };
  EXPECT_EQ(unfinished(Caller::System()), 2);
  // Allowed the queues' snapshots: the plain queue's job, not the _fifo share's.
  const Caller viewer = UserWith("viewer", R"({"Version": "2012-10-17", "Statement": [{
    "Effect": "Allow", "Action": ["batch:GetJobQueueSnapshot", "batch:DescribeServiceJob"],
    "Resource": "*"}]})");
  EXPECT_EQ(unfinished(viewer), 1);
  // Allowed the _fifo share itself: its job only.
  const Caller member = UserWith("member", R"({"Version": "2012-10-17", "Statement": [{
    "Effect": "Allow", "Action": "batch:DescribeQuotaShare",
    "Resource": "arn:aws:batch:local:000000000000:job-queue/qm/quota-share/_fifo"}, {
    "Effect": "Allow", "Action": "batch:DescribeServiceJob", "Resource": "*"}]})");
  EXPECT_EQ(unfinished(member), 1);
  const Caller both = UserWith("both", R"({"Version": "2012-10-17", "Statement": [{
    "Effect": "Allow", "Action": "batch:DescribeServiceJob", "Resource": "*"}, {
    "Effect": "Allow", "Action": "batch:GetJobQueueSnapshot",
    "Resource": "arn:aws:batch:local:000000000000:job-queue/qm"}]})");
  EXPECT_EQ(unfinished(both), 0);
}

// A plain queue's jobs name no share (DescribeServiceJob shows no quotaShareName) and its usage
// samples name its internal share "_fifo": the report shows the queue as that one share, its
// submissions counted beside its samples' figures, not as a second, nameless share.
TEST_F(TenancyTest, APlainQueueIsOneShareInTheReport) {
  Start(Options().audit_retention, 20);  // a usage sample every 20 ms
  MakeQueue(1);                          // room for the job: it runs
  Result<Json> job = Call("submitservicejob", SubmitRequest(1));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  Result<Json> described =
      Call("describeservicejob", {{"jobId", (*job)["jobId"].get<std::string>()}});
  ASSERT_TRUE(described.ok()) << described.status().ToString();
  EXPECT_FALSE(described->contains("quotaShareName"));
  api::HistoryRequest usage;
  usage.endpoint = api::HistoryRequest::Endpoint::kUsage;
  usage.queue = "q";
  usage.since = api::TimeBound::Ago(Seconds(60));  // the fine samples
  // A few usage samples: waited for, not slept for, since a loaded machine (the sanitizer build
  // beside other suites) took longer than the 150 ms this test once slept.
  Result<Controller::Reply> series = controller_->HistoryCall(Caller::System(), usage);
  for (int tries = 0; tries < 500; ++tries) {
    ASSERT_TRUE(series.ok()) << series.status().ToString();
    if (!std::get<api::UsageHistoryResponse>(series->body).series.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    series = controller_->HistoryCall(Caller::System(), usage);
  }
  ASSERT_TRUE(series.ok()) << series.status().ToString();
  const auto& sampled = std::get<api::UsageHistoryResponse>(series->body).series;
  ASSERT_FALSE(sampled.empty());
  for (const api::UsageSeries& s : sampled) EXPECT_EQ(s.share, "_fifo");
  api::HistoryRequest last_minute;
  last_minute.since = api::TimeBound::Ago(Seconds(60));
  Result<Controller::Reply> reply = controller_->HistoryCall(Caller::System(), last_minute);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  const api::UsageReportResponse& report = std::get<api::UsageReportResponse>(reply->body);
  ASSERT_EQ(report.shares.size(), 1u);
  EXPECT_EQ(report.shares[0].queue, "q");
  EXPECT_EQ(report.shares[0].share, "_fifo");
  EXPECT_EQ(report.shares[0].submitted, 1);
}

// The name a resource ARN gives is the whole of its resource part: a caller allowed on its own
// queues cannot reach another resource by hiding its type marker inside one of theirs.
TEST_F(TenancyTest, AnArnNamesOnlyWhatItsResourcePartNames) {
  Start();
  MakeQueue();
  const Caller mallory = UserWith("mallory", R"({"Version": "2012-10-17", "Statement": [{
    "Effect": "Allow", "Action": "batch:*",
    "Resource": "arn:aws:batch:*:*:job-queue/mine*"}]})");
  const std::string crafted =
      "arn:aws:batch:local:000000000000:job-queue/mine:service-environment/env";
  Result<Json> disable = Call("updateserviceenvironment",
                              {{"serviceEnvironment", crafted}, {"state", "DISABLED"}}, mallory);
  ASSERT_FALSE(disable.ok());
  EXPECT_EQ(disable.status().code(), StatusCode::kInvalidArgument);
  // An ARN in another region or account is checked as the server's own ARN of the resource.
  Result<Json> other_region =
      Call("updateserviceenvironment",
           {{"serviceEnvironment", "arn:aws:batch:elsewhere:111111111111:service-environment/env"},
            {"state", "DISABLED"}},
           mallory);
  EXPECT_EQ(other_region.status().code(), StatusCode::kPermissionDenied);
  Result<Json> envs = Call("describeserviceenvironments", Json::object());
  ASSERT_TRUE(envs.ok());
  EXPECT_EQ(envs.value()["serviceEnvironments"][0]["state"], "ENABLED");
}

TEST_F(TenancyTest, AnAuditRecordIsLostOnlyWithTheChangeItsBatchHeld) {
  Start();
  MakeQueue();
  const std::size_t before = Audit().size();
  store_->Fail(ResourceExhausted("disk full"));
  Result<Json> r = Call("submitservicejob", SubmitRequest(1), UserWith("alice", kCapped));
  ASSERT_FALSE(r.ok());
  store_->Heal();
  // The controller rolls back to what the store holds, then answers again.
  Result<Json> listed = Status(StatusCode::kUnavailable, "");
  for (int i = 0; i < 200 && !listed.ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    listed = Call("listservicejobs", {{"jobQueue", "q"}, {"jobStatus", "RUNNABLE"}});
  }
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_TRUE(listed.value()["jobSummaryList"].empty());
  EXPECT_EQ(Audit().size(), before);
  // The sequence goes on after the rollback without reusing a number that was never stored.
  ASSERT_TRUE(Call("submitservicejob", SubmitRequest(1), UserWith("alice", kCapped)).ok());
  EXPECT_EQ(Audit().size(), before + 1);
}

TEST_F(TenancyTest, UsersAreManagedOnlyWithManageUsersAndSurviveARestart) {
  Start();
  const Caller alice = UserWith("alice", kCapped);
  Result<WireReply> denied =
      CallUsers(*controller_, "POST", "", Json{{"userName", "mallory"}}, alice);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().code(), StatusCode::kPermissionDenied);
  Result<WireReply> made =
      CallUsers(*controller_, "POST", "",
                Json{{"userName", "bob"}, {"policy", Json::parse(kCapped)}}, Caller::System());
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  ASSERT_TRUE(made->durable.get().ok());
  const std::string key = made->body["accessKey"]["accessKeyId"];
  const std::string secret = made->body["accessKey"]["secretAccessKey"];
  EXPECT_EQ(controller_->SecretFor(key), secret);
  controller_.reset();
  Start();
  EXPECT_EQ(controller_->SecretFor(key), secret);
  std::optional<Caller> bob = controller_->CallerFor(key);
  ASSERT_TRUE(bob.has_value());
  EXPECT_EQ(bob->user, "bob");
  EXPECT_EQ(bob->arn, "arn:aws:iam::000000000000:user/bob");
  ASSERT_TRUE(bob->policies && bob->policies->size() == 1);
  // A user made while the store fails a write is not there once it rolled back.
  store_->Fail(ResourceExhausted("disk full"));
  Result<WireReply> lost =
      CallUsers(*controller_, "POST", "", Json{{"userName", "carol"}}, Caller::System());
  ASSERT_TRUE(lost.ok());
  EXPECT_FALSE(lost->durable.get().ok());
  const std::string lost_key = lost->body["accessKey"]["accessKeyId"];
  store_->Heal();
  for (int i = 0; i < 200 && controller_->rolling_back(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_FALSE(controller_->SecretFor(lost_key).has_value());
  EXPECT_EQ(controller_->SecretFor(key), secret);
}

TEST_F(TenancyTest, KeysFromBeforeUsersBecomeTheAdminsSealed) {
  {
    auto st = store::OpenSqliteStore({.path = (dir_ / "allot.db").string()});
    ASSERT_TRUE(st.ok());
    store::Batch b;
    b.Put(store::Kind::kCredential, "AKIAOLDKEY0000000000", "old-secret");
    ASSERT_TRUE(st.value()->Commit(std::move(b)).ok());
  }
  Start();
  EXPECT_EQ(controller_->SecretFor("AKIAOLDKEY0000000000"), "old-secret");
  std::optional<Caller> admin = controller_->CallerFor("AKIAOLDKEY0000000000");
  ASSERT_TRUE(admin.has_value());
  EXPECT_EQ(admin->user, "admin");
  auto bare = store_->Load(store::Kind::kCredential);
  ASSERT_TRUE(bare.ok());
  EXPECT_TRUE(bare->empty());
  auto users = store_->Load(store::Kind::kUser);
  ASSERT_TRUE(users.ok());
  ASSERT_EQ(users->size(), 1u);
  EXPECT_EQ(users->front().value.find("old-secret"), std::string::npos);
}

// Every 1,024th audit record prunes the records older than the retention (the store's oldest
// first, so a prune that finds the oldest record recent stops there).
TEST_F(TenancyTest, AuditRecordsPastTheRetentionArePrunedAndNoOthers) {
  for (const bool keep : {true, false}) {
    SCOPED_TRACE(keep ? "90 days' retention" : "no retention");
    TearDown();
    SetUp();
    Start(keep ? Options().audit_retention : 0);
    const Caller alice = UserWith("alice", kCapped);
    for (int i = 0; i < 1024; ++i) {
      controller_->AuditRefusal(alice, "batch:SubmitServiceJob", "refused " + std::to_string(i));
    }
    auto records = store_->Range(store::Kind::kAudit, {.limit = 2000});
    ASSERT_TRUE(records.ok());
    if (keep) {
      EXPECT_EQ(records->size(), 1024U);
    } else {
      // The 1,024th record's prune dropped the records of earlier milliseconds.
      EXPECT_LT(records->size(), 1024U);
      ASSERT_FALSE(records->empty());
      EXPECT_EQ(DecodeAudit(records->back().key, records->back().value)->outcome,
                "ClientException: refused 1023");
    }
  }
}

}  // namespace
}  // namespace allot::server

namespace allot::server {
namespace {

// Allot's own endpoints answer a Status too (issue 9, section 4): a refusal of the caller's
// policy is kPermissionDenied, a mistake kInvalidArgument naming what was wrong, and a refused
// change of users is audited like a refused AWS action.
TEST_F(TenancyTest, AllotEndpointsRefuseByStatusAndAuditRefusedUserChanges) {
  Start();
  MakeQueue();
  Result<Json> job = Call("submitservicejob", SubmitRequest(1));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const std::string id = job.value()["jobId"];
  const Caller alice = UserWith("alice", kCapped);  // may submit, not read logs or users

  Result<Controller::Reply> logs = controller_->Logs({.job_id = id}, alice);
  ASSERT_FALSE(logs.ok());
  EXPECT_EQ(logs.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(logs.status().message().find("allot:GetJobLogs"), std::string::npos);
  logs = controller_->Logs({.job_id = id, .offset = std::uint64_t{1} << 63});
  ASSERT_FALSE(logs.ok());
  EXPECT_EQ(logs.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(logs.status().message().find("offset"), std::string::npos);

  const std::size_t audited = Audit().size();
  Result<WireReply> denied = CallUsers(*controller_, "POST", "", {{"userName", "mallory"}}, alice);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().code(), StatusCode::kPermissionDenied);
  ASSERT_TRUE(CallUsers(*controller_, "POST", "", {{"userName", "bob"}}, Caller::System()).ok());
  Result<WireReply> again =
      CallUsers(*controller_, "POST", "", {{"userName", "bob"}}, Caller::System());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(again.status().message(), "Object already exists");
  Result<WireReply> bad_policy =
      CallUsers(*controller_, "PUT", "/bob/policy", {{"Version", 3}}, Caller::System());
  ASSERT_FALSE(bad_policy.ok());
  EXPECT_EQ(bad_policy.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad_policy.status().message().rfind("policy: ", 0), 0U);
  Result<WireReply> nobody = CallUsers(*controller_, "DELETE", "/nobody", {}, Caller::System());
  ASSERT_FALSE(nobody.ok());
  EXPECT_EQ(nobody.status().message(), "user nobody does not exist");
  const std::vector<AuditRecord> audit = Audit();
  ASSERT_EQ(audit.size(), audited + 5);  // the denial, the creation and three refusals
  EXPECT_EQ(audit[audited].outcome, "AccessDenied");
  EXPECT_EQ(audit[audited + 1].outcome, "Allowed");
  EXPECT_EQ(audit[audited + 2].outcome, "ClientException: Object already exists");
  EXPECT_EQ(audit[audited + 4].action, "allot:DeleteUser");
  Result<WireReply> gone = CallUsers(*controller_, "DELETE", "/bob", {}, Caller::System());
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_EQ(gone->body, Json::object());  // an empty answer is {}, as AWS's empty outputs

  // A CreateUser refused while it is decoded names the user to be, as an allowed one does.
  Result<WireReply> bad_name =
      CallUsers(*controller_, "POST", "", {{"userName", "a/b"}}, Caller::System());
  ASSERT_FALSE(bad_name.ok());
  EXPECT_EQ(bad_name.status().code(), StatusCode::kInvalidArgument);
  const std::vector<AuditRecord> after = Audit();
  EXPECT_EQ(after.back().action, "allot:CreateUser");
  EXPECT_EQ(after.back().resource, "arn:aws:iam::000000000000:user/a/b");
  EXPECT_EQ(after.back().outcome.rfind("ClientException: userName may hold only", 0), 0U);

  Result<api::HistoryRequest> history = api::DecodeHistory("/allot/v1/report", {{"since", "7x"}});
  ASSERT_FALSE(history.ok());
  EXPECT_EQ(history.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(history.status().message().rfind("since must be", 0), 0U);
  history = api::DecodeHistory("/allot/v1/report", {{"prices", "ml.g5.xlarge:cheap"}});
  ASSERT_FALSE(history.ok());
  EXPECT_EQ(history.status().message().rfind("prices must be", 0), 0U);
  api::HistoryRequest future;
  future.since = api::TimeBound::At(std::numeric_limits<Timestamp>::max());
  Result<Controller::Reply> report = controller_->HistoryCall(Caller::System(), future);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(report.status().message(), "since must be in the past");
}

}  // namespace
}  // namespace allot::server
