// The request decoders of api/decode.h, one action at a time, without a server: every route
// decodes a minimal body, every refusal is InvalidArgument and names the field as it was sent,
// and the typed request holds what the body said.

#include "api/decode.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "api/requests.h"

namespace allot::api {
namespace {

using Json = nlohmann::json;

const std::string kArnPrefix = "arn:aws:batch:us-east-1:123456789012:";
const std::string kShareArn = kArnPrefix + "job-queue/q1/quota-share/s1";
const std::string kPayload =
    R"({"AlgorithmSpecification": {"ContainerEntrypoint": ["/bin/sh", "-c"],)"
    R"( "ContainerArguments": ["exit 0"]},)"
    R"( "ResourceConfig": {"InstanceType": "ml.m5.large", "InstanceCount": 2}})";

Json J(std::string_view text) { return Json::parse(text); }

Json SubmitBody() {
  return {{"jobName", "j1"},
          {"jobQueue", "q1"},
          {"serviceJobType", "SAGEMAKER_TRAINING"},
          {"serviceRequestPayload", kPayload}};
}

Json CreateQueueBody() {
  return J(R"({"jobQueueName": "q1", "priority": 1,
               "serviceEnvironmentOrder": [{"order": 1, "serviceEnvironment": "env1"}]})");
}

Json CreateShareBody() {
  return J(R"({"quotaShareName": "s1", "jobQueue": "q1",
               "capacityLimits": [{"capacityUnit": "ml.m5.large", "maxCapacity": 2}],
               "resourceSharingConfiguration": {"strategy": "RESERVE"},
               "preemptionConfiguration": {"inSharePreemption": "DISABLED"}})");
}

Json CreateEnvironmentBody() {
  return J(R"({"serviceEnvironmentName": "env1", "serviceEnvironmentType": "SAGEMAKER_TRAINING",
               "capacityLimits": [{"capacityUnit": "ml.m5.large", "maxCapacity": 4}]})");
}

// One route with the smallest body it accepts.
struct Minimal {
  std::string_view route;
  std::string_view action;
  bool mutating;
  Json body;
};

std::vector<Minimal> MinimalBodies() {
  const Json share = {{"quotaShareArn", kShareArn}};
  return {
      {"createserviceenvironment", "CreateServiceEnvironment", true, CreateEnvironmentBody()},
      {"updateserviceenvironment",
       "UpdateServiceEnvironment",
       true,
       {{"serviceEnvironment", "env1"}}},
      {"describeserviceenvironments", "DescribeServiceEnvironments", false, Json::object()},
      {"deleteserviceenvironment",
       "DeleteServiceEnvironment",
       true,
       {{"serviceEnvironment", "env1"}}},
      {"createschedulingpolicy", "CreateSchedulingPolicy", true, {{"name", "p1"}}},
      {"updateschedulingpolicy", "UpdateSchedulingPolicy", true, {{"arn", "p1"}}},
      {"describeschedulingpolicies", "DescribeSchedulingPolicies", false, J(R"({"arns": ["p1"]})")},
      {"listschedulingpolicies", "ListSchedulingPolicies", false, Json::object()},
      {"deleteschedulingpolicy", "DeleteSchedulingPolicy", true, {{"arn", "p1"}}},
      {"createjobqueue", "CreateJobQueue", true, CreateQueueBody()},
      {"updatejobqueue", "UpdateJobQueue", true, {{"jobQueue", "q1"}}},
      {"describejobqueues", "DescribeJobQueues", false, Json::object()},
      {"deletejobqueue", "DeleteJobQueue", true, {{"jobQueue", "q1"}}},
      {"createquotashare", "CreateQuotaShare", true, CreateShareBody()},
      {"updatequotashare", "UpdateQuotaShare", true, share},
      {"describequotashare", "DescribeQuotaShare", false, share},
      {"listquotashares", "ListQuotaShares", false, {{"jobQueue", "q1"}}},
      {"deletequotashare", "DeleteQuotaShare", true, share},
      {"submitservicejob", "SubmitServiceJob", true, SubmitBody()},
      {"updateservicejob", "UpdateServiceJob", true, {{"jobId", "7"}, {"schedulingPriority", 5}}},
      {"describeservicejob", "DescribeServiceJob", false, {{"jobId", "7"}}},
      {"listservicejobs", "ListServiceJobs", false, {{"jobQueue", "q1"}}},
      {"terminateservicejob", "TerminateServiceJob", true, {{"jobId", "7"}, {"reason", "r"}}},
      {"getjobqueuesnapshot", "GetJobQueueSnapshot", false, {{"jobQueue", "q1"}}},
  };
}

// The request `route` decodes `body` into, as a T; a failure (and T{}) when it is refused.
template <typename T>
T Decode(std::string_view route, const Json& body) {
  Result<Request> r = DecodeRequest(route, body);
  if (!r.ok()) {
    ADD_FAILURE() << route << " refused " << body.dump() << ": " << r.status().message();
    return T{};
  }
  if (!std::holds_alternative<T>(*r)) {
    ADD_FAILURE() << route << " decoded as " << ActionOf(*r);
    return T{};
  }
  return std::get<T>(*r);
}

// `status` is InvalidArgument and its message starts with `field` (the field as sent).
::testing::AssertionResult RefusalNames(const Status& status, std::string_view field) {
  if (status.ok()) return ::testing::AssertionFailure() << "accepted; expected a refusal";
  if (status.code() != StatusCode::kInvalidArgument) {
    return ::testing::AssertionFailure() << "not InvalidArgument: " << status.message();
  }
  if (status.message().rfind(field, 0) != 0) {
    return ::testing::AssertionFailure()
           << "the message does not start with " << field << ": " << status.message();
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult Refused(std::string_view route, const Json& body,
                                   std::string_view field) {
  Result<Request> r = DecodeRequest(route, body);
  if (r.ok()) {
    return ::testing::AssertionFailure()
           << route << " accepted " << body.dump() << "; expected a refusal naming " << field;
  }
  return RefusalNames(r.status(), field) << " (" << route << ", " << body.dump() << ")";
}

::testing::AssertionResult Accepted(std::string_view route, const Json& body) {
  Result<Request> r = DecodeRequest(route, body);
  if (!r.ok()) {
    return ::testing::AssertionFailure()
           << route << " refused " << body.dump() << ": " << r.status().message();
  }
  return ::testing::AssertionSuccess();
}

// --- routes ---

TEST(DecodeRoutes, EveryRouteDecodesItsMinimalBody) {
  const std::vector<Minimal> cases = MinimalBodies();
  ASSERT_EQ(cases.size(), std::variant_size_v<Request>);
  std::set<std::size_t> alternatives;
  for (const Minimal& c : cases) {
    SCOPED_TRACE(std::string(c.route));
    std::optional<ActionInfo> info = FindAction(c.route);
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->name, c.action);
    EXPECT_EQ(info->mutating, c.mutating);
    Result<Request> r = DecodeRequest(c.route, c.body);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(ActionOf(*r), c.action);
    alternatives.insert(r->index());
  }
  EXPECT_EQ(alternatives.size(), std::variant_size_v<Request>);  // each route its own request
}

TEST(DecodeRoutes, MutatingFollowsTheVerb) {
  for (const Minimal& c : MinimalBodies()) {
    const std::string_view a = c.action;
    const bool changes = a.starts_with("Create") || a.starts_with("Update") ||
                         a.starts_with("Delete") || a.starts_with("Submit") ||
                         a.starts_with("Terminate");
    const bool reads = a.starts_with("Describe") || a.starts_with("List") || a.starts_with("Get");
    EXPECT_NE(changes, reads) << a;
    EXPECT_EQ(FindAction(c.route)->mutating, changes) << a;
  }
}

TEST(DecodeRoutes, UnknownActionsAreRefused) {
  for (std::string_view route : {"", "nosuchaction", "SubmitServiceJob", "submitservicejobs",
                                 "listtagsforresource", "submitservicejob "}) {
    EXPECT_FALSE(FindAction(route).has_value()) << route;
    Result<Request> r = DecodeRequest(route, Json::object());
    ASSERT_FALSE(r.ok()) << route;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("unknown action"), std::string::npos);
  }
}

TEST(DecodeRoutes, ANonObjectBodyIsRefused) {
  for (const Minimal& c : MinimalBodies()) {
    for (const Json& body :
         {Json(), Json::array(), Json("{}"), Json(1), J(R"([{"jobId": "7"}])")}) {
      Result<Request> r = DecodeRequest(c.route, body);
      ASSERT_FALSE(r.ok()) << c.route << " " << body.dump();
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
      EXPECT_EQ(r.status().message(), "the request body must be a JSON object");
    }
  }
}

