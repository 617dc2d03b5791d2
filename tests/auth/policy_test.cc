#include "auth/policy.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace allot::auth {
namespace {

using Context = std::map<std::string, std::string>;

constexpr const char* kQueueQ = "arn:aws:batch:local:000000000000:job-queue/q";
constexpr const char* kShareA = "arn:aws:batch:local:000000000000:job-queue/q/quota-share/team-a";
constexpr const char* kJob = "arn:aws:batch:local:000000000000:service-job/j-1";
constexpr const char* kAlice = "arn:aws:iam::000000000000:user/alice";

// A 2012-10-17 policy of one statement whose members are `fields`.
std::string Doc(const std::string& fields) {
  return R"({"Version":"2012-10-17","Statement":[{)" + fields + "}]}";
}

// "Allow * on *" under the Condition element `condition`.
std::string AllowAllIf(const std::string& condition) {
  return Doc(R"("Effect":"Allow","Action":"*","Resource":"*","Condition":)" + condition);
}

Policy MustParse(const std::string& text) {
  Result<Policy> policy = ParsePolicy(text);
  EXPECT_TRUE(policy.ok()) << policy.status().message() << "\n" << text;
  return policy.ok() ? *policy : Policy{};
}

// The refusal of `text`, which must be InvalidArgument.
std::string ParseError(const std::string& text) {
  Result<Policy> policy = ParsePolicy(text);
  EXPECT_FALSE(policy.ok()) << text;
  EXPECT_EQ(policy.status().code(), StatusCode::kInvalidArgument);
  return policy.status().message();
}

// The refusal of `text` starts with `prefix`.
void ExpectRefusal(const std::string& text, const std::string& prefix) {
  const std::string message = ParseError(text);
  EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
}

Decision Decide(const Policy& policy, const std::string& action, const std::string& resource,
                const Context& context = {}) {
  return Evaluate({policy}, AccessRequest{action, resource, context});
}

// docs/policies/<name>, found from this file's path so that no build setting is needed.
std::string ExamplePolicy(const std::string& name) {
  const std::string file = __FILE__;
  const std::string root = file.substr(0, file.rfind("/tests/auth/"));
  std::ifstream in(root + "/docs/policies/" + name);
  EXPECT_TRUE(in.good()) << root + "/docs/policies/" + name;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// ---- Parsing: every refusal names the statement and field ----------------------------------

TEST(ParsePolicyTest, UnknownActionMessageListsWhatIsAllowed) {
  const std::string text = R"({"Version":"2012-10-17","Statement":[
      {"Effect":"Allow","Action":"batch:SubmitServiceJob","Resource":"*"},
      {"Effect":"Allow","Action":["batch:ListServiceJobs","batch:SubmitJobs"],"Resource":"*"}]})";
  EXPECT_EQ(ParseError(text),
            "Statement[1].Action: unknown action 'batch:SubmitJobs'; allowed: batch:* actions of "
            "the AWS Batch API and allot:GetJobLogs, allot:ReadAudit, allot:ManageUsers, "
            "allot:GetJobExplanation, allot:WhatIf");
}

TEST(ParsePolicyTest, RefusalsNameStatementAndField) {
  const std::string ok_rest = R"("Action":"*","Resource":"*")";
  struct Case {
    std::string text;
    std::string want_prefix;  // the message starts with this
  };
  const Case kCases[] = {
      {Doc(R"("Action":"*","Resource":"*")"), "Statement[0].Effect: missing; must be"},
      {Doc(R"("Effect":"allow",)" + ok_rest), "Statement[0].Effect: must be \"Allow\" or"},
      {Doc(R"("Effect":true,)" + ok_rest), "Statement[0].Effect: must be"},
      {Doc(R"("Effect":"Allow","Principal":"*",)" + ok_rest),
       "Statement[0].Principal: an identity-based policy has no Principal: its principal is the "
       "user it is attached to"},
      {Doc(R"("Effect":"Allow","NotPrincipal":{"AWS":"*"},)" + ok_rest),
       "Statement[0].NotPrincipal: an identity-based policy has no NotPrincipal"},
      {Doc(R"("Effect":"Allow","Actions":"*",)" + ok_rest),
       "Statement[0]: unknown field 'Actions'; allowed: Sid, Effect, Action, NotAction, "
       "Resource, NotResource, Condition"},
      {Doc(R"("Effect":"Allow","NotAction":"batch:*",)" + ok_rest),
       "Statement[0].NotAction: a statement has Action or NotAction, not both"},
      {Doc(R"("Effect":"Allow","Resource":"*")"),
       "Statement[0].Action: missing; a statement needs Action or NotAction"},
      {Doc(R"("Effect":"Allow","Action":"*")"),
       "Statement[0].Resource: missing; a statement needs Resource or NotResource"},
      {Doc(R"("Effect":"Allow","Action":"*","Resource":"*","NotResource":"*")"),
       "Statement[0].NotResource: a statement has Resource or NotResource, not both"},
      {Doc(R"("Effect":"Allow","Action":[],"Resource":"*")"),
       "Statement[0].Action: is an empty list"},
      {Doc(R"("Effect":"Allow","Action":7,"Resource":"*")"),
       "Statement[0].Action: must be a string or a list of strings"},
      {Doc(R"("Effect":"Allow","NotAction":["*",["x"]],"Resource":"*")"),
       "Statement[0].NotAction: must be a string or a list of strings"},
      {Doc(R"("Effect":"Allow","Action":"*","NotResource":[])"),
       "Statement[0].NotResource: is an empty list"},
      {Doc(R"("Sid":"my statement","Effect":"Allow",)" + ok_rest),
       "Statement[0].Sid: 'my statement' may hold only letters A-Z, a-z and digits 0-9"},
      {Doc(R"("Sid":1,"Effect":"Allow",)" + ok_rest), "Statement[0].Sid: must be a string"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.text);
    ExpectRefusal(c.text, c.want_prefix);
  }
}

