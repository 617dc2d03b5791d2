// Allot's own endpoints at the wire: the route table (api/routes.h), the query and its values
// (api/query.h), the users, audit and logs requests (api/tenancy_requests.h) and their answers'
// documents (encode_tenancy.cc).

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "api/encode.h"
#include "api/fields.h"
#include "api/query.h"
#include "api/routes.h"
#include "api/tenancy_requests.h"
#include "api/wire_error.h"

namespace allot::api {
namespace {

using Json = nlohmann::json;

bool Refuses(const Status& s, std::string_view names) {
  return !s.ok() && s.code() == StatusCode::kInvalidArgument &&
         s.message().find(names) != std::string::npos;
}

TEST(Routes, EachEndpointByMethodAndPath) {
  EXPECT_EQ(MatchRoute("GET", "/healthz").kind, Route::kHealth);
  EXPECT_EQ(MatchRoute("HEAD", "/metrics").kind, Route::kMetrics);
  EXPECT_EQ(MatchRoute("GET", "/ui/app.js").capture, "/ui/app.js");
  const Route action = MatchRoute("POST", "/v1/submitservicejob");
  EXPECT_EQ(action.kind, Route::kAction);
  EXPECT_EQ(action.capture, "submitservicejob");
  EXPECT_EQ(MatchRoute("POST", "/v1/SubmitServiceJob").kind, Route::kNone);  // routes are lower
  EXPECT_EQ(MatchRoute("GET", "/v1/submitservicejob").kind, Route::kNone);
  const Route tags = MatchRoute("DELETE", "/v1/tags/arn:aws:batch:r:1:job-queue/q");
  EXPECT_EQ(tags.kind, Route::kTags);
  EXPECT_EQ(tags.capture, "arn:aws:batch:r:1:job-queue/q");
  EXPECT_EQ(MatchRoute("PUT", "/v1/tags/x").kind, Route::kNone);
  const Route logs = MatchRoute("GET", "/allot/v1/jobs/j-1/logs");
  EXPECT_EQ(logs.kind, Route::kLogs);
  EXPECT_EQ(logs.capture, "j-1");
  EXPECT_EQ(MatchRoute("GET", "/allot/v1/jobs/a/b/logs").kind, Route::kNone);  // one segment
  EXPECT_EQ(MatchRoute("GET", "/allot/v1/jobs//logs").kind, Route::kNone);
  EXPECT_EQ(MatchRoute("GET", "/allot/v1/jobs/j-1/explain").kind, Route::kExplain);
  EXPECT_EQ(MatchRoute("POST", "/allot/v1/whatif").kind, Route::kWhatIf);
  EXPECT_EQ(MatchRoute("GET", "/allot/v1/whatif").kind, Route::kNone);
  EXPECT_EQ(MatchRoute("PUT", "/allot/v1/users/bob/policy").capture, "/bob/policy");
  EXPECT_EQ(MatchRoute("GET", "/allot/v1/users").capture, "");
  EXPECT_EQ(MatchRoute("GET", "/allot/v1/usersx").kind, Route::kNone);
  EXPECT_EQ(MatchRoute("GET", "/allot/v1/audit").kind, Route::kAudit);
  EXPECT_EQ(MatchRoute("GET", "/allot/v1/history/jobs").capture, "/allot/v1/history/jobs");
  EXPECT_EQ(MatchRoute("GET", "/allot/v1/history/other").kind, Route::kNone);
}

TEST(Routes, CallNamesAndAuditedActions) {
  EXPECT_EQ(CallName(MatchRoute("POST", "/v1/listservicejobs")), "listservicejobs");
  EXPECT_EQ(CallName(MatchRoute("GET", "/v1/tags/a")), "tags");
  EXPECT_EQ(CallName(MatchRoute("GET", "/allot/v1/users")), "users");
  EXPECT_EQ(AuditedAction("submitservicejob"), "batch:SubmitServiceJob");
  EXPECT_EQ(AuditedAction("listservicejobs"), "");  // a read is not audited
  EXPECT_EQ(AuditedAction("nosuchaction"), "");
  EXPECT_EQ(AuditedActionOf("POST", MatchRoute("POST", "/v1/tags/a")), "batch:TagResource");
  EXPECT_EQ(AuditedActionOf("DELETE", MatchRoute("DELETE", "/v1/tags/a")), "batch:UntagResource");
  EXPECT_EQ(AuditedActionOf("GET", MatchRoute("GET", "/v1/tags/a")), "");
  EXPECT_EQ(AuditedActionOf("POST", {Route::kUsers, ""}), "allot:CreateUser");
  EXPECT_EQ(AuditedActionOf("POST", {Route::kUsers, "/bob/keys/rotate"}), "allot:RotateAccessKeys");
  EXPECT_EQ(AuditedActionOf("PUT", {Route::kUsers, "/bob/policy"}), "allot:PutUserPolicy");
  EXPECT_EQ(AuditedActionOf("DELETE", {Route::kUsers, "/bob"}), "allot:DeleteUser");
  EXPECT_EQ(AuditedActionOf("GET", {Route::kUsers, "/bob"}), "");
}

// A users request is audited under one name whether it was refused before it was decoded (by
// its method and path) or ran (by its typed request).
TEST(Routes, UsersRequestsAreAuditedUnderOneNameDecodedOrNot) {
  const struct {
    const char* method;
    const char* path;
    const char* audited;
  } kCases[] = {{"GET", "", ""},
                {"POST", "", "allot:CreateUser"},
                {"POST", "/", "allot:CreateUser"},
                {"GET", "/bob", ""},
                {"DELETE", "/bob", "allot:DeleteUser"},
                {"GET", "/bob/policy", ""},
                {"PUT", "/bob/policy", "allot:PutUserPolicy"},
                {"POST", "/bob/keys/rotate", "allot:RotateAccessKeys"}};
  const Json body = {{"userName", "bob"}, {"Version", "2012-10-17"}, {"Statement", Json::array()}};
  for (const auto& c : kCases) {
    SCOPED_TRACE(std::string(c.method) + " " + c.path);
    Result<UserRequest> decoded = DecodeUserRequest(c.method, c.path, body);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(AuditedUserAction(decoded.value()), c.audited);
    EXPECT_EQ(
        AuditedActionOf(c.method, MatchRoute(c.method, std::string("/allot/v1/users") + c.path)),
        c.audited);
  }
}

TEST(Query, PercentDecodingAndParameters) {
  EXPECT_EQ(PercentDecode("a%2Fb+c%zz%4", true), "a/b c%zz%4");  // malformed escapes kept
  EXPECT_EQ(PercentDecode("a+b", false), "a+b");
  const QueryParams p = ParseQuery("tagKeys=a&tagKeys=b%20c&&flag&=x&n=1");
  EXPECT_EQ(p.count("tagKeys"), 2U);
  EXPECT_EQ(p.find("tagKeys")->second, "a");
  EXPECT_EQ(std::next(p.find("tagKeys"))->second, "b c");
  EXPECT_EQ(p.find("flag")->second, "");
  EXPECT_EQ(p.count(""), 0U);  // a piece without a key is dropped
  EXPECT_EQ(QueryParam(p, "missing", "dflt").value(), "dflt");
  EXPECT_TRUE(Refuses(QueryParam({{"host", "\xff"}}, "host").status(), "host is not valid UTF-8"));
}

TEST(Query, Utf8AndWholeNumbers) {
  EXPECT_TRUE(IsUtf8("caf\xC3\xA9"));
  EXPECT_FALSE(IsUtf8("\xC0\x80"));          // an overlong form
  EXPECT_FALSE(IsUtf8("\xED\xA0\x80"));      // a surrogate
  EXPECT_FALSE(IsUtf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_EQ(ScrubUtf8("a\xffz"), "a\xEF\xBF\xBDz");
  EXPECT_EQ(WholeNumber("42", "n", 100).value(), 42U);
  EXPECT_EQ(
      WholeNumber("18446744073709551615", "n", std::numeric_limits<std::uint64_t>::max()).value(),
      std::numeric_limits<std::uint64_t>::max());
  for (const char* bad : {"", "-1", "+1", "1e3", " 1", "101", "18446744073709551616"}) {
    EXPECT_TRUE(Refuses(WholeNumber(bad, "offset", 100).status(),
                        "offset must be a whole number from 0 to 100"))
        << bad;
  }
  EXPECT_TRUE(
      Refuses(WholeNumber("1", "n", 9, 2).status(), "n must be a whole number from 2 to 9"));
  EXPECT_EQ(WholeNumber("2", "n", 9, 2).value(), 2U);
  // A name the call does not take is quoted scrubbed and cut.
  const Status odd = OnlyParams({{std::string(100, 'x') + "\xff", "1"}}, {});
  EXPECT_TRUE(Refuses(
      odd, "unknown query parameter \"" + std::string(64, 'x') + "\": this call takes none"))
      << odd.ToString();
  EXPECT_TRUE(OnlyParams({{"a", "1"}, {"b", "2"}}, {"a", "b"}).ok());
}

TEST(UserRequests, EachOperationByMethodAndPath) {
  EXPECT_TRUE(std::holds_alternative<ListUsersRequest>(DecodeUserRequest("GET", "", {}).value()));
  EXPECT_TRUE(std::holds_alternative<ListUsersRequest>(DecodeUserRequest("GET", "/", {}).value()));
  Result<UserRequest> create =
      DecodeUserRequest("POST", "", {{"userName", "bob"}, {"policy", {{"Version", "2012-10-17"}}}});
  ASSERT_TRUE(create.ok()) << create.status().ToString();
  EXPECT_EQ(UserNameOf(*create), "bob");
  EXPECT_EQ(Json::parse(*std::get<CreateUserRequest>(*create).policy),
            (Json{{"Version", "2012-10-17"}}));
  EXPECT_FALSE(
      std::get<CreateUserRequest>(
          DecodeUserRequest("POST", "", {{"userName", "bob"}, {"policy", nullptr}}).value())
          .policy);
  EXPECT_EQ(UserNameOf(DecodeUserRequest("GET", "/bob", {}).value()), "bob");
  EXPECT_TRUE(
      std::holds_alternative<DeleteUserRequest>(DecodeUserRequest("DELETE", "/bob", {}).value()));
  EXPECT_TRUE(std::holds_alternative<GetUserPolicyRequest>(
      DecodeUserRequest("GET", "/bob/policy", {}).value()));
  Result<UserRequest> put = DecodeUserRequest("PUT", "/bob/policy", {{"Version", "2012-10-17"}});
  EXPECT_EQ(Json::parse(std::get<PutUserPolicyRequest>(put.value()).policy),
            (Json{{"Version", "2012-10-17"}}));
  EXPECT_TRUE(std::holds_alternative<RotateAccessKeysRequest>(
      DecodeUserRequest("POST", "/bob/keys/rotate", {}).value()));
  for (auto [method, path] : {std::pair{"PATCH", ""},
                              {"POST", "/bob"},
                              {"GET", "/bob/keys"},
                              {"DELETE", "/bob/policy/x"},
                              {"PUT", "/bob"}}) {
    EXPECT_EQ(DecodeUserRequest(method, path, {}).status().code(), StatusCode::kNotFound)
        << method << " " << path;
  }
}

TEST(UserRequests, CreateUserRefusesWhatIamRefuses) {
  EXPECT_TRUE(Refuses(DecodeUserRequest("POST", "", Json::array()).status(), "JSON object"));
  EXPECT_TRUE(Refuses(DecodeUserRequest("POST", "", {{"userName", 7}}).status(),
                      "userName is required (a string)"));
  EXPECT_TRUE(Refuses(DecodeUserRequest("POST", "", {{"userName", ""}}).status(),
                      "userName must be 1 to 64 characters, got 0"));
  EXPECT_TRUE(Refuses(DecodeUserRequest("POST", "", {{"userName", std::string(65, 'a')}}).status(),
                      "got 65"));
  EXPECT_TRUE(Refuses(DecodeUserRequest("POST", "", {{"userName", "a/b"}}).status(),
                      "userName may hold only letters, digits and + = , . @ _ -"));
  EXPECT_TRUE(CheckUserName("a+=,.@_-Z9").ok());
  EXPECT_TRUE(Refuses(DecodeUserRequest("GET", "/b\xff", {}).status(), "path is not valid UTF-8"));
}

TEST(AuditRequests, FiltersBoundsAndDefaults) {
  const AuditRequest none = DecodeAuditRequest({}).value();
  EXPECT_EQ(none.max_results, 100U);
  EXPECT_EQ(none.since, 0);
  EXPECT_EQ(none.until, std::numeric_limits<Timestamp>::max());
  const AuditRequest r = DecodeAuditRequest({{"principal", "alice"},
                                             {"resource", "j-1"},
                                             {"action", "SubmitServiceJob"},
                                             {"since", "10"},
                                             {"until", "20"},
                                             {"maxResults", "1000"},
                                             {"nextToken", "00000000000000000007"}})
                             .value();
  EXPECT_EQ(r.principal, "alice");
  EXPECT_EQ(r.resource, "j-1");
  EXPECT_EQ(r.action, "SubmitServiceJob");
  EXPECT_EQ(r.since, 10);
  EXPECT_EQ(r.until, 20);
  EXPECT_EQ(r.max_results, 1000U);
  EXPECT_EQ(r.next_token, "00000000000000000007");
  // One range, whatever the value: 0 was told "from 1", -5 "from 0".
  for (const char* bad : {"0", "-5"}) {
    EXPECT_TRUE(Refuses(DecodeAuditRequest({{"maxResults", bad}}).status(),
                        "maxResults must be a whole number from 1 to 1000"))
        << bad;
  }
  EXPECT_TRUE(Refuses(DecodeAuditRequest({{"limit", "5"}}).status(),
                      "unknown query parameter \"limit\": this call takes principal, resource, "
                      "action, since, until, maxResults, nextToken"));
  EXPECT_TRUE(Refuses(DecodeAuditRequest({{"maxResults", "1001"}}).status(), "maxResults"));
  EXPECT_TRUE(Refuses(DecodeAuditRequest({{"since", "-5"}}).status(), "since"));
  EXPECT_TRUE(Refuses(DecodeAuditRequest({{"action", "\xfe"}}).status(), "action"));
}

TEST(LogsRequests, DefaultsAndBounds) {
  const LogsRequest d = DecodeLogsRequest("j-1", {}).value();
  EXPECT_EQ(d.job_id, "j-1");
  EXPECT_EQ(d.attempt, 0);
  EXPECT_EQ(d.host, "algo-1");
  EXPECT_EQ(d.stream, "stdout");
  EXPECT_EQ(d.offset, 0U);
  const LogsRequest r = DecodeLogsRequest("j-1", {{"attempt", "2"},
                                                  {"host", "algo-3"},
                                                  {"stream", "stderr"},
                                                  {"offset", "9223372036854775807"}})
                            .value();
  EXPECT_EQ(r.attempt, 2);
  EXPECT_EQ(r.host, "algo-3");
  EXPECT_EQ(r.stream, "stderr");
  EXPECT_EQ(r.offset, 9223372036854775807U);
  EXPECT_TRUE(Refuses(DecodeLogsRequest("j-1", {{"offset", "-1"}}).status(), "offset"));
  EXPECT_TRUE(
      Refuses(DecodeLogsRequest("j-1", {{"offset", "9223372036854775808"}}).status(), "offset"));
  EXPECT_TRUE(Refuses(DecodeLogsRequest("j-1", {{"attempt", "2147483648"}}).status(), "attempt"));
  // A repeated parameter was read as its first value: stderr was asked for too, and not given.
  EXPECT_TRUE(
      Refuses(DecodeLogsRequest("j-1", {{"stream", "stdout"}, {"stream", "stderr"}}).status(),
              "query parameter stream is given more than once"));
  EXPECT_TRUE(Refuses(DecodeLogsRequest("j-1", {{"tail", "10"}}).status(),
                      "unknown query parameter \"tail\": this call takes host, stream, attempt, "
                      "offset"));
  EXPECT_TRUE(Refuses(DecodeLogsRequest("j\xff", {}).status(), "jobId is not valid UTF-8"));
  EXPECT_TRUE(Refuses(DecodeExplainRequest("j\xff").status(), "jobId is not valid UTF-8"));
  EXPECT_EQ(DecodeExplainRequest("j-1").value().job_id, "j-1");
}

TEST(TenancyAnswers, UsersNeverShowASecretButANewKeyDoes) {
  const UserDetail bob{"bob", "arn:aws:iam::1:user/bob", 5, {"AKIA1"}, true};
  const Json shown = {{"userName", "bob"},
                      {"arn", "arn:aws:iam::1:user/bob"},
                      {"createdAt", 5},
                      {"accessKeyIds", {"AKIA1"}},
                      {"hasPolicy", true}};
  EXPECT_EQ(EncodeResponse(ListUsersResponse{{bob}}), (Json{{"users", {shown}}}));
  EXPECT_EQ(EncodeResponse(ListUsersResponse{}), (Json{{"users", Json::array()}}));
  EXPECT_EQ(EncodeResponse(UserResponse{bob}), (Json{{"user", shown}}));
  EXPECT_EQ(EncodeResponse(NewAccessKeyResponse{bob, "AKIA1", "s3cret"}),
            (Json{{"user", shown},
                  {"accessKey", {{"accessKeyId", "AKIA1"}, {"secretAccessKey", "s3cret"}}}}));
  EXPECT_EQ(EncodeResponse(UserPolicyResponse{"bob", R"({"Version":"2012-10-17"})"}),
            (Json{{"userName", "bob"}, {"policy", {{"Version", "2012-10-17"}}}}));
  EXPECT_EQ(EncodeResponse(UserPolicyResponse{"bob", std::nullopt}),
            (Json{{"userName", "bob"}, {"policy", nullptr}}));
}

TEST(TenancyAnswers, AuditRecordsAndLogChunks) {
  AuditRecordDetail r{7,
                      "alice",
                      "arn:u",
                      "127.0.0.1",
                      "batch:UpdateServiceJob",
                      "arn:j",
                      "Allowed",
                      "req-1",
                      {{"schedulingPriority", "1", "9"}, {"tags", "", "{}"}}};
  const Json one = {{"time", 7},
                    {"userName", "alice"},
                    {"principal", "arn:u"},
                    {"sourceAddress", "127.0.0.1"},
                    {"action", "batch:UpdateServiceJob"},
                    {"resource", "arn:j"},
                    {"outcome", "Allowed"},
                    {"requestId", "req-1"},
                    {"changes",
                     {{"schedulingPriority", {{"old", 1}, {"new", 9}}},
                      {"tags", {{"old", nullptr}, {"new", Json::object()}}}}}};
  EXPECT_EQ(EncodeResponse(AuditPageResponse{{r}, "00000000000000000007"}),
            (Json{{"records", {one}}, {"nextToken", "00000000000000000007"}}));
  // A value clipped by the audit is no JSON: it is shown as its text, and the page stays JSON.
  r.changes = {{"policy", "", R"({"Version":"2012-)"}};
  EXPECT_EQ(EncodeResponse(AuditPageResponse{{r}, std::nullopt})["records"][0]["changes"],
            (Json{{"policy", {{"old", nullptr}, {"new", R"({"Version":"2012-)"}}}}));
  EXPECT_NO_THROW(EncodeResponse(AuditPageResponse{{r}, std::nullopt}).dump());
  r.changes.clear();
  Json unchanged = one;
  unchanged.erase("changes");  // no changes: no key
  EXPECT_EQ(EncodeResponse(AuditPageResponse{{r}, std::nullopt}), (Json{{"records", {unchanged}}}));
  EXPECT_EQ(EncodeResponse(LogChunkResponse{"hi\n", 3, true}),
            (Json{{"text", "hi\n"}, {"nextOffset", 3}, {"complete", true}}));
}

// AWS counts a tag's key (1-128) and value (0-256) in characters: "é" is one, not two bytes.
TEST(Tags, LengthsCountCharactersNotBytes) {
  std::string key;
  for (int i = 0; i < 128; ++i) key += "\xC3\xA9";  // 128 characters, 256 bytes
  std::string value;
  for (int i = 0; i < 256; ++i) value += "\xC3\xA9";
  EXPECT_EQ(ReadTags(Json{{"tags", {{key, value}}}}).size(), 1U);
  EXPECT_THROW(ReadTags(Json{{"tags", {{key + "a", "v"}}}}), ClientError);
  EXPECT_THROW(ReadTags(Json{{"tags", {{"k", value + "a"}}}}), ClientError);
}

}  // namespace
}  // namespace allot::api