TEST(DecodeRoutes, AnEmptyBodyNamesTheFirstRequiredField) {
  EXPECT_TRUE(Refused("createserviceenvironment", Json::object(), "serviceEnvironmentName"));
  EXPECT_TRUE(Refused("updateserviceenvironment", Json::object(), "serviceEnvironment"));
  EXPECT_TRUE(Refused("deleteserviceenvironment", Json::object(), "serviceEnvironment"));
  EXPECT_TRUE(Refused("createschedulingpolicy", Json::object(), "name"));
  EXPECT_TRUE(Refused("updateschedulingpolicy", Json::object(), "arn"));
  EXPECT_TRUE(Refused("describeschedulingpolicies", Json::object(), "arns"));
  EXPECT_TRUE(Refused("deleteschedulingpolicy", Json::object(), "arn"));
  EXPECT_TRUE(Refused("createjobqueue", Json::object(), "jobQueueName"));
  EXPECT_TRUE(Refused("updatejobqueue", Json::object(), "jobQueue"));
  EXPECT_TRUE(Refused("deletejobqueue", Json::object(), "jobQueue"));
  EXPECT_TRUE(Refused("createquotashare", Json::object(), "quotaShareName"));
  EXPECT_TRUE(Refused("updatequotashare", Json::object(), "quotaShareArn"));
  EXPECT_TRUE(Refused("describequotashare", Json::object(), "quotaShareArn"));
  EXPECT_TRUE(Refused("listquotashares", Json::object(), "jobQueue"));
  EXPECT_TRUE(Refused("deletequotashare", Json::object(), "quotaShareArn"));
  EXPECT_TRUE(Refused("submitservicejob", Json::object(), "jobName"));
  EXPECT_TRUE(Refused("updateservicejob", Json::object(), "jobId"));
  EXPECT_TRUE(Refused("describeservicejob", Json::object(), "jobId"));
  EXPECT_TRUE(Refused("listservicejobs", Json::object(), "jobQueue"));
  EXPECT_TRUE(Refused("terminateservicejob", Json::object(), "jobId"));
  EXPECT_TRUE(Refused("getjobqueuesnapshot", Json::object(), "jobQueue"));
  EXPECT_TRUE(Refused("terminateservicejob", {{"jobId", "7"}}, "reason"));
  EXPECT_TRUE(Refused("updateservicejob", {{"jobId", "7"}}, "schedulingPriority"));
}

TEST(DecodeRoutes, AWrongTypeIsRefusedNamingTheField) {
  Json submit = SubmitBody();
  submit["jobName"] = 5;
  EXPECT_TRUE(Refused("submitservicejob", submit, "jobName must be a string"));
  EXPECT_TRUE(Refused("describeservicejob", {{"jobId", Json::array()}}, "jobId must be a string"));
  EXPECT_TRUE(Refused("describejobqueues", {{"jobQueues", "q1"}}, "jobQueues must be a list"));
  EXPECT_TRUE(Refused("describejobqueues", J(R"({"jobQueues": [1]})"), "jobQueues"));
  // A bad name in the list names the list the caller sent (it said jobQueue before).
  EXPECT_TRUE(Refused("describejobqueues", J(R"({"jobQueues": ["training/"]})"), "jobQueues "));
  EXPECT_TRUE(Refused("describeserviceenvironments", J(R"({"serviceEnvironments": ["se/"]})"),
                      "serviceEnvironments "));
  EXPECT_TRUE(Refused("updatequotashare", {{"quotaShareArn", kShareArn}, {"state", "PAUSED"}},
                      "state must be one of ENABLED, DISABLED"));
  Json queue = CreateQueueBody();
  queue["jobQueueType"] = "ECS";
  EXPECT_TRUE(Refused("createjobqueue", queue, "jobQueueType"));
  queue = CreateQueueBody();
  queue["computeEnvironmentOrder"] = J(R"([{"order": 1}])");
  EXPECT_TRUE(Refused("createjobqueue", queue, "computeEnvironmentOrder"));
  queue["computeEnvironmentOrder"] = Json::array();  // what the SDK sends
  EXPECT_TRUE(Accepted("createjobqueue", queue));
  // An update is refused the same way (before, it ignored the list).
  Json update = {{"jobQueue", "q1"}, {"computeEnvironmentOrder", J(R"([{"order": 1}])")}};
  EXPECT_TRUE(Refused("updatejobqueue", update, "computeEnvironmentOrder"));
  update["computeEnvironmentOrder"] = Json::array();
  EXPECT_TRUE(Accepted("updatejobqueue", update));
  queue["serviceEnvironmentOrder"] = Json::array();
  EXPECT_TRUE(Refused("createjobqueue", queue, "serviceEnvironmentOrder"));
  Json policy = {{"name", "p1"}, {"fairsharePolicy", Json::object()}};
  EXPECT_TRUE(Refused("createschedulingpolicy", policy, "fairsharePolicy"));
}

// --- tags ---

TagList TagsOf(const Request& request) {
  return std::visit(
      [](const auto& r) -> TagList {
        if constexpr (requires { r.tags; }) {
          return r.tags;
        } else {
          return {};
        }
      },
      request);
}

struct Tagged {
  std::string_view route;
  Json body;
};

std::vector<Tagged> TaggedBodies() {
  return {{"createserviceenvironment", CreateEnvironmentBody()},
          {"createjobqueue", CreateQueueBody()},
          {"createquotashare", CreateShareBody()},
          {"createschedulingpolicy", {{"name", "p1"}}},
          {"submitservicejob", SubmitBody()}};
}

TEST(DecodeTags, ComeBackInKeyOrder) {
  for (const Tagged& t : TaggedBodies()) {
    SCOPED_TRACE(std::string(t.route));
    Json body = t.body;
    body["tags"] = J(R"({"b": "2", "a": "1"})");
    Result<Request> r = DecodeRequest(t.route, body);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(TagsOf(*r), (TagList{{"a", "1"}, {"b", "2"}}));

    Result<Request> none = DecodeRequest(t.route, t.body);
    ASSERT_TRUE(none.ok());
    EXPECT_TRUE(TagsOf(*none).empty());
    body["tags"] = nullptr;
    Result<Request> null_tags = DecodeRequest(t.route, body);
    ASSERT_TRUE(null_tags.ok());
    EXPECT_TRUE(TagsOf(*null_tags).empty());
  }
}

TEST(DecodeTags, LimitsAtTheEdges) {
  Json fifty = Json::object();
  for (int i = 0; i < 50; ++i) fifty["k" + std::to_string(i)] = "v";
  Json fifty_one = fifty;
  fifty_one["k50"] = "v";
  for (const Tagged& t : TaggedBodies()) {
    SCOPED_TRACE(std::string(t.route));
    Json body = t.body;
    auto with = [&](Json tags) {
      body["tags"] = std::move(tags);
      return body;
    };
    Result<Request> r = DecodeRequest(t.route, with(fifty));
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(TagsOf(*r).size(), 50u);
    EXPECT_TRUE(Refused(t.route, with(fifty_one), "tags"));
    EXPECT_TRUE(Refused(t.route, with(Json::object()), "tags"));  // the model: 1 to 50
    EXPECT_TRUE(Refused(t.route, with({{"", "v"}}), "tags"));
    EXPECT_TRUE(Accepted(t.route, with({{std::string(128, 'k'), "v"}})));
    EXPECT_TRUE(Refused(t.route, with({{std::string(129, 'k'), "v"}}), "tags"));
    EXPECT_TRUE(Refused(t.route, with({{"k", 5}}), "tags"));
    EXPECT_TRUE(Refused(t.route, with({{"k", nullptr}}), "tags"));
    EXPECT_TRUE(Refused(t.route, with({{"k", Json::array()}}), "tags"));
    EXPECT_TRUE(Accepted(t.route, with({{"k", std::string(256, 'v')}})));
    EXPECT_TRUE(Accepted(t.route, with({{"k", ""}})));
    EXPECT_TRUE(Refused(t.route, with({{"k", std::string(257, 'v')}}), "tags"));
    EXPECT_TRUE(Refused(t.route, with("a=1"), "tags"));
    EXPECT_TRUE(Refused(t.route, with(J(R"([["a", "1"]])")), "tags"));
    // AWS reserves the prefix (in any case); a key that only contains it is the caller's.
    EXPECT_TRUE(Refused(t.route, with({{"aws:x", "v"}}), "tags keys must not begin with"));
    EXPECT_TRUE(Refused(t.route, with({{"AWS:x", "v"}}), "tags keys"));
    EXPECT_TRUE(Accepted(t.route, with({{"team:aws:x", "v"}, {"aws", "v"}})));
  }
}