TEST(ParsePolicyTest, RefusesBadActions) {
  struct Case {
    std::string action;
    std::string want_prefix;
  };
  const Case kCases[] = {
      {"ec2:RunInstances", "Statement[0].Action: unknown service prefix in 'ec2:RunInstances'"},
      {"b*:SubmitServiceJob", "Statement[0].Action: unknown service prefix in"},
      {"*:*", "Statement[0].Action: unknown service prefix in '*:*'"},
      {"batch", "Statement[0].Action: 'batch' is not of the form service:action"},
      {"batch:", "Statement[0].Action: 'batch:' is not of the form service:action"},
      {"", "Statement[0].Action: '' is not of the form service:action"},
      {"batch:Frobnicate*", "Statement[0].Action: 'batch:Frobnicate*' matches no known action"},
      {"allot:Get?obs", "Statement[0].Action: 'allot:Get?obs' matches no known action"},
      {"allot:SubmitServiceJob", "Statement[0].Action: unknown action 'allot:SubmitServiceJob'"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.action);
    const std::string message =
        ParseError(Doc(R"("Effect":"Allow","Resource":"*","Action":")" + c.action + "\""));
    EXPECT_EQ(message.substr(0, c.want_prefix.size()), c.want_prefix) << message;
    EXPECT_NE(message.find("; allowed: batch:* actions"), std::string::npos) << message;
  }
}

TEST(ParsePolicyTest, AcceptsKnownActionsAndWildcardsThatMatchOne) {
  for (const char* action :
       {"*", "batch:*", "allot:*", "batch:Describe*", "BATCH:describe*", "batch:submitservicejob",
        "batch:DescribeJob?", "allot:GetJobLogs", "batch:*ServiceJob", "batch:CancelJob",
        "batch:RegisterJobDefinition"}) {
    SCOPED_TRACE(action);
    MustParse(Doc(R"("Effect":"Allow","Resource":"*","Action":")" + std::string(action) + "\""));
  }
}