// /v1/tags/{resourceArn}: the resource part of the ARN decides what it names.
TEST(DecodeTags, TheResourcePartOfTheArnNamesTheResource) {
  using Type = TaggedResource::Type;
  const std::string prefix = "arn:aws:batch:us-east-1:123456789012:";
  const struct {
    std::string arn;
    Type type;
    std::string name;
    std::string share;
  } kGood[] = {
      {prefix + "service-environment/env1", Type::kServiceEnvironment, "env1", ""},
      {prefix + "scheduling-policy/p1", Type::kSchedulingPolicy, "p1", ""},
      {prefix + "job-queue/q1", Type::kJobQueue, "q1", ""},
      {prefix + "job-queue/q1/quota-share/s1", Type::kQuotaShare, "q1", "s1"},
      {prefix + "service-job/0190-ab", Type::kServiceJob, "0190-ab", ""},
  };
  for (const auto& g : kGood) {
    SCOPED_TRACE(g.arn);
    Result<TagsRequest> r = DecodeTags("GET", g.arn, Json::object(), {});
    ASSERT_TRUE(r.ok()) << r.status().message();
    const TaggedResource& res = std::get<ListTagsForResourceRequest>(*r).resource;
    EXPECT_EQ(res.type, g.type);
    EXPECT_EQ(res.name, g.name);
    EXPECT_EQ(res.share, g.share);
    EXPECT_EQ(res.arn, g.arn);
  }
  for (const std::string& bad : {
           prefix + "job-queue/mine:service-environment/env1",  // a marker inside another's
           prefix + "job-queue/mine:service-job/0190-ab",
           prefix + "job-queue/mine/x:scheduling-policy/p1",
           std::string("arn:aws:iam::123456789012:service-job/0190-ab"),  // not Batch
           prefix + "service-job/",
           prefix + "service-job/a/b",
           prefix + "compute-environment/ce1",
           std::string("q1"),
       }) {
    SCOPED_TRACE(bad);
    Result<TagsRequest> r = DecodeTags("GET", bad, Json::object(), {});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("resourceArn"), std::string::npos) << r.status().message();
  }
  EXPECT_FALSE(DecodeTags("POST", prefix + "job-queue/q1", Json::object(), {}).ok());
  EXPECT_FALSE(DecodeTags("DELETE", prefix + "job-queue/q1", Json::object(), {}).ok());
  EXPECT_TRUE(DecodeTags("DELETE", prefix + "job-queue/q1", Json::object(), {"k"}).ok());
  EXPECT_FALSE(DecodeTags("DELETE", prefix + "job-queue/q1", Json::object(), {"aws:k"}).ok());
  // tagKeys entries are TagKeys: 1 to 128 characters (not bytes).
  const std::string e_acute = "\xc3\xa9";
  std::string key128;
  for (int i = 0; i < 128; ++i) key128 += e_acute;
  EXPECT_TRUE(DecodeTags("DELETE", prefix + "job-queue/q1", Json::object(), {key128}).ok());
  for (const std::string& bad : {std::string(), key128 + "k", std::string(129, 'k')}) {
    Result<TagsRequest> r =
        DecodeTags("DELETE", prefix + "job-queue/q1", Json::object(), {"a", bad});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(RefusalNames(r.status(), "tagKeys"));
  }
}

// --- names and ARNs ---

struct NamedField {
  std::string_view route;
  Json body;
  std::string field;  // as the caller sends it
  std::string type;   // the ARN's resource type
  std::string other;  // another resource type, refused
  std::function<void(Json&, const Json&)> set;
  std::function<NameOrArn(const Request&)> get;
};

template <typename T, typename F>
std::function<NameOrArn(const Request&)> Field(F member) {
  return [member](const Request& r) { return member(std::get<T>(r)); };
}

std::function<void(Json&, const Json&)> Top(const std::string& field) {
  return [field](Json& body, const Json& v) { body[field] = v; };
}

std::vector<NamedField> NamedFields() {
  const std::string q = "job-queue";
  const std::string e = "service-environment";
  const std::string p = "scheduling-policy";
  const Json by_queue = {{"jobQueue", "x"}};
  const Json by_environment = {{"serviceEnvironment", "x"}};
  const Json by_arn = {{"arn", "x"}};
  const Json by_policy = {{"jobQueue", "q1"}};
  const Json by_arns = {{"arns", {"x"}}};
  return {
      {"updatejobqueue", by_queue, "jobQueue", q, e, Top("jobQueue"),
       Field<UpdateJobQueueRequest>([](const auto& r) { return r.queue; })},
      {"deletejobqueue", by_queue, "jobQueue", q, p, Top("jobQueue"),
       Field<DeleteJobQueueRequest>([](const auto& r) { return r.queue; })},
      {"listquotashares", by_queue, "jobQueue", q, e, Top("jobQueue"),
       Field<ListQuotaSharesRequest>([](const auto& r) { return r.queue; })},
      {"listservicejobs", by_queue, "jobQueue", q, e, Top("jobQueue"),
       Field<ListServiceJobsRequest>([](const auto& r) { return r.queue; })},
      {"getjobqueuesnapshot", by_queue, "jobQueue", q, e, Top("jobQueue"),
       Field<GetJobQueueSnapshotRequest>([](const auto& r) { return r.queue; })},
      {"createquotashare", CreateShareBody(), "jobQueue", q, e, Top("jobQueue"),
       Field<CreateQuotaShareRequest>([](const auto& r) { return r.queue; })},
      {"submitservicejob", SubmitBody(), "jobQueue", q, e, Top("jobQueue"),
       Field<SubmitServiceJobRequest>([](const auto& r) { return r.queue; })},
      {"updateserviceenvironment", by_environment, "serviceEnvironment", e, q,
       Top("serviceEnvironment"),
       Field<UpdateServiceEnvironmentRequest>([](const auto& r) { return r.environment; })},
      {"deleteserviceenvironment", by_environment, "serviceEnvironment", e, q,
       Top("serviceEnvironment"),
       Field<DeleteServiceEnvironmentRequest>([](const auto& r) { return r.environment; })},
      {"createjobqueue", CreateQueueBody(), "serviceEnvironment", e, q,
       [](Json& body, const Json& v) {
         body["serviceEnvironmentOrder"][0]["serviceEnvironment"] = v;
       },
       Field<CreateJobQueueRequest>([](const auto& r) { return r.environment; })},
      {"createjobqueue", CreateQueueBody(), "schedulingPolicyArn", p, q, Top("schedulingPolicyArn"),
       Field<CreateJobQueueRequest>([](const auto& r) { return *r.scheduling_policy; })},
      {"updatejobqueue", by_policy, "schedulingPolicyArn", p, e, Top("schedulingPolicyArn"),
       Field<UpdateJobQueueRequest>([](const auto& r) { return *r.scheduling_policy; })},
      {"updateschedulingpolicy", by_arn, "arn", p, q, Top("arn"),
       Field<UpdateSchedulingPolicyRequest>([](const auto& r) { return r.policy; })},
      {"deleteschedulingpolicy", by_arn, "arn", p, q, Top("arn"),
       Field<DeleteSchedulingPolicyRequest>([](const auto& r) { return r.policy; })},
      {"describeschedulingpolicies", by_arns, "arns", p, q,
       [](Json& body, const Json& v) { body["arns"] = Json::array({v}); },
       Field<DescribeSchedulingPoliciesRequest>([](const auto& r) { return r.policies.at(0); })},
      {"describejobqueues", Json::object(), "jobQueue", q, e,
       [](Json& body, const Json& v) {
         body["jobQueues"] = Json::array({"a", v});
       },
       Field<DescribeJobQueuesRequest>([](const auto& r) { return r.queues.at(1); })},
      {"describeserviceenvironments", Json::object(), "serviceEnvironment", e, q,
       [](Json& body, const Json& v) { body["serviceEnvironments"] = Json::array({v}); },
       Field<DescribeServiceEnvironmentsRequest>(
           [](const auto& r) { return r.environments.at(0); })},
  };
}

TEST(DecodeNames, ANameOrItsArnGiveTheName) {
  for (const NamedField& f : NamedFields()) {
    SCOPED_TRACE(std::string(f.route) + " " + f.field);
    for (const std::string& sent :
         {std::string("q1"), kArnPrefix + f.type + "/q1", std::string("Q-1_x")}) {
      Json body = f.body;
      f.set(body, sent);
      Result<Request> r = DecodeRequest(f.route, body);
      ASSERT_TRUE(r.ok()) << sent << ": " << r.status().message();
      const NameOrArn got = f.get(*r);
      EXPECT_EQ(got.sent, sent);
      EXPECT_EQ(got.name, sent == "Q-1_x" ? "Q-1_x" : "q1");
    }
    Json body = f.body;
    f.set(body, std::string(128, 'n'));
    EXPECT_TRUE(Accepted(f.route, body));
  }
}

TEST(DecodeNames, BadNamesAndOtherArnsAreRefusedNamingTheField) {
  for (const NamedField& f : NamedFields()) {
    SCOPED_TRACE(std::string(f.route) + " " + f.field);
    for (const Json& sent :
         {Json("q1/x"), Json(""), Json(kArnPrefix + f.other + "/q1"), Json(kArnPrefix + f.type),
          Json(kArnPrefix + f.type + "/"), Json(kArnPrefix + f.type + "/q1/x"),
          Json(kArnPrefix + f.type + "/q 1"), Json(std::string(129, 'n')), Json("q1 "),
          Json("arn:q1"), Json(kShareArn), Json(5),
          // A type marker inside another resource part names nothing.
          Json(kArnPrefix + f.other + "/mine:" + f.type + "/q1"),
          // Another service's ARN, whatever its resource part says.
          Json("arn:aws:iam::123456789012:" + f.type + "/q1"),
          Json("arn:aws:batchx:us-east-1:123456789012:" + f.type + "/q1")}) {
      Json body = f.body;
      f.set(body, sent);
      EXPECT_TRUE(Refused(f.route, body, f.field));
    }
  }
}

TEST(DecodeNames, QuotaShareArns) {
  for (std::string_view route : {"updatequotashare", "describequotashare", "deletequotashare"}) {
    SCOPED_TRACE(std::string(route));
    Result<Request> r = DecodeRequest(route, {{"quotaShareArn", kShareArn}});
    ASSERT_TRUE(r.ok()) << r.status().message();
    const ShareArn share = std::visit(
        [](const auto& req) -> ShareArn {
          if constexpr (requires { req.share; }) {
            return req.share;
          } else {
            return {};
          }
        },
        *r);
    EXPECT_EQ(share.sent, kShareArn);
    EXPECT_EQ(share.queue, "q1");
    EXPECT_EQ(share.share, "s1");

    const std::string long_name(128, 'n');
    EXPECT_TRUE(Accepted(route, {{"quotaShareArn", kArnPrefix + "job-queue/" + long_name +
                                                       "/quota-share/" + long_name}}));
    for (const Json& bad : {
             Json(kArnPrefix + "job-queue/q1"),                   // no share
             Json("arn:aws:iam::1:job-queue/q1/quota-share/s1"),  // not a Batch ARN
             Json(kArnPrefix + "quota-share/s1"),                 // no queue
             Json("job-queue/q1/quota-share/s1"),                 // not an ARN
             Json(kArnPrefix + "job-queue//quota-share/s1"),      // empty queue
             Json(kArnPrefix + "job-queue/q1/quota-share/"),      // empty share
             Json(kArnPrefix + "job-queue/q 1/quota-share/s1"),   // bad queue name
             Json(kArnPrefix + "job-queue/q1/quota-share/s.1"),   // bad share name
             Json(kArnPrefix + "job-queue/q1/quota-share/s1/x"),  // trailing part
             Json(kArnPrefix + "job-queue/q1/quota-share/" + long_name + "n"),
             Json(kArnPrefix + "quota-share/s1/job-queue/q1"),  // reversed
             Json("s1"),
             Json(""),
             Json(7),
             Json::array({kShareArn}),
         }) {
      EXPECT_TRUE(Refused(route, {{"quotaShareArn", bad}}, "quotaShareArn"));
    }
  }
}

// --- integers ---

struct Bounded {
  std::string_view route;
  Json body;
  std::string field;  // as the refusal names it
  std::int64_t lo;
  std::int64_t hi;
  std::function<void(Json&, const Json&)> set;
};

std::vector<Bounded> BoundedFields() {
  const Json share = {{"quotaShareArn", kShareArn}};
  auto limit = [](Json& body, const Json& v) { body["capacityLimits"][0]["maxCapacity"] = v; };
  auto list_body = [](std::string_view route) -> Json {
    if (route == "listquotashares" || route == "listservicejobs") return {{"jobQueue", "q1"}};
    return Json::object();
  };
  Json borrow = CreateShareBody();
  borrow["resourceSharingConfiguration"]["strategy"] = "LEND_AND_BORROW";
  Json queue_actions = CreateQueueBody();
  queue_actions["jobStateTimeLimitActions"] =
      J(R"([{"reason": "stuck", "state": "RUNNABLE", "maxTimeSeconds": 600,
             "action": "TERMINATE"}])");
  std::vector<Bounded> out = {
      {"submitservicejob", SubmitBody(), "schedulingPriority", 0, 9999, Top("schedulingPriority")},
      {"updateservicejob",
       {{"jobId", "7"}},
       "schedulingPriority",
       0,
       9999,
       Top("schedulingPriority")},
      {"createjobqueue", CreateQueueBody(), "priority", 0, 1000, Top("priority")},
      {"updatejobqueue", {{"jobQueue", "q1"}}, "priority", 0, 1000, Top("priority")},
      {"createjobqueue", CreateQueueBody(), "serviceEnvironmentOrder.order", 0, 2147483647,
       [](Json& body, const Json& v) { body["serviceEnvironmentOrder"][0]["order"] = v; }},
      {"createjobqueue", queue_actions, "jobStateTimeLimitActions.maxTimeSeconds", 600, 86400,
       [](Json& body, const Json& v) {
         body["jobStateTimeLimitActions"][0]["maxTimeSeconds"] = v;
       }},
      {"createserviceenvironment", CreateEnvironmentBody(), "capacityLimits.maxCapacity", 0,
       1'000'000, limit},
      {"createquotashare", CreateShareBody(), "capacityLimits.maxCapacity", 1, 1'000'000, limit},
      {"updatequotashare", share, "capacityLimits.maxCapacity", 1, 1'000'000,
       [](Json& body, const Json& v) {
         body["capacityLimits"] =
             Json::array({{{"capacityUnit", "ml.m5.large"}, {"maxCapacity", v}}});
       }},
      {"createquotashare", borrow, "resourceSharingConfiguration.borrowLimit", -1, 10'000,
       [](Json& body, const Json& v) { body["resourceSharingConfiguration"]["borrowLimit"] = v; }},
      {"submitservicejob", SubmitBody(), "retryStrategy.attempts", 1, 10,
       [](Json& body, const Json& v) {
         body["retryStrategy"] = {{"attempts", v}};
       }},
      {"submitservicejob", SubmitBody(), "timeoutConfig.attemptDurationSeconds", 1, 1'209'600,
       [](Json& body, const Json& v) {
         body["timeoutConfig"] = {{"attemptDurationSeconds", v}};
       }},
      {"submitservicejob", SubmitBody(),
       "preemptionConfiguration.preemptionRetriesBeforeTermination", 0, 10'000,
       [](Json& body, const Json& v) {
         body["preemptionConfiguration"] = {{"preemptionRetriesBeforeTermination", v}};
       }},
  };
  for (std::string_view route : {"describeserviceenvironments", "listschedulingpolicies",
                                 "describejobqueues", "listquotashares", "listservicejobs"}) {
    out.push_back({route, list_body(route), "maxResults", 1, 100, Top("maxResults")});
  }
  return out;
}

TEST(DecodeIntegers, BoundsAreInclusiveAndNothingElsePasses) {
  for (const Bounded& b : BoundedFields()) {
    SCOPED_TRACE(std::string(b.route) + " " + b.field);
    auto with = [&](const Json& v) {
      Json body = b.body;
      b.set(body, v);
      return body;
    };
    EXPECT_TRUE(Accepted(b.route, with(b.lo)));
    EXPECT_TRUE(Accepted(b.route, with(b.hi)));
    EXPECT_TRUE(Refused(b.route, with(b.lo - 1), b.field));
    EXPECT_TRUE(Refused(b.route, with(b.hi + 1), b.field));
    EXPECT_TRUE(Refused(b.route, with(static_cast<double>(b.lo) + 0.5), b.field));
    EXPECT_TRUE(Refused(b.route, with(static_cast<double>(b.hi)), b.field));  // 5.0 is a float
    EXPECT_TRUE(Refused(b.route, with(std::to_string(b.hi)), b.field));
    EXPECT_TRUE(Refused(b.route, with(true), b.field));
    EXPECT_TRUE(Refused(b.route, with(Json::array({b.lo})), b.field));
    EXPECT_TRUE(Refused(b.route, with(std::numeric_limits<std::int64_t>::min()), b.field));
    EXPECT_TRUE(Refused(b.route, with(std::numeric_limits<std::int64_t>::max()), b.field));
    // 2^63 and 2^64 - 1 arrive unsigned; 2^64 and beyond as floating-point numbers.
    EXPECT_TRUE(Refused(b.route, with(std::uint64_t{1} << 63), b.field));
    EXPECT_TRUE(Refused(b.route, with(std::numeric_limits<std::uint64_t>::max()), b.field));
    EXPECT_TRUE(Refused(b.route, with(J("18446744073709551616")), b.field));
    EXPECT_TRUE(Refused(b.route, with(J("123456789012345678901234567890")), b.field));
    EXPECT_TRUE(Refused(b.route, with(J("1e3")), b.field));
    EXPECT_TRUE(Refused(b.route, with(J("-0.0")), b.field));
  }
}

TEST(DecodeIntegers, TheValuesReachTheRequest) {
  Json submit = SubmitBody();
  submit["schedulingPriority"] = 9999;
  EXPECT_EQ(Decode<SubmitServiceJobRequest>("submitservicejob", submit).priority, 9999);
  EXPECT_EQ(Decode<SubmitServiceJobRequest>("submitservicejob", SubmitBody()).priority, 0);
  EXPECT_EQ(Decode<UpdateServiceJobRequest>("updateservicejob",
                                            {{"jobId", "7"}, {"schedulingPriority", 0}})
                .priority,
            0);
  Json queue = CreateQueueBody();
  queue["priority"] = 1000;
  queue["serviceEnvironmentOrder"][0]["order"] = 3;
  const auto q = Decode<CreateJobQueueRequest>("createjobqueue", queue);
  EXPECT_EQ(q.priority, 1000);
  EXPECT_EQ(q.environment_order, 3);
  // The model requires it (ServiceEnvironmentOrder.order): no default stands in for it.
  queue["serviceEnvironmentOrder"][0].erase("order");
  EXPECT_TRUE(Refused("createjobqueue", queue, "serviceEnvironmentOrder.order"));
  queue["serviceEnvironmentOrder"][0]["order"] = nullptr;
  EXPECT_TRUE(Refused("createjobqueue", queue, "serviceEnvironmentOrder.order"));
  EXPECT_EQ(q.type, "SAGEMAKER_TRAINING");
  EXPECT_EQ(q.environment.name, "env1");
  EXPECT_EQ(Decode<ListServiceJobsRequest>("listservicejobs", {{"jobQueue", "q1"}}).max_results,
            100u);
  EXPECT_EQ(
      Decode<DescribeJobQueuesRequest>("describejobqueues", {{"maxResults", 1}}).page.max_results,
      1);
  const auto page = Decode<ListSchedulingPoliciesRequest>(
      "listschedulingpolicies", {{"maxResults", 100}, {"nextToken", "p1"}});
  EXPECT_EQ(page.page.max_results, 100);
  EXPECT_EQ(page.page.next_token, "p1");
}