TEST(ParsePolicyTest, RefusesMalformedResources) {
  struct Case {
    std::string resource;
    std::string want;
  };
  const Case kCases[] = {
      {"arn:aws:batch:local", "'arn:aws:batch:local' is not \"*\" or an ARN"},
      {"aws:batch:local:0:job-queue/q", "'aws:batch:local:0:job-queue/q' is not \"*\" or an ARN"},
      {"job-queue/q", "'job-queue/q' is not \"*\" or an ARN"},
      {"**", "'**' is not \"*\" or an ARN"},
      {"arn:aws::local:0:job-queue/q",
       "'arn:aws::local:0:job-queue/q' is an ARN without a service"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.resource);
    ExpectRefusal(Doc(R"("Effect":"Allow","Action":"*","NotResource":")" + c.resource + "\""),
                  "Statement[0].NotResource: " + c.want);
  }
  MustParse(Doc(R"("Effect":"Allow","Action":"*","Resource":"arn:aws:s3:::bucket/*")"));
  MustParse(Doc(R"("Effect":"Allow","Action":"*","Resource":"arn:*:*:*:*:*")"));
}

TEST(ParsePolicyTest, RefusesBadConditions) {
  struct Case {
    std::string condition;
    std::string want_prefix;
  };
  const Case kCases[] = {
      {R"("x")", "Statement[0].Condition: must be an object of condition operators"},
      {R"({"StringEqualz":{"aws:username":"a"}})",
       "Statement[0].Condition: unknown condition operator 'StringEqualz'; allowed: StringEquals, "
       "StringNotEquals,"},
      {R"({"NullIfExists":{"aws:username":"true"}})",
       "Statement[0].Condition: unknown condition operator 'NullIfExists'"},
      {R"({"DateLessThan":{"aws:CurrentTime":"2030-01-01T00:00:00Z"}})",
       "Statement[0].Condition: unknown condition operator 'DateLessThan'"},
      {R"({"ForAnyValue:StringEquals":{"aws:username":"a"}})",
       "Statement[0].Condition: unknown condition operator 'ForAnyValue:StringEquals' (set "
       "operators do not apply"},
      {R"({"StringEquals":{}})",
       "Statement[0].Condition.StringEquals: must be an object of condition keys"},
      {R"({"StringEquals":"aws:username"})",
       "Statement[0].Condition.StringEquals: must be an object of condition keys"},
      {R"({"StringEquals":{"batch:Priority":"1"}})",
       "Statement[0].Condition.StringEquals: unknown condition key 'batch:Priority'; allowed: "
       "aws:* keys, batch:SchedulingPriority, batch:ShareIdentifier, allot:QuotaShare"},
      {R"({"StringEquals":{"allot:Share":"a"}})",
       "Statement[0].Condition.StringEquals: unknown condition key 'allot:Share'"},
      {R"({"StringLike":{"s3:prefix":"a/*"}})",
       "Statement[0].Condition.StringLike: unknown condition key 's3:prefix'"},
      {R"({"StringEquals":{"username":"a"}})",
       "Statement[0].Condition.StringEquals: unknown condition key 'username'"},
      {R"({"StringEquals":{"aws:username":[]}})",
       "Statement[0].Condition.StringEquals.aws:username: is an empty list"},
      {R"({"StringEquals":{"aws:username":null}})",
       "Statement[0].Condition.StringEquals.aws:username: must be a string, number or boolean"},
      {R"({"StringEquals":{"aws:username":{"b":1}}})",
       "Statement[0].Condition.StringEquals.aws:username: must be a string, number or boolean"},
      {R"({"NumericLessThan":{"batch:SchedulingPriority":"fifty"}})",
       "Statement[0].Condition.NumericLessThan.batch:SchedulingPriority: 'fifty' is not a number"},
      {R"({"NumericEquals":{"batch:SchedulingPriority":["1",true]}})",
       "Statement[0].Condition.NumericEquals.batch:SchedulingPriority: 'true' is not a number"},
      {R"({"NumericEquals":{"batch:SchedulingPriority":"inf"}})",
       "Statement[0].Condition.NumericEquals.batch:SchedulingPriority: 'inf' is not a number"},
      {R"({"Bool":{"aws:SecureTransport":"yes"}})",
       "Statement[0].Condition.Bool.aws:SecureTransport: 'yes' is not true or false"},
      {R"({"Null":{"aws:username":1}})",
       "Statement[0].Condition.Null.aws:username: '1' is not true or false"},
      {R"({"ArnLike":{"aws:PrincipalArn":"user/alice"}})",
       "Statement[0].Condition.ArnLike.aws:PrincipalArn: 'user/alice' is not \"*\" or an ARN"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.condition);
    ExpectRefusal(AllowAllIf(c.condition), c.want_prefix);
  }
}

TEST(ParsePolicyTest, RefusesDocumentProblems) {
  struct Case {
    std::string text;
    std::string want_prefix;
  };
  const std::string statement = R"({"Effect":"Allow","Action":"*","Resource":"*"})";
  const Case kCases[] = {
      {"{", "policy document: not valid JSON: parse error at line 1, column 2"},
      {"", "policy document: not valid JSON:"},
      {R"({"Statement":[)" + statement + "]} x", "policy document: not valid JSON:"},
      {"[]", "policy document: must be a JSON object"},
      {R"({"Versoin":"2012-10-17","Statement":)" + statement + "}",
       "policy document: unknown field 'Versoin'; allowed: Version, Id, Statement"},
      {R"({"Version":"2012-10-18","Statement":)" + statement + "}",
       "Version: must be \"2012-10-17\" or \"2008-10-17\""},
      {R"({"Version":2012,"Statement":)" + statement + "}", "Version: must be"},
      {R"({"Id":7,"Statement":)" + statement + "}", "Id: must be a string"},
      {R"({"Version":"2012-10-17"})", "Statement: missing"},
      {R"({"Statement":[]})", "Statement: is an empty list"},
      {R"({"Statement":"x"})", "Statement: must be an object or a list of objects"},
      {R"({"Statement":[)" + statement + ",[]]}", "Statement[1]: must be an object"},
      {R"({"Statement":{"Effect":"Allow","Effect":"Deny","Action":"*","Resource":"*"}})",
       "policy document: the field 'Effect' appears twice in one object"},
      {R"({"Statement":[)" + statement + "," + statement + "," +
           R"({"Effect":"Allow","Action":"batch:Nope","Resource":"*"}]})",
       "Statement[2].Action: unknown action 'batch:Nope'"},
      {R"({"Statement":[{"Sid":"A","Effect":"Allow","Action":"*","Resource":"*"},)"
       R"({"Sid":"A","Effect":"Deny","Action":"*","Resource":"*"}]})",
       "Statement[1].Sid: 'A' is also the Sid of Statement[0]; Sids are unique within a policy"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.text);
    ExpectRefusal(c.text, c.want_prefix);
  }
}

TEST(ParsePolicyTest, CapsSizeAndNesting) {
  std::string padded = Doc(R"("Effect":"Allow","Action":"*","Resource":"*")");
  padded.insert(1, kMaxPolicyBytes - padded.size(), ' ');
  MustParse(padded);  // exactly at the limit
  EXPECT_EQ(ParseError(" " + padded), "policy document: 10241 bytes; the limit is 10240");
  // Six levels is what a condition value list needs; a seventh is refused before any checks.
  MustParse(AllowAllIf(R"({"StringEquals":{"aws:username":["a"]}})"));
  EXPECT_EQ(ParseError(AllowAllIf(R"({"StringEquals":{"aws:username":[["a"]]}})")),
            "policy document: nests deeper than 6 levels, more than any policy needs");
  EXPECT_EQ(ParseError(std::string(5000, '[') + std::string(5000, ']')),
            "policy document: nests deeper than 6 levels, more than any policy needs");
}

TEST(ParsePolicyTest, BuildsTypedRecords) {
  const Policy policy = MustParse(R"({"Id":"p1","Statement":{"Sid":"S1","Effect":"Deny",
      "NotAction":["batch:Describe*","allot:GetJobLogs"],"NotResource":"arn:aws:batch:*:*:*",
      "Condition":{"NumericGreaterThanIfExists":{"batch:SchedulingPriority":50},
                   "Bool":{"aws:SecureTransport":[true,"FALSE"]}}}})");
  EXPECT_EQ(policy.version, "2008-10-17");  // AWS's reading of a document without Version
  EXPECT_EQ(policy.id, "p1");
  ASSERT_EQ(policy.statements.size(), 1u);
  const Statement& s = policy.statements[0];
  EXPECT_EQ(s.sid, "S1");
  EXPECT_EQ(s.effect, Effect::kDeny);
  EXPECT_EQ(s.actions, (std::vector<std::string>{"batch:Describe*", "allot:GetJobLogs"}));
  EXPECT_TRUE(s.not_action);
  EXPECT_EQ(s.resources, std::vector<std::string>{"arn:aws:batch:*:*:*"});
  EXPECT_TRUE(s.not_resource);
  ASSERT_EQ(s.conditions.size(), 2u);  // operators in name order
  EXPECT_EQ(s.conditions[0], (Condition{.op = ConditionOperator::kBool,
                                        .if_exists = false,
                                        .key = "aws:SecureTransport",
                                        .values = {"true", "false"}}));
  EXPECT_EQ(s.conditions[1], (Condition{.op = ConditionOperator::kNumericGreaterThan,
                                        .if_exists = true,
                                        .key = "batch:SchedulingPriority",
                                        .values = {"50"}}));
}

TEST(PolicyToJsonTest, CanonicalText) {
  const Policy policy = MustParse(R"({"Statement":{"Effect":"Deny",
      "Action":"batch:TerminateServiceJob","Resource":["*"],
      "Condition":{"NumericGreaterThan":{"batch:SchedulingPriority":50},
                   "StringLike":{"aws:username":["a*","b*"]}}}})");
  EXPECT_EQ(PolicyToJson(policy),
            R"({"Version":"2008-10-17","Statement":[{"Effect":"Deny",)"
            R"("Action":"batch:TerminateServiceJob","Resource":"*","Condition":{)"
            R"("NumericGreaterThan":{"batch:SchedulingPriority":"50"},)"
            R"("StringLike":{"aws:username":["a*","b*"]}}}]})");
  Policy built;
  built.id = "x";
  built.statements.push_back({.sid = "All", .actions = {"*"}, .resources = {"*"}});
  EXPECT_EQ(PolicyToJson(built),
            R"({"Version":"2012-10-17","Id":"x","Statement":[{"Sid":"All","Effect":"Allow",)"
            R"("Action":"*","Resource":"*"}]})");
  EXPECT_EQ(MustParse(PolicyToJson(built)), built);
}

// ---- Evaluation ------------------------------------------------------------------------------

TEST(EvaluateTest, ImplicitDenyWithoutAMatchingAllow) {
  const Policy policy =
      MustParse(Doc(R"("Effect":"Allow","Action":"batch:ListServiceJobs","Resource":"*")"));
  EXPECT_EQ(Decide(policy, "batch:ListServiceJobs", kQueueQ), Decision::kAllow);
  EXPECT_EQ(Decide(policy, "batch:SubmitServiceJob", kQueueQ), Decision::kImplicitDeny);
  EXPECT_EQ(Evaluate({}, {"batch:ListServiceJobs", kQueueQ, {}}), Decision::kImplicitDeny);
}

TEST(EvaluateTest, ExplicitDenyBeatsAllowWithinAndAcrossPolicies) {
  const Policy both = MustParse(R"({"Statement":[
      {"Effect":"Allow","Action":"*","Resource":"*"},
      {"Effect":"Deny","Action":"batch:Delete*","Resource":"*"}]})");
  EXPECT_EQ(Decide(both, "batch:DeleteJobQueue", kQueueQ), Decision::kExplicitDeny);
  EXPECT_EQ(Decide(both, "batch:UpdateJobQueue", kQueueQ), Decision::kAllow);
  const Policy allow = MustParse(Doc(R"("Effect":"Allow","Action":"*","Resource":"*")"));
  const Policy deny =
      MustParse(Doc(R"("Effect":"Deny","Action":"*","Resource":")" + std::string(kQueueQ) + "\""));
  EXPECT_EQ(Evaluate({allow, deny}, {"batch:UpdateJobQueue", kQueueQ, {}}),
            Decision::kExplicitDeny);
  EXPECT_EQ(Evaluate({deny, allow}, {"batch:UpdateJobQueue", kQueueQ, {}}),
            Decision::kExplicitDeny);
  EXPECT_EQ(Evaluate({deny}, {"batch:UpdateJobQueue", kShareA, {}}), Decision::kImplicitDeny);
}

TEST(EvaluateTest, ActionsMatchIgnoringCaseWithWildcards) {
  const Policy policy = MustParse(Doc(
      R"("Effect":"Allow","Action":["BATCH:describe*","batch:ListJob?","batch:submitservicejob"],)"
      R"("Resource":"*")"));
  EXPECT_EQ(Decide(policy, "batch:DescribeServiceJob", kJob), Decision::kAllow);
  EXPECT_EQ(Decide(policy, "batch:DESCRIBEJOBQUEUES", "*"), Decision::kAllow);
  EXPECT_EQ(Decide(policy, "batch:SubmitServiceJob", kQueueQ), Decision::kAllow);
  EXPECT_EQ(Decide(policy, "batch:ListJobs", "*"), Decision::kAllow);
  EXPECT_EQ(Decide(policy, "batch:ListServiceJobs", kQueueQ), Decision::kImplicitDeny);
  EXPECT_EQ(Decide(policy, "allot:DescribeServiceJob", kJob), Decision::kImplicitDeny);
}

TEST(EvaluateTest, ResourcesMatchPartByPart) {
  struct Case {
    const char* pattern;
    const char* resource;
    bool matches;
  };
  const Case kCases[] = {
      {"*", kQueueQ, true},
      {"*", "*", true},
      {"arn:aws:batch:*:*:job-queue/*", kShareA, true},  // `*` crosses `/` in the resource part
      {"arn:aws:batch:*:*:job-queue/q", kQueueQ, true},
      {"arn:aws:batch:*:*:job-queue/q", kShareA, false},
      {"arn:aws:batch:*:*:job-queue/q?", kQueueQ, false},
      {"arn:aws:batch:*:*:job-queue/q?", "arn:aws:batch:local:000000000000:job-queue/q1", true},
      {"arn:aws:batch:*:*:job-queue/Q", kQueueQ, false},  // case-sensitive
      {"arn:aws:batch:*:*:job-queue/q*", "arn:aws:batch:r:1:job-queue/q:x/y", true},
      // A wildcard in the first five parts stays inside its part: here the region `*` cannot
      // swallow "local:extra", so the account part "extra" does not match.
      {"arn:aws:batch:*:000000000000:job-queue/q",
       "arn:aws:batch:local:extra:000000000000:job-queue/q", false},
      {"arn:aws:batch:l*l:*:job-queue/q", kQueueQ, true},
      {"arn:aws:*:*:*:*", kJob, true},
      {"arn:aws:*:*:*:*", "*", false},  // a request resource that is no ARN matches only "*"
      {"arn:aws:batch:*:*:*", "arn:aws:batch:local", false},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(std::string(c.pattern) + " vs " + c.resource);
    const Policy policy = MustParse(
        Doc(R"("Effect":"Allow","Action":"*","Resource":")" + std::string(c.pattern) + "\""));
    EXPECT_EQ(Decide(policy, "batch:UpdateJobQueue", c.resource) == Decision::kAllow, c.matches);
  }
}

TEST(EvaluateTest, NotActionAndNotResource) {
  const Policy policy = MustParse(R"({"Statement":[
      {"Effect":"Allow","NotAction":["batch:Delete*","allot:*"],"Resource":"*"},
      {"Effect":"Deny","Action":"batch:*","NotResource":"arn:aws:batch:*:*:job-queue/q*"}]})");
  EXPECT_EQ(Decide(policy, "batch:UpdateJobQueue", kQueueQ), Decision::kAllow);
  EXPECT_EQ(Decide(policy, "batch:DeleteJobQueue", kQueueQ), Decision::kImplicitDeny);
  EXPECT_EQ(Decide(policy, "allot:ReadAudit", kQueueQ), Decision::kImplicitDeny);
  EXPECT_EQ(Decide(policy, "batch:UpdateJobQueue", "arn:aws:batch:local:0:job-queue/other"),
            Decision::kExplicitDeny);
  EXPECT_EQ(Decide(policy, "batch:DescribeJobQueues", "*"), Decision::kExplicitDeny);
}

struct ConditionCase {
  const char* condition;  // the Condition element
  Context context;
  bool holds;
};

void ExpectConditions(const std::vector<ConditionCase>& cases) {
  for (const ConditionCase& c : cases) {
    std::string context;
    for (const auto& [k, v] : c.context) context += k + "=" + v + " ";
    SCOPED_TRACE(std::string(c.condition) + " with " + context);
    const Policy policy = MustParse(AllowAllIf(c.condition));
    EXPECT_EQ(Decide(policy, "batch:SubmitServiceJob", kQueueQ, c.context) == Decision::kAllow,
              c.holds);
  }
}

TEST(ConditionTest, StringOperators) {
  const Context alice = {{"aws:username", "alice"}};
  const Context none;
  ExpectConditions({
      {R"({"StringEquals":{"aws:username":"alice"}})", alice, true},
      {R"({"StringEquals":{"aws:username":"Alice"}})", alice, false},
      {R"({"StringEquals":{"aws:username":["bob","alice"]}})", alice, true},  // values: OR
      {R"({"StringEquals":{"aws:username":"alice"}})", none, false},
      {R"({"StringEquals":{"aws:username":"a*"}})", alice, false},  // no wildcards in Equals
      {R"({"StringNotEquals":{"aws:username":["bob","carol"]}})", alice, true},
      {R"({"StringNotEquals":{"aws:username":["bob","alice"]}})", alice, false},  // NOR
      {R"({"StringNotEquals":{"aws:username":"bob"}})", none, true},  // AWS: missing -> true
      {R"({"StringEqualsIgnoreCase":{"aws:username":"ALICE"}})", alice, true},
      {R"({"StringEqualsIgnoreCase":{"aws:username":"ALICE"}})", none, false},
      {R"({"StringNotEqualsIgnoreCase":{"aws:username":"ALICE"}})", alice, false},
      {R"({"StringNotEqualsIgnoreCase":{"aws:username":"BOB"}})", alice, true},
      {R"({"StringLike":{"aws:username":"al*"}})", alice, true},
      {R"({"StringLike":{"aws:username":"al?ce"}})", alice, true},
      {R"({"StringLike":{"aws:username":"al?"}})", alice, false},
      {R"({"StringLike":{"aws:username":"AL*"}})", alice, false},  // case-sensitive
      {R"({"StringLike":{"aws:username":"b*"}})", none, false},
      {R"({"StringNotLike":{"aws:username":["b*","c*"]}})", alice, true},
      {R"({"StringNotLike":{"aws:username":["b*","a*"]}})", alice, false},
      {R"({"StringNotLike":{"aws:username":"a*"}})", none, true},
  });
}

TEST(ConditionTest, NumericOperators) {
  const Context p40 = {{"batch:schedulingpriority", "40"}};
  const Context none;
  ExpectConditions({
      {R"({"NumericEquals":{"batch:SchedulingPriority":40}})", p40, true},
      {R"({"NumericEquals":{"batch:SchedulingPriority":"40.0"}})", p40, true},
      {R"({"NumericEquals":{"batch:SchedulingPriority":[1,2]}})", p40, false},
      {R"({"NumericEquals":{"batch:SchedulingPriority":40}})", none, false},
      {R"({"NumericEquals":{"batch:SchedulingPriority":40}})",
       {{"batch:schedulingpriority", "forty"}},
       false},
      {R"({"NumericNotEquals":{"batch:SchedulingPriority":[41,42]}})", p40, true},
      {R"({"NumericNotEquals":{"batch:SchedulingPriority":[40,42]}})", p40, false},
      {R"({"NumericNotEquals":{"batch:SchedulingPriority":40}})", none, true},
      {R"({"NumericLessThan":{"batch:SchedulingPriority":41}})", p40, true},
      {R"({"NumericLessThan":{"batch:SchedulingPriority":40}})", p40, false},
      {R"({"NumericLessThanEquals":{"batch:SchedulingPriority":40}})", p40, true},
      {R"({"NumericLessThanEquals":{"batch:SchedulingPriority":39.5}})", p40, false},
      {R"({"NumericGreaterThan":{"batch:SchedulingPriority":39}})", p40, true},
      {R"({"NumericGreaterThan":{"batch:SchedulingPriority":40}})", p40, false},
      {R"({"NumericGreaterThanEquals":{"batch:SchedulingPriority":"40"}})", p40, true},
      {R"({"NumericGreaterThanEquals":{"batch:SchedulingPriority":-1e3}})", p40, true},
      {R"({"NumericGreaterThanEquals":{"batch:SchedulingPriority":41}})", p40, false},
      {R"({"NumericLessThan":{"batch:SchedulingPriority":100}})", none, false},
  });
}

TEST(ConditionTest, ArnBoolAndNullOperators) {
  const Context alice = {{"aws:principalarn", kAlice}, {"aws:securetransport", "true"}};
  const Context none;
  ExpectConditions({
      {R"({"ArnLike":{"aws:PrincipalArn":"arn:aws:iam::*:user/a*"}})", alice, true},
      {R"({"ArnEquals":{"aws:PrincipalArn":"arn:aws:iam::*:user/a*"}})", alice, true},
      {R"({"ArnLike":{"aws:PrincipalArn":"arn:aws:iam::*:role/*"}})", alice, false},
      {R"({"ArnLike":{"aws:PrincipalArn":"*"}})", alice, true},
      {R"({"ArnLike":{"aws:PrincipalArn":"arn:aws:iam::*:user/*"}})", none, false},
      {R"({"ArnNotLike":{"aws:PrincipalArn":"arn:aws:iam::*:role/*"}})", alice, true},
      {R"({"ArnNotEquals":{"aws:PrincipalArn":"arn:aws:iam::*:user/*"}})", alice, false},
      {R"({"ArnNotLike":{"aws:PrincipalArn":"arn:aws:iam::*:user/*"}})", none, true},
      {R"({"Bool":{"aws:SecureTransport":true}})", alice, true},
      {R"({"Bool":{"aws:SecureTransport":"TRUE"}})", alice, true},
      {R"({"Bool":{"aws:SecureTransport":"false"}})", alice, false},
      {R"({"Bool":{"aws:SecureTransport":"true"}})", none, false},
      {R"({"Null":{"aws:SecureTransport":"true"}})", none, true},
      {R"({"Null":{"aws:SecureTransport":"true"}})", alice, false},
      {R"({"Null":{"aws:SecureTransport":false}})", alice, true},
      {R"({"Null":{"aws:SecureTransport":"false"}})", none, false},
  });
}

TEST(ConditionTest, IfExistsHoldsWhenTheKeyIsMissing) {
  const Context p60 = {{"batch:schedulingpriority", "60"}};
  const Context none;
  ExpectConditions({
      {R"({"NumericLessThanEqualsIfExists":{"batch:SchedulingPriority":50}})", none, true},
      {R"({"NumericLessThanEqualsIfExists":{"batch:SchedulingPriority":50}})", p60, false},
      {R"({"NumericLessThanEqualsIfExists":{"batch:SchedulingPriority":60}})", p60, true},
      {R"({"StringEqualsIfExists":{"allot:QuotaShare":"team-a"}})", none, true},
      {R"({"StringEqualsIfExists":{"allot:QuotaShare":"team-a"}})",
       {{"allot:quotashare", "team-b"}},
       false},
      {R"({"StringNotLikeIfExists":{"allot:QuotaShare":"team-*"}})",
       {{"allot:quotashare", "team-b"}},
       false},
      {R"({"ArnLikeIfExists":{"aws:PrincipalArn":"arn:aws:iam::*:user/*"}})", none, true},
      {R"({"BoolIfExists":{"aws:SecureTransport":"true"}})", none, true},
      {R"({"BoolIfExists":{"aws:SecureTransport":"true"}})",
       {{"aws:securetransport", "false"}},
       false},
  });
}

TEST(ConditionTest, OperatorsAndKeysAreAndedKeysIgnoreCase) {
  const char* condition = R"({"StringEquals":{"AWS:UserName":"alice","ALLOT:quotashare":"team-a"},
                              "NumericLessThan":{"Batch:SchedulingPriority":10}})";
  const Context all = {
      {"aws:username", "alice"}, {"allot:quotashare", "team-a"}, {"batch:schedulingpriority", "5"}};
  Context wrong_share = all;
  wrong_share["allot:quotashare"] = "team-b";
  Context high = all;
  high["batch:schedulingpriority"] = "10";
  ExpectConditions(
      {{condition, all, true}, {condition, wrong_share, false}, {condition, high, false}});
}

TEST(VariablesTest, AwsUsernameInResourceAndConditionValues) {
  const Policy policy = MustParse(R"({"Version":"2012-10-17","Statement":[
      {"Effect":"Allow","Action":"batch:UpdateJobQueue",
       "Resource":"arn:aws:batch:*:*:job-queue/${aws:username}-*"},
      {"Effect":"Allow","Action":"batch:SubmitServiceJob","Resource":"*",
       "Condition":{"StringEquals":{"allot:QuotaShare":"team-${AWS:UserName}"}}}]})");
  const Context alice = {{"aws:username", "alice"}, {"allot:quotashare", "team-alice"}};
  const std::string prefix = "arn:aws:batch:local:000000000000:job-queue/";
  EXPECT_EQ(Decide(policy, "batch:UpdateJobQueue", prefix + "alice-gpu", alice), Decision::kAllow);
  EXPECT_EQ(Decide(policy, "batch:UpdateJobQueue", prefix + "bob-gpu", alice),
            Decision::kImplicitDeny);
  EXPECT_EQ(Decide(policy, "batch:UpdateJobQueue", prefix + "alice-gpu", {}),
            Decision::kImplicitDeny);  // no user name: the variable matches nothing
  EXPECT_EQ(Decide(policy, "batch:SubmitServiceJob", kQueueQ, alice), Decision::kAllow);
  Context other_share = alice;
  other_share["allot:quotashare"] = "team-bob";
  EXPECT_EQ(Decide(policy, "batch:SubmitServiceJob", kQueueQ, other_share),
            Decision::kImplicitDeny);
}

TEST(VariablesTest, ValuesAreLiteralAndEscapesWork) {
  const Policy policy = MustParse(Doc(
      R"("Effect":"Allow","Action":"*","Resource":["arn:aws:batch:*:*:job-queue/${aws:username}",)"
      R"("arn:aws:batch:${aws:username}:*:service-job/${*}"])"));
  const std::string queue = "arn:aws:batch:local:000000000000:job-queue/";
  // A user named "*" is not a wildcard.
  EXPECT_EQ(Decide(policy, "batch:UpdateJobQueue", queue + "q", {{"aws:username", "*"}}),
            Decision::kImplicitDeny);
  EXPECT_EQ(Decide(policy, "batch:UpdateJobQueue", queue + "*", {{"aws:username", "*"}}),
            Decision::kAllow);
  // A variable in the region part; ${*} is a literal star.
  const Context local = {{"aws:username", "local"}};
  EXPECT_EQ(
      Decide(policy, "batch:DescribeServiceJob", "arn:aws:batch:local:0:service-job/*", local),
      Decision::kAllow);
  EXPECT_EQ(Decide(policy, "batch:DescribeServiceJob", kJob, local), Decision::kImplicitDeny);
}

TEST(VariablesTest, UnknownVariablesAreRefusedOnlyWhereVariablesExist) {
  EXPECT_EQ(ParseError(Doc(R"("Effect":"Allow","Action":"*",)"
                           R"("Resource":"arn:aws:batch:*:*:job-queue/${aws:usrname}")")),
            "Statement[0].Resource: unknown policy variable '${aws:usrname}' in "
            "'arn:aws:batch:*:*:job-queue/${aws:usrname}'; known: ${aws:username}, "
            "${aws:userid}, ${aws:PrincipalArn}, ${aws:SourceIp}, ${batch:SchedulingPriority}, "
            "${batch:ShareIdentifier}, ${allot:QuotaShare}, and ${*}, ${?}, ${$} for a literal "
            "*, ? or $");
  EXPECT_EQ(ParseError(Doc(R"("Effect":"Allow","Action":"*",)"
                           R"("Resource":"arn:aws:batch:*:*:job-queue/${aws:username")")),
            "Statement[0].Resource: 'arn:aws:batch:*:*:job-queue/${aws:username' opens a policy "
            "variable with ${ but does not close it with }");
  ExpectRefusal(AllowAllIf(R"({"StringLike":{"allot:QuotaShare":"${aws:username, 'x'}-*"}})"),
                "Statement[0].Condition.StringLike.allot:QuotaShare: unknown policy variable "
                "'${aws:username, 'x'}'");
  // In a 2008-10-17 policy (or one without Version), ${...} is plain text, as in AWS.
  const Policy old = MustParse(R"({"Statement":{"Effect":"Allow","Action":"*",)"
                               R"("Resource":"arn:aws:batch:*:*:job-queue/${aws:username}"}})");
  const std::string queue = "arn:aws:batch:local:000000000000:job-queue/";
  EXPECT_EQ(Decide(old, "batch:UpdateJobQueue", queue + "alice", {{"aws:username", "alice"}}),
            Decision::kImplicitDeny);
  EXPECT_EQ(Decide(old, "batch:UpdateJobQueue", queue + "${aws:username}"), Decision::kAllow);
}

// ---- Messages and the action list ------------------------------------------------------------

TEST(DeniedMessageTest, AwsWording) {
  EXPECT_EQ(DeniedMessage(kAlice, "batch:SubmitServiceJob", kQueueQ, Decision::kImplicitDeny),
            "User: arn:aws:iam::000000000000:user/alice is not authorized to perform: "
            "batch:SubmitServiceJob on resource: arn:aws:batch:local:000000000000:job-queue/q "
            "because no identity-based policy allows the batch:SubmitServiceJob action");
  EXPECT_EQ(DeniedMessage(kAlice, "batch:DeleteJobQueue", kQueueQ, Decision::kExplicitDeny),
            "User: arn:aws:iam::000000000000:user/alice is not authorized to perform: "
            "batch:DeleteJobQueue on resource: arn:aws:batch:local:000000000000:job-queue/q with "
            "an explicit deny in an identity-based policy");
}

TEST(KnownActionsTest, EveryBatchOperationAndAllotsOwn) {
  const std::vector<std::string> actions = KnownActions();
  EXPECT_EQ(actions.size(), 50u);  // 45 AWS Batch operations + 5 of Allot's
  EXPECT_EQ(actions.front(), "batch:CancelJob");
  EXPECT_EQ(actions.back(), "allot:WhatIf");
  for (const std::string& action : actions) EXPECT_TRUE(IsKnownAction(action)) << action;
  EXPECT_TRUE(IsKnownAction("batch:submitservicejob"));
  EXPECT_TRUE(IsKnownAction("batch:GetJobQueueSnapshot"));
  EXPECT_TRUE(IsKnownAction("allot:GetJobExplanation"));
  EXPECT_FALSE(IsKnownAction("batch:*"));
  EXPECT_FALSE(IsKnownAction("batch:SubmitJobs"));
  EXPECT_FALSE(IsKnownAction("allot:SubmitServiceJob"));
}

// ---- The example policies of docs/policies/ --------------------------------------------------

TEST(ExamplePoliciesTest, ParseAndRoundTrip) {
  for (const char* name : {"team-member.json", "team-lead.json", "viewer.json", "admin.json"}) {
    SCOPED_TRACE(name);
    const Policy policy = MustParse(ExamplePolicy(name));
    EXPECT_EQ(policy.version, "2012-10-17");
    EXPECT_EQ(MustParse(PolicyToJson(policy)), policy);
  }
}

// The context the server builds for a job request in share `share` at `priority`.
Context JobContext(const std::string& share, const std::string& priority = "") {
  Context context = {{"aws:username", "alice"}, {"aws:principalarn", kAlice}};
  if (!share.empty()) context["allot:quotashare"] = share;
  if (!priority.empty()) context["batch:schedulingpriority"] = priority;
  return context;
}

TEST(ExamplePoliciesTest, TeamMember) {
  const Policy member = MustParse(ExamplePolicy("team-member.json"));
  const std::string other_queue = "arn:aws:batch:local:000000000000:job-queue/other";
  EXPECT_EQ(Decide(member, "batch:SubmitServiceJob", kQueueQ, JobContext("team-a", "0")),
            Decision::kAllow);
  EXPECT_EQ(Decide(member, "batch:SubmitServiceJob", kShareA, JobContext("team-a", "10")),
            Decision::kAllow);
  EXPECT_EQ(Decide(member, "batch:SubmitServiceJob", kQueueQ, JobContext("team-a", "11")),
            Decision::kImplicitDeny);
  EXPECT_EQ(Decide(member, "batch:SubmitServiceJob", kQueueQ, JobContext("team-b", "0")),
            Decision::kImplicitDeny);
  EXPECT_EQ(Decide(member, "batch:SubmitServiceJob", kQueueQ, JobContext("", "0")),
            Decision::kImplicitDeny);
  EXPECT_EQ(Decide(member, "batch:SubmitServiceJob", other_queue, JobContext("team-a", "0")),
            Decision::kImplicitDeny);
  EXPECT_EQ(Decide(member, "batch:UpdateServiceJob", kJob, JobContext("team-a", "5")),
            Decision::kAllow);
  EXPECT_EQ(Decide(member, "batch:TerminateServiceJob", kJob, JobContext("team-a")),
            Decision::kAllow);
  EXPECT_EQ(Decide(member, "batch:TerminateServiceJob", kJob, JobContext("team-b")),
            Decision::kImplicitDeny);
  EXPECT_EQ(Decide(member, "batch:DescribeServiceJob", kJob, JobContext("team-a")),
            Decision::kAllow);
  EXPECT_EQ(Decide(member, "allot:GetJobLogs", kJob, JobContext("team-b")),
            Decision::kImplicitDeny);
  EXPECT_EQ(Decide(member, "batch:ListServiceJobs", kQueueQ, JobContext("")), Decision::kAllow);
  EXPECT_EQ(Decide(member, "batch:ListServiceJobs", other_queue, JobContext("")),
            Decision::kImplicitDeny);
  EXPECT_EQ(Decide(member, "batch:DescribeQuotaShare", kShareA, JobContext("")), Decision::kAllow);
  EXPECT_EQ(Decide(member, "batch:DeleteJobQueue", kQueueQ, JobContext("")),
            Decision::kImplicitDeny);
}

TEST(ExamplePoliciesTest, TeamLeadMayRaisePriorityTo50) {
  const Policy lead = MustParse(ExamplePolicy("team-lead.json"));
  EXPECT_EQ(Decide(lead, "batch:SubmitServiceJob", kQueueQ, JobContext("team-a", "50")),
            Decision::kAllow);
  EXPECT_EQ(Decide(lead, "batch:SubmitServiceJob", kQueueQ, JobContext("team-a", "51")),
            Decision::kImplicitDeny);
  EXPECT_EQ(Decide(lead, "batch:UpdateServiceJob", kJob, JobContext("team-a", "50")),
            Decision::kAllow);
  EXPECT_EQ(Decide(lead, "batch:UpdateServiceJob", kJob, JobContext("team-a", "9999")),
            Decision::kImplicitDeny);
  EXPECT_EQ(Decide(lead, "batch:UpdateServiceJob", kJob, JobContext("team-b", "1")),
            Decision::kImplicitDeny);
  EXPECT_EQ(Decide(lead, "batch:TerminateServiceJob", kJob, JobContext("team-a")),
            Decision::kAllow);
}

TEST(ExamplePoliciesTest, ViewerReadsOnly) {
  const Policy viewer = MustParse(ExamplePolicy("viewer.json"));
  EXPECT_EQ(Decide(viewer, "batch:DescribeServiceJob", kJob, JobContext("team-b")),
            Decision::kAllow);
  EXPECT_EQ(Decide(viewer, "batch:ListServiceJobs", kQueueQ), Decision::kAllow);
  EXPECT_EQ(Decide(viewer, "batch:DescribeJobQueues", "*"), Decision::kAllow);
  EXPECT_EQ(Decide(viewer, "batch:GetJobQueueSnapshot", kQueueQ), Decision::kAllow);
  EXPECT_EQ(Decide(viewer, "allot:GetJobLogs", kJob), Decision::kAllow);
  EXPECT_EQ(Decide(viewer, "batch:SubmitServiceJob", kQueueQ, JobContext("team-a", "0")),
            Decision::kImplicitDeny);
  EXPECT_EQ(Decide(viewer, "batch:UpdateJobQueue", kQueueQ), Decision::kImplicitDeny);
  EXPECT_EQ(Decide(viewer, "allot:ReadAudit", "*"), Decision::kImplicitDeny);
}

TEST(ExamplePoliciesTest, AdminMayDoAnything) {
  const Policy admin = MustParse(ExamplePolicy("admin.json"));
  for (const std::string& action : KnownActions()) {
    EXPECT_EQ(Decide(admin, action, kQueueQ), Decision::kAllow) << action;
  }
  EXPECT_EQ(Decide(admin, "allot:ManageUsers", "*"), Decision::kAllow);
}

// ---- ReadsContext: when the server may leave the context empty --------------------------------

TEST(ReadsContextTest, ConditionsAndResourceVariablesReadIt) {
  const std::vector<Policy> admin = {MustParse(ExamplePolicy("admin.json"))};
  const std::vector<Policy> viewer = {MustParse(ExamplePolicy("viewer.json"))};
  const std::vector<Policy> member = {MustParse(ExamplePolicy("team-member.json"))};
  EXPECT_FALSE(ReadsContext(admin));
  EXPECT_FALSE(ReadsContext(viewer));
  EXPECT_FALSE(ReadsContext({}));
  EXPECT_TRUE(ReadsContext(member));
  std::vector<Policy> both = admin;
  both.push_back(member[0]);
  EXPECT_TRUE(ReadsContext(both));
  const Policy own_queue = MustParse(R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow",
      "Action":"batch:*","Resource":"arn:aws:batch:*:*:job-queue/${aws:username}-*"}]})");
  EXPECT_TRUE(ReadsContext({own_queue}));
  // In a 2008-10-17 policy `${...}` is literal text, not a variable.
  const Policy literal = MustParse(R"({"Version":"2008-10-17","Statement":[{"Effect":"Allow",
      "Action":"batch:*","Resource":"arn:aws:batch:*:*:job-queue/${aws:username}"}]})");
  EXPECT_FALSE(ReadsContext({literal}));
}

// Where ReadsContext is false, no context changes a decision: the example policies, each
// action, with an empty context and with the fullest one the server builds.
TEST(ReadsContextTest, WhereItIsFalseTheContextChangesNoDecision) {
  const Context full = {{"aws:username", "alice"},        {"aws:userid", "alice"},
                        {"aws:principalarn", kAlice},     {"aws:sourceip", "10.0.0.1"},
                        {"aws:securetransport", "false"}, {"aws:requestedregion", "local"},
                        {"allot:quotashare", "team-a"},   {"batch:schedulingpriority", "9999"}};
  for (const char* name : {"team-member.json", "team-lead.json", "viewer.json", "admin.json"}) {
    const Policy policy = MustParse(ExamplePolicy(name));
    if (ReadsContext({policy})) continue;
    SCOPED_TRACE(name);
    for (const std::string& action : KnownActions()) {
      for (const std::string& resource :
           {std::string(kQueueQ), std::string(kJob), std::string("*")}) {
        EXPECT_EQ(Decide(policy, action, resource), Decide(policy, action, resource, full))
            << action << " " << resource;
      }
    }
  }
}

}  // namespace
}  // namespace allot::auth