// --- configuration bodies ---

TEST(DecodeConfig, CreateQuotaShare) {
  Json body = CreateShareBody();
  body["capacityLimits"] = J(R"([{"capacityUnit": "ml.m5.large", "maxCapacity": 2},
                                  {"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}])");
  body["resourceSharingConfiguration"] = {{"strategy", "LEND_AND_BORROW"}};
  body["preemptionConfiguration"] = {{"inSharePreemption", "ENABLED"}};
  body["state"] = "DISABLED";
  const auto r = Decode<CreateQuotaShareRequest>("createquotashare", body);
  EXPECT_EQ(r.name, "s1");
  EXPECT_EQ(r.queue.name, "q1");
  EXPECT_EQ(r.capacity_limits,
            (std::vector<model::CapacityLimit>{{"ml.m5.large", 2}, {"ml.g5.xlarge", 1}}));
  EXPECT_EQ(r.sharing.strategy, model::SharingStrategy::kLendAndBorrow);
  EXPECT_EQ(r.sharing.borrow_limit, model::kUnlimitedBorrow);
  EXPECT_TRUE(r.in_share_preemption);
  EXPECT_EQ(r.state, model::State::kDisabled);

  body["resourceSharingConfiguration"] = {{"strategy", "RESERVE"}, {"borrowLimit", 10}};
  EXPECT_TRUE(Refused("createquotashare", body, "resourceSharingConfiguration.borrowLimit"));
  body["resourceSharingConfiguration"] = {{"strategy", "SHARE"}};
  EXPECT_TRUE(Refused("createquotashare", body, "resourceSharingConfiguration.strategy"));
  body = CreateShareBody();
  body.erase("resourceSharingConfiguration");
  EXPECT_TRUE(Refused("createquotashare", body, "resourceSharingConfiguration"));
  body = CreateShareBody();
  body.erase("preemptionConfiguration");
  EXPECT_TRUE(Refused("createquotashare", body, "preemptionConfiguration"));
  body = CreateShareBody();
  body["capacityLimits"][0]["capacityUnit"] = "NUM_INSTANCES";
  EXPECT_TRUE(Refused("createquotashare", body, "capacityLimits.capacityUnit"));
  body["capacityLimits"] = Json::array();
  EXPECT_TRUE(Refused("createquotashare", body, "capacityLimits"));
  body["capacityLimits"] = J(R"([{"capacityUnit": "ml.m5.large", "maxCapacity": 2},
                                  {"capacityUnit": "ml.m5.large", "maxCapacity": 3}])");
  EXPECT_TRUE(Refused("createquotashare", body, "capacityLimits"));
  body["capacityLimits"] = J(R"([{"capacityUnit": ".m5", "maxCapacity": 2}])");
  EXPECT_TRUE(Refused("createquotashare", body, "capacityLimits.capacityUnit"));
  body["capacityLimits"] = J(R"(["ml.m5.large"])");
  EXPECT_TRUE(Refused("createquotashare", body, "capacityLimits"));
}

TEST(DecodeConfig, CreateJobQueueTimeLimitActions) {
  Json body = CreateQueueBody();
  body["schedulingPolicyArn"] = kArnPrefix + "scheduling-policy/p1";
  body["jobStateTimeLimitActions"] = J(R"([{"reason": "stuck", "state": "RUNNABLE",
                                            "maxTimeSeconds": 900, "action": "TERMINATE"}])");
  const auto r = Decode<CreateJobQueueRequest>("createjobqueue", body);
  ASSERT_TRUE(r.scheduling_policy.has_value());
  EXPECT_EQ(r.scheduling_policy->name, "p1");
  ASSERT_EQ(r.time_limit_actions.size(), 1u);
  EXPECT_EQ(r.time_limit_actions[0].reason, "stuck");
  EXPECT_EQ(r.time_limit_actions[0].max_time_seconds, 900);

  Json bad = body;
  bad["jobStateTimeLimitActions"][0]["action"] = "CANCEL";
  EXPECT_TRUE(Refused("createjobqueue", bad, "jobStateTimeLimitActions.action"));
  bad = body;
  bad["jobStateTimeLimitActions"][0]["reason"] = "";
  EXPECT_TRUE(Refused("createjobqueue", bad, "jobStateTimeLimitActions.reason"));
  bad["jobStateTimeLimitActions"][0]["reason"] = std::string(257, 'r');
  EXPECT_TRUE(Refused("createjobqueue", bad, "jobStateTimeLimitActions.reason"));
  std::string accented;  // 256 characters of two bytes each
  for (int i = 0; i < 256; ++i) accented += "\xc3\xa9";
  bad["jobStateTimeLimitActions"][0]["reason"] = accented;
  EXPECT_TRUE(Accepted("createjobqueue", bad));
  bad = body;
  bad["jobStateTimeLimitActions"][0]["state"] = "RUNNING";
  EXPECT_TRUE(Refused("createjobqueue", bad, "jobStateTimeLimitActions.state"));
  bad = body;
  for (int i = 0; i < 5; ++i)
    bad["jobStateTimeLimitActions"].push_back(body["jobStateTimeLimitActions"][0]);
  EXPECT_TRUE(Refused("createjobqueue", bad, "jobStateTimeLimitActions"));
}

TEST(DecodeConfig, SchedulingPolicies) {
  const auto r = Decode<CreateSchedulingPolicyRequest>(
      "createschedulingpolicy",
      J(R"({"name": "p1", "quotaSharePolicy": {"idleResourceAssignmentStrategy": "FIFO"}})"));
  EXPECT_EQ(r.idle_resource_assignment, "FIFO");
  EXPECT_FALSE(Decode<CreateSchedulingPolicyRequest>("createschedulingpolicy", {{"name", "p1"}})
                   .idle_resource_assignment.has_value());
  EXPECT_TRUE(Refused("createschedulingpolicy", {{"name", "p1"}, {"quotaSharePolicy", 1}},
                      "quotaSharePolicy"));
  Json many = {{"arns", Json::array()}};
  for (int i = 0; i < 101; ++i) many["arns"].push_back("p" + std::to_string(i));
  EXPECT_TRUE(Refused("describeschedulingpolicies", many, "arns"));
  many["arns"].erase(100);
  EXPECT_EQ(
      Decode<DescribeSchedulingPoliciesRequest>("describeschedulingpolicies", many).policies.size(),
      100u);
}

TEST(DecodeConfig, IdleResourceAssignmentStrategyIsNamedAsSent) {
  for (const std::string_view route : {"createschedulingpolicy", "updateschedulingpolicy"}) {
    Json body = route == "createschedulingpolicy" ? Json{{"name", "p1"}} : Json{{"arn", "p1"}};
    body["quotaSharePolicy"] = {{"idleResourceAssignmentStrategy", "LIFO"}};
    EXPECT_TRUE(Refused(route, body, "quotaSharePolicy.idleResourceAssignmentStrategy"));
    body["quotaSharePolicy"] = Json::object();
    EXPECT_TRUE(Refused(route, body, "quotaSharePolicy.idleResourceAssignmentStrategy"));
  }
}

// --- SubmitServiceJob ---

TEST(DecodeSubmit, TheMinimalSubmission) {
  const auto r = Decode<SubmitServiceJobRequest>("submitservicejob", SubmitBody());
  EXPECT_EQ(r.name, "j1");
  EXPECT_EQ(r.queue.name, "q1");
  EXPECT_FALSE(r.quota_share.has_value());
  EXPECT_FALSE(r.client_token.has_value());
  EXPECT_TRUE(r.request_hash.empty());
  EXPECT_FALSE(r.retry.has_value());
  EXPECT_FALSE(r.preemption_retries.has_value());
  EXPECT_FALSE(r.timeout_config_seconds.has_value());
  EXPECT_TRUE(r.tags.empty());

  Json body = SubmitBody();
  body["quotaShareName"] = "s1";
  EXPECT_EQ(Decode<SubmitServiceJobRequest>("submitservicejob", body).quota_share, "s1");
  body["serviceJobType"] = "EKS";
  EXPECT_TRUE(Refused("submitservicejob", body, "serviceJobType"));
  body = SubmitBody();
  body["jobName"] = "j/1";
  EXPECT_TRUE(Refused("submitservicejob", body, "jobName"));
  body["jobName"] = std::string(129, 'j');
  EXPECT_TRUE(Refused("submitservicejob", body, "jobName"));
}

TEST(DecodeSubmit, ThePayloadIsKeptVerbatimAndParsed) {
  const auto r = Decode<SubmitServiceJobRequest>("submitservicejob", SubmitBody());
  EXPECT_EQ(r.payload, kPayload);  // spaces and key order as sent
  EXPECT_EQ(r.parsed.demand, (model::Demand{{"ml.m5.large", 2}}));
  EXPECT_EQ(r.parsed.launch.argv, (std::vector<std::string>{"/bin/sh", "-c", "exit 0"}));
  EXPECT_EQ(r.parsed.launch.instance_count, 2);
  EXPECT_EQ(r.parsed.launch.training_job_name, "j1");  // the job's name by default

  Json body = SubmitBody();
  body["serviceRequestPayload"] = J(kPayload);  // an object, not a string
  EXPECT_TRUE(Refused("submitservicejob", body, "serviceRequestPayload"));
  body["serviceRequestPayload"] = "{";
  EXPECT_TRUE(Refused("submitservicejob", body, "serviceRequestPayload"));
  body["serviceRequestPayload"] = "[]";
  EXPECT_TRUE(Refused("submitservicejob", body, "serviceRequestPayload"));
  body["serviceRequestPayload"] = R"({"ResourceConfig": {"InstanceType": "ml.m5.large"}})";
  EXPECT_TRUE(Refused("submitservicejob", body, "serviceRequestPayload.AlgorithmSpecification"));
  body.erase("serviceRequestPayload");
  EXPECT_TRUE(Refused("submitservicejob", body, "serviceRequestPayload"));
}

TEST(DecodeSubmit, TheRequestHashIgnoresOnlyTheClientToken) {
  auto hash_of = [](const Json& body) {
    return Decode<SubmitServiceJobRequest>("submitservicejob", body).request_hash;
  };
  Json a = SubmitBody();
  a["clientToken"] = "token-a";
  Json b = SubmitBody();
  b["clientToken"] = "token-b";
  EXPECT_FALSE(hash_of(a).empty());
  EXPECT_EQ(hash_of(a), hash_of(b));
  EXPECT_EQ(Decode<SubmitServiceJobRequest>("submitservicejob", a).client_token, "token-a");
  // The same fields sent in another order are the same request.
  Json reordered = Json::parse(R"({"serviceRequestPayload": )" + Json(kPayload).dump() +
                               R"(, "clientToken": "t", "serviceJobType": "SAGEMAKER_TRAINING",
                                   "jobQueue": "q1", "jobName": "j1"})");
  EXPECT_EQ(hash_of(reordered), hash_of(a));

  for (auto change : std::vector<std::function<void(Json&)>>{
           [](Json& j) { j["schedulingPriority"] = 1; },
           [](Json& j) { j["jobName"] = "j2"; },
           [](Json& j) { j["jobQueue"] = kArnPrefix + "job-queue/q1"; },
           [](Json& j) {
             j["tags"] = {{"a", "1"}};
           },
           [](Json& j) { j["quotaShareName"] = "s1"; },
           [](Json& j) {
             j["timeoutConfig"] = {{"attemptDurationSeconds", 60}};
           },
           [](Json& j) { j["serviceRequestPayload"] = kPayload + " "; },
       }) {
    Json c = a;
    change(c);
    EXPECT_NE(hash_of(c), hash_of(a)) << c.dump();
  }
}

TEST(DecodeSubmit, ClientTokenIsOneTo64Characters) {
  Json body = SubmitBody();
  for (std::size_t n : {1u, 64u}) {
    body["clientToken"] = std::string(n, 't');
    EXPECT_EQ(Decode<SubmitServiceJobRequest>("submitservicejob", body).client_token,
              std::string(n, 't'));
  }
  for (const Json& bad : {Json(""), Json(std::string(65, 't')), Json(5), Json::object()}) {
    body["clientToken"] = bad;
    EXPECT_TRUE(Refused("submitservicejob", body, "clientToken"));
  }
  // Characters, not bytes: 64 two-byte characters are 64.
  std::string accented;
  for (int i = 0; i < 64; ++i) accented += "\xc3\xa9";
  body["clientToken"] = accented;
  EXPECT_EQ(Decode<SubmitServiceJobRequest>("submitservicejob", body).client_token, accented);
  body["clientToken"] = accented + "t";
  EXPECT_TRUE(Refused("submitservicejob", body, "clientToken"));
  body["clientToken"] = nullptr;
  EXPECT_FALSE(Decode<SubmitServiceJobRequest>("submitservicejob", body).client_token.has_value());
}

// Every length refusal says the field, the range in characters and the length sent, never the
// text (which may be large or another tenant's bytes pasted in error).
TEST(DecodeLengths, RefusalsNameTheFieldTheRangeAndTheLength) {
  auto message = [](std::string_view route, const Json& body) {
    Result<Request> r = DecodeRequest(route, body);
    return r.ok() ? std::string("accepted") : r.status().message();
  };
  Json submit = SubmitBody();
  submit["clientToken"] = std::string(65, 't');
  EXPECT_EQ(message("submitservicejob", submit), "clientToken must be 1 to 64 characters, got 65");
  EXPECT_EQ(message("terminateservicejob", {{"jobId", "j"}, {"reason", std::string(1025, 'r')}}),
            "reason must be at most 1024 characters, got 1025");
  Json tags = CreateQueueBody();
  tags["tags"] = {{std::string(129, 'k'), "v"}};
  EXPECT_EQ(message("createjobqueue", tags), "tags keys must be 1 to 128 characters, got 129");
  tags["tags"] = {{"k", std::string(257, 'v')}};
  EXPECT_EQ(message("createjobqueue", tags), "tags.k must be at most 256 characters, got 257");
}

TEST(DecodeSubmit, ShareIdentifierIsRefused) {
  Json body = SubmitBody();
  body["shareIdentifier"] = "team-a";
  EXPECT_TRUE(Refused("submitservicejob", body, "shareIdentifier"));
  body["quotaShareName"] = "s1";
  EXPECT_TRUE(Refused("submitservicejob", body, "shareIdentifier"));
  body["shareIdentifier"] = 5;
  EXPECT_TRUE(Refused("submitservicejob", body, "shareIdentifier"));
}

TEST(DecodeSubmit, QuotaShareNameMustBeAName) {
  Json body = SubmitBody();
  for (const Json& bad : {Json(""), Json("a/b"), Json(std::string(129, 's')), Json(5)}) {
    body["quotaShareName"] = bad;
    EXPECT_TRUE(Refused("submitservicejob", body, "quotaShareName"));
  }
  body["quotaShareName"] = "team-a_1";
  EXPECT_EQ(Decode<SubmitServiceJobRequest>("submitservicejob", body).quota_share, "team-a_1");
}

TEST(DecodeSubmit, RetryStrategy) {
  Json body = SubmitBody();
  body["retryStrategy"] = J(R"({"attempts": 3, "evaluateOnExit": [
      {"action": "EXIT", "onStatusReason": "OOM*"}, {"action": "retry"}, {}]})");
  const auto r = Decode<SubmitServiceJobRequest>("submitservicejob", body);
  ASSERT_TRUE(r.retry.has_value());
  EXPECT_EQ(r.retry->attempts, 3);
  ASSERT_EQ(r.retry->evaluate_on_exit.size(), 3u);
  EXPECT_EQ(r.retry->evaluate_on_exit[0].action, model::RetryAction::kExit);
  EXPECT_EQ(r.retry->evaluate_on_exit[0].on_status_reason, "OOM*");
  EXPECT_EQ(r.retry->evaluate_on_exit[1].action, model::RetryAction::kRetry);
  EXPECT_EQ(r.retry->evaluate_on_exit[1].on_status_reason, "*");
  EXPECT_EQ(r.retry->evaluate_on_exit[2].action, model::RetryAction::kRetry);  // the default

  auto with_rules = [&](Json rules) {
    Json b = SubmitBody();
    b["retryStrategy"] = {{"attempts", 2}, {"evaluateOnExit", std::move(rules)}};
    return b;
  };
  Json five = Json::array();
  for (int i = 0; i < 5; ++i) five.push_back({{"action", "EXIT"}});
  EXPECT_TRUE(Accepted("submitservicejob", with_rules(five)));
  five.push_back({{"action", "EXIT"}});
  EXPECT_TRUE(Refused("submitservicejob", with_rules(five), "retryStrategy.evaluateOnExit"));
  EXPECT_TRUE(Refused("submitservicejob", with_rules(J(R"([{"action": "MAYBE"}])")),
                      "retryStrategy.evaluateOnExit.action"));
  {  // The value is quoted as sent, not as compared.
    Result<Request> bogus =
        DecodeRequest("submitservicejob", with_rules(J(R"([{"action": "Bogus"}])")));
    ASSERT_FALSE(bogus.ok());
    EXPECT_NE(bogus.status().message().find("\"Bogus\""), std::string::npos)
        << bogus.status().message();
  }
  EXPECT_TRUE(Refused("submitservicejob", with_rules(J(R"([{"action": 1}])")),
                      "retryStrategy.evaluateOnExit.action"));
  EXPECT_TRUE(Accepted("submitservicejob",
                       with_rules(Json::array({Json{{"onStatusReason", std::string(512, 'x')}}}))));
  std::string accented;  // 512 characters of two bytes each
  for (int i = 0; i < 512; ++i) accented += "\xc3\xa9";
  EXPECT_TRUE(
      Accepted("submitservicejob", with_rules(Json::array({Json{{"onStatusReason", accented}}}))));
  EXPECT_TRUE(Refused("submitservicejob",
                      with_rules(Json::array({Json{{"onStatusReason", std::string(513, 'x')}}})),
                      "retryStrategy.evaluateOnExit.onStatusReason"));
  EXPECT_TRUE(
      Refused("submitservicejob", with_rules(J(R"(["EXIT"])")), "retryStrategy.evaluateOnExit"));
  EXPECT_TRUE(Refused("submitservicejob", with_rules("EXIT"), "retryStrategy.evaluateOnExit"));
  body["retryStrategy"] = Json::object();
  EXPECT_TRUE(Refused("submitservicejob", body, "retryStrategy.attempts"));
  body["retryStrategy"] = 3;
  EXPECT_TRUE(Refused("submitservicejob", body, "retryStrategy"));
}

TEST(DecodeSubmit, TimeoutAndPreemptionConfiguration) {
  Json body = SubmitBody();
  body["timeoutConfig"] = {{"attemptDurationSeconds", 3600}};
  body["preemptionConfiguration"] = {{"preemptionRetriesBeforeTermination", 3}};
  auto r = Decode<SubmitServiceJobRequest>("submitservicejob", body);
  EXPECT_EQ(r.timeout_config_seconds, 3600);
  EXPECT_EQ(r.preemption_retries, 3);

  body["timeoutConfig"] = Json::object();
  body["preemptionConfiguration"] = Json::object();
  r = Decode<SubmitServiceJobRequest>("submitservicejob", body);
  EXPECT_FALSE(r.timeout_config_seconds.has_value());
  EXPECT_FALSE(r.preemption_retries.has_value());

  body["timeoutConfig"] = 3600;
  EXPECT_TRUE(Refused("submitservicejob", body, "timeoutConfig"));
  body["timeoutConfig"] = nullptr;
  body["preemptionConfiguration"] = "3";
  EXPECT_TRUE(Refused("submitservicejob", body, "preemptionConfiguration"));
}

TEST(DecodeJobs, UpdateDescribeTerminate) {
  const auto u = Decode<UpdateServiceJobRequest>(
      "updateservicejob", {{"jobId", kArnPrefix + "service-job/7"}, {"schedulingPriority", 9}});
  EXPECT_EQ(u.job_id, kArnPrefix + "service-job/7");
  EXPECT_EQ(u.priority, 9);
  EXPECT_EQ(Decode<DescribeServiceJobRequest>("describeservicejob", {{"jobId", "7"}}).job_id, "7");
  const auto t = Decode<TerminateServiceJobRequest>(
      "terminateservicejob", {{"jobId", "7"}, {"reason", std::string(1024, 'r')}});
  EXPECT_EQ(t.reason.size(), 1024u);
  EXPECT_TRUE(Refused("terminateservicejob", {{"jobId", "7"}, {"reason", std::string(1025, 'r')}},
                      "reason"));
  // Characters, not bytes (docs/server.md: at most 1,024 characters).
  std::string accented;
  for (int i = 0; i < 1024; ++i) accented += "\xc3\xa9";
  EXPECT_TRUE(Accepted("terminateservicejob", {{"jobId", "7"}, {"reason", accented}}));
  EXPECT_TRUE(
      Refused("terminateservicejob", {{"jobId", "7"}, {"reason", accented + "r"}}, "reason"));
}

// --- ListServiceJobs ---

ListServiceJobsRequest List(Json extra) {
  Json body = {{"jobQueue", "q1"}};
  body.update(extra);
  return Decode<ListServiceJobsRequest>("listservicejobs", body);
}

Json Filter(std::string_view name, Json values) {
  Json filter = {{"name", std::string(name)}, {"values", std::move(values)}};
  return {{"filters", Json::array({filter})}};
}

TEST(DecodeListJobs, StatusIsRunningByDefault) {
  const auto r = List(Json::object());
  EXPECT_EQ(r.filters.status, model::JobStatus::kRunning);
  EXPECT_FALSE(r.filters.name.has_value());
  EXPECT_FALSE(r.filters.share.has_value());
  EXPECT_FALSE(r.filters.before.has_value());
  EXPECT_FALSE(r.filters.after.has_value());
  EXPECT_EQ(r.max_results, 100u);
  EXPECT_FALSE(r.after_position.has_value());
  EXPECT_EQ(List({{"jobStatus", "SUCCEEDED"}}).filters.status, model::JobStatus::kSucceeded);
  EXPECT_EQ(List({{"jobStatus", "SUBMITTED"}}).filters.status, model::JobStatus::kSubmitted);
  EXPECT_TRUE(Refused("listservicejobs", {{"jobQueue", "q1"}, {"jobStatus", "DONE"}}, "jobStatus"));
  EXPECT_TRUE(
      Refused("listservicejobs", {{"jobQueue", "q1"}, {"jobStatus", "running"}}, "jobStatus"));
}

TEST(DecodeListJobs, JobNameFilter) {
  auto r = List(Filter("JOB_NAME", {"train*"}));
  EXPECT_EQ(r.filters.name, "train");
  EXPECT_TRUE(r.filters.name_prefix);
  EXPECT_FALSE(r.filters.status.has_value());  // a name filter overrides the status
  r = List(Filter("JOB_NAME", {"train"}));
  EXPECT_EQ(r.filters.name, "train");
  EXPECT_FALSE(r.filters.name_prefix);
  Json with_status = Filter("JOB_NAME", {"*"});
  with_status["jobStatus"] = "FAILED";
  r = List(with_status);
  EXPECT_EQ(r.filters.name, "");
  EXPECT_TRUE(r.filters.name_prefix);
  EXPECT_FALSE(r.filters.status.has_value());
}

TEST(DecodeListJobs, QuotaShareFilterKeepsTheStatus) {
  Json body = Filter("QUOTA_SHARE_NAME", {"s1"});
  auto r = List(body);
  EXPECT_EQ(r.filters.share, "s1");
  EXPECT_EQ(r.filters.status, model::JobStatus::kRunning);
  body["jobStatus"] = "RUNNABLE";
  r = List(body);
  EXPECT_EQ(r.filters.share, "s1");
  EXPECT_EQ(r.filters.status, model::JobStatus::kRunnable);
}

// The SageMaker SDK's list_jobs_by_share(share_identifier=...) sends SHARE_IDENTIFIER with the
// status: it is a filter of its own (before, refused as an unknown filters.name).
TEST(DecodeListJobs, ShareIdentifierFilterKeepsTheStatus) {
  Json body = Filter("SHARE_IDENTIFIER", {"blue*"});
  body["jobStatus"] = "SUCCEEDED";
  auto r = List(body);
  EXPECT_EQ(r.filters.share_identifier, "blue*");
  EXPECT_FALSE(r.filters.share.has_value());
  EXPECT_EQ(r.filters.status, model::JobStatus::kSucceeded);
}

TEST(DecodeListJobs, CreatedAtFilters) {
  auto r = List(Filter("BEFORE_CREATED_AT", {"1700000000000"}));
  EXPECT_EQ(r.filters.before, 1'700'000'000'000);
  EXPECT_FALSE(r.filters.after.has_value());
  EXPECT_FALSE(r.filters.status.has_value());
  r = List(Filter("AFTER_CREATED_AT", {"0"}));
  EXPECT_EQ(r.filters.after, 0);
  EXPECT_FALSE(r.filters.before.has_value());
  r = List(Filter("AFTER_CREATED_AT", {"9223372036854775807"}));
  EXPECT_EQ(r.filters.after, std::numeric_limits<Timestamp>::max());
  for (std::string_view key : {"BEFORE_CREATED_AT", "AFTER_CREATED_AT"}) {
    for (std::string_view bad :
         {"abc", "-5", "1.5", "", " 1", "1 ", "+1", "9223372036854775808", "1e3", "0x10"}) {
      Json body = Filter(key, Json::array({std::string(bad)}));
      body["jobQueue"] = "q1";
      EXPECT_TRUE(Refused("listservicejobs", body, "filters." + std::string(key))) << bad;
    }
  }
}

TEST(DecodeListJobs, BadFiltersAreRefused) {
  auto refused = [](Json body, std::string_view field) {
    body["jobQueue"] = "q1";
    return Refused("listservicejobs", body, field);
  };
  Json two = Filter("JOB_NAME", {"a"});
  two["filters"].push_back({{"name", "QUOTA_SHARE_NAME"}, {"values", {"s1"}}});
  EXPECT_TRUE(refused(two, "filters"));
  EXPECT_TRUE(refused(Filter("STATUS", {"RUNNING"}), "filters.name"));
  // The field the caller sent is named (filters.values), and the filter it belongs to.
  EXPECT_TRUE(refused(Filter("JOB_NAME", Json::array()), "filters.values"));
  EXPECT_TRUE(refused(Filter("JOB_NAME", {"a", "b"}), "filters.values"));
  EXPECT_TRUE(refused(Filter("QUOTA_SHARE_NAME", {nullptr}), "filters.values"));
  EXPECT_TRUE(refused(Filter("JOB_NAME", {1}), "filters.values"));
  EXPECT_TRUE(refused(Filter("QUOTA_SHARE_NAME", "s1"), "filters.values"));
  EXPECT_TRUE(refused(J(R"({"filters": [{"name": "JOB_NAME"}]})"), "filters.values"));
  EXPECT_TRUE(refused(J(R"({"filters": [{"values": ["a"]}]})"), "filters.name"));
  EXPECT_TRUE(refused(J(R"({"filters": ["JOB_NAME"]})"), "filters"));
  EXPECT_TRUE(refused(J(R"({"filters": {"name": "JOB_NAME"}})"), "filters"));
  EXPECT_TRUE(Accepted("listservicejobs", {{"jobQueue", "q1"}, {"filters", Json::array()}}));
}

TEST(DecodeListJobs, NextToken) {
  const auto r = List({{"nextToken", "123.45"}});
  ASSERT_TRUE(r.after_position.has_value());
  EXPECT_EQ(r.after_position->first, 123);
  EXPECT_EQ(r.after_position->second, 45u);
  EXPECT_EQ(List({{"nextToken", "0.18446744073709551615"}}).after_position->second,
            std::numeric_limits<model::JobId>::max());
  for (std::string_view bad : {"abc", "", "123", "123.", ".45", "1.2.3", "-1.2", "1.-2", "1.2 ",
                               "a.1", "1.18446744073709551616", "99999999999999999999.1"}) {
    EXPECT_TRUE(Refused("listservicejobs", {{"jobQueue", "q1"}, {"nextToken", std::string(bad)}},
                        "nextToken"))
        << bad;
  }
  EXPECT_TRUE(Refused("listservicejobs", {{"jobQueue", "q1"}, {"nextToken", 123.45}}, "nextToken"));
}

// --- updates: what each asks to change ---

TEST(DecodeUpdates, UpdateQuotaShareHoldsWhatWasSent) {
  Json body = J(R"({"capacityLimits": [{"maxCapacity": 4, "capacityUnit": "ml.m5.large"}],
                    "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW",
                                                     "borrowLimit": 50},
                    "preemptionConfiguration": {"inSharePreemption": "ENABLED"},
                    "state": "DISABLED"})");
  body["quotaShareArn"] = kShareArn;
  auto r = Decode<UpdateQuotaShareRequest>("updatequotashare", body);
  EXPECT_EQ(r.share.queue, "q1");
  EXPECT_EQ(r.capacity_limits, (std::vector<model::CapacityLimit>{{"ml.m5.large", 4}}));
  ASSERT_TRUE(r.sharing.has_value());
  EXPECT_EQ(r.sharing->strategy, model::SharingStrategy::kLendAndBorrow);
  EXPECT_EQ(r.sharing->borrow_limit, 50);
  EXPECT_EQ(r.in_share_preemption, true);
  EXPECT_EQ(r.state, model::State::kDisabled);

  r = Decode<UpdateQuotaShareRequest>("updatequotashare",
                                      {{"quotaShareArn", kShareArn}, {"state", "ENABLED"}});
  EXPECT_EQ(r.state, model::State::kEnabled);
  EXPECT_FALSE(r.capacity_limits.has_value());
  EXPECT_FALSE(r.sharing.has_value());
  EXPECT_FALSE(r.in_share_preemption.has_value());

  r = Decode<UpdateQuotaShareRequest>("updatequotashare", {{"quotaShareArn", kShareArn}});
  EXPECT_FALSE(r.state.has_value());
}

TEST(DecodeUpdates, UpdateJobQueueHoldsWhatWasSent) {
  auto r = Decode<UpdateJobQueueRequest>(
      "updatejobqueue", {{"jobQueue", "q1"}, {"state", "DISABLED"}, {"priority", 7}});
  EXPECT_EQ(r.priority, 7);
  EXPECT_EQ(r.state, model::State::kDisabled);
  r = Decode<UpdateJobQueueRequest>("updatejobqueue", {{"jobQueue", "q1"}, {"priority", 0}});
  EXPECT_EQ(r.priority, 0);
  EXPECT_FALSE(r.state.has_value());
  r = Decode<UpdateJobQueueRequest>("updatejobqueue", {{"jobQueue", "q1"}});
  EXPECT_FALSE(r.priority.has_value());
  EXPECT_FALSE(r.state.has_value());
  EXPECT_FALSE(r.scheduling_policy.has_value());
  EXPECT_FALSE(r.time_limit_actions.has_value());
}

TEST(DecodeUpdates, UpdateJobQueueHoldsEveryChangeItDecodes) {
  Json actions = J(R"([{"reason": "stuck", "state": "RUNNABLE", "maxTimeSeconds": 900,
                        "action": "TERMINATE"}])");
  const auto r = Decode<UpdateJobQueueRequest>(
      "updatejobqueue",
      {{"jobQueue", "q1"}, {"schedulingPolicyArn", "p2"}, {"jobStateTimeLimitActions", actions}});
  ASSERT_TRUE(r.scheduling_policy.has_value());
  ASSERT_TRUE(r.time_limit_actions.has_value());
  EXPECT_EQ(r.scheduling_policy->name, "p2");
  EXPECT_EQ(r.time_limit_actions->size(), 1u);
  EXPECT_FALSE(r.priority.has_value());
  EXPECT_FALSE(r.state.has_value());
  EXPECT_FALSE(r.environment_order.has_value());
}

TEST(DecodeUpdates, UpdateServiceEnvironmentHoldsWhatWasSent) {
  Json body = J(R"({"serviceEnvironment": "env1", "state": "ENABLED",
                    "capacityLimits": [{"capacityUnit": "NUM_INSTANCES", "maxCapacity": 0}]})");
  auto r = Decode<UpdateServiceEnvironmentRequest>("updateserviceenvironment", body);
  EXPECT_EQ(r.capacity_limits, (std::vector<model::CapacityLimit>{{"NUM_INSTANCES", 0}}));
  EXPECT_EQ(r.state, model::State::kEnabled);
  r = Decode<UpdateServiceEnvironmentRequest>("updateserviceenvironment",
                                              {{"serviceEnvironment", "env1"}});
  EXPECT_FALSE(r.state.has_value());
  EXPECT_FALSE(r.capacity_limits.has_value());
  body["capacityLimits"] = J(R"([{"capacityUnit": "NUM_INSTANCES", "maxCapacity": 1},
                                  {"capacityUnit": "ml.m5.large", "maxCapacity": 1}])");
  EXPECT_TRUE(Refused("updateserviceenvironment", body, "capacityLimits"));
}

// --- what-if ---

Json UpdateShareBody() { return {{"quotaShareArn", kShareArn}, {"state", "DISABLED"}}; }

TEST(DecodeWhatIf, EachKindDecodesAsItsCall) {
  Result<WhatIfRequest> r = DecodeWhatIf({{"submit", SubmitBody()}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(std::holds_alternative<SubmitServiceJobRequest>(*r));
  EXPECT_EQ(std::get<SubmitServiceJobRequest>(*r).parsed.demand,
            (model::Demand{{"ml.m5.large", 2}}));

  r = DecodeWhatIf({{"updatePriority", {{"jobId", "7"}, {"schedulingPriority", 3}}}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(std::holds_alternative<UpdateServiceJobRequest>(*r));
  EXPECT_EQ(std::get<UpdateServiceJobRequest>(*r).priority, 3);

  r = DecodeWhatIf({{"updateQuotaShare", UpdateShareBody()}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(std::holds_alternative<UpdateQuotaShareRequest>(*r));
  EXPECT_EQ(std::get<UpdateQuotaShareRequest>(*r).state, model::State::kDisabled);
}

TEST(DecodeWhatIf, ExactlyOneKind) {
  const std::string one_of = "a what-if body takes exactly one of";
  EXPECT_TRUE(RefusalNames(DecodeWhatIf(Json::object()).status(), one_of));
  EXPECT_TRUE(RefusalNames(DecodeWhatIf({{"other", SubmitBody()}}).status(), one_of));
  EXPECT_TRUE(RefusalNames(
      DecodeWhatIf({{"submit", SubmitBody()}, {"updateQuotaShare", UpdateShareBody()}}).status(),
      one_of));
  EXPECT_TRUE(
      RefusalNames(DecodeWhatIf({{"updatePriority", {{"jobId", "7"}, {"schedulingPriority", 3}}},
                                 {"updateQuotaShare", UpdateShareBody()}})
                       .status(),
                   one_of));
  EXPECT_TRUE(
      RefusalNames(DecodeWhatIf({{"submit", SubmitBody()}, {"dryRun", true}}).status(), one_of));
  for (const Json& body : {Json(), Json::array(), Json("submit"), Json(1)}) {
    EXPECT_TRUE(RefusalNames(DecodeWhatIf(body).status(), "a what-if body must be a JSON object"));
  }
}

TEST(DecodeWhatIf, TheInnerRequestMustBeAnObjectAndValid) {
  for (const Json& inner : {Json(), Json::array(), Json("{}"), Json(3)}) {
    EXPECT_TRUE(RefusalNames(DecodeWhatIf({{"submit", inner}}).status(), "submit"));
    EXPECT_TRUE(RefusalNames(DecodeWhatIf({{"updatePriority", inner}}).status(), "updatePriority"));
    EXPECT_TRUE(
        RefusalNames(DecodeWhatIf({{"updateQuotaShare", inner}}).status(), "updateQuotaShare"));
  }
  Json submit = SubmitBody();
  submit["schedulingPriority"] = 10000;
  EXPECT_TRUE(RefusalNames(DecodeWhatIf({{"submit", submit}}).status(), "schedulingPriority"));
  EXPECT_TRUE(RefusalNames(DecodeWhatIf({{"updatePriority", {{"jobId", "7"}}}}).status(),
                           "schedulingPriority"));
  EXPECT_TRUE(RefusalNames(DecodeWhatIf({{"updateQuotaShare", {{"quotaShareArn", "s1"}}}}).status(),
                           "quotaShareArn"));
  Json tagged = SubmitBody();
  tagged["tags"] = {{"b", "2"}, {"a", "1"}};
  Result<WhatIfRequest> r = DecodeWhatIf({{"submit", tagged}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(std::get<SubmitServiceJobRequest>(*r).tags, (TagList{{"a", "1"}, {"b", "2"}}));
}

}  // namespace
}  // namespace allot::api
