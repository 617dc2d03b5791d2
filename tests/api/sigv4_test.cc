#include "api/sigv4.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <ostream>
#include <string>

namespace allot::api {
namespace {

// The AWS SigV4 test-suite credentials and time (aws-sig-v4-test-suite, "get-vanilla" etc.).
const Credentials kExample{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"};
constexpr std::string_view kExampleDate = "20150830T123600Z";
const Timestamp kExampleTime = *ParseAmzDate(kExampleDate);

HttpRequest ExampleGet(std::string query = "") {
  return HttpRequest{.method = "GET",
                     .path = "/",
                     .query = std::move(query),
                     .headers = {{"Host", "example.amazonaws.com"}},
                     .body = ""};
}

std::string SignatureOf(const HttpRequest& req) {
  std::string auth = *FindHeader(req, "authorization");
  return auth.substr(auth.find("Signature=") + 10);
}

KeyLookup Keys(std::map<std::string, std::string> keys) {
  return [keys = std::move(keys)](std::string_view id) -> std::optional<std::string> {
    auto it = keys.find(std::string(id));
    if (it == keys.end()) return std::nullopt;
    return it->second;
  };
}

const KeyLookup kExampleKeys = Keys({{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"}});

// A Batch request shaped like the one boto3 sends for SubmitServiceJob.
HttpRequest BatchRequest() {
  return HttpRequest{.method = "POST",
                     .path = "/v1/submitservicejob",
                     .query = "",
                     .headers = {{"Host", "127.0.0.1:8742"},
                                 {"Content-Type", "application/json"},
                                 {"User-Agent", "Boto3/1.43.11 md/Botocore#1.43.11"},
                                 {"amz-sdk-invocation-id", "0b3e1f3c-8f4e-4bd5-9a55-1b2d3c4d5e6f"},
                                 {"amz-sdk-request", "attempt=1"},
                                 {"Content-Length", "52"}},
                     .body = R"({"jobName":"j1","jobQueue":"q","serviceJobType":"X"})"};
}

HttpRequest SignedBatchRequest(const SignOptions& options = {}) {
  HttpRequest req = BatchRequest();
  EXPECT_TRUE(Sign(req, kExample, "us-west-2", "batch", kExampleDate, options).ok());
  return req;
}

void ExpectError(const VerifyResult& result, int status, std::string_view code,
                 std::string_view message_prefix = "") {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().http_status, status);
  EXPECT_EQ(result.error().error_code, code);
  EXPECT_EQ(result.error().message.substr(0, message_prefix.size()), message_prefix)
      << result.error().message;
}

TEST(SigV4Primitives, Sha256AndHmac) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // RFC 4231 test case 2.
  EXPECT_EQ(HexEncode(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(SigV4Primitives, DocumentedSigningKey) {
  // The signing-key example of the AWS General Reference (service iam).
  EXPECT_EQ(HexEncode(DeriveSigningKey(kExample.secret_access_key, "20150830", "us-east-1", "iam")),
            "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9");
}

TEST(SigV4Primitives, AmzDateRoundTrip) {
  EXPECT_EQ(kExampleTime, Timestamp{1440938160000});
  EXPECT_EQ(FormatAmzDate(kExampleTime), kExampleDate);
  EXPECT_EQ(FormatAmzDate(0), "19700101T000000Z");
  EXPECT_EQ(FormatAmzDate(951782400999), "20000229T000000Z");
  EXPECT_EQ(FormatAmzDate(-1), "19691231T235959Z");
  EXPECT_EQ(ParseAmzDate("20000229T000000Z"), Timestamp{951782400000});
  EXPECT_FALSE(ParseAmzDate("20010229T000000Z"));  // not a leap year
  EXPECT_FALSE(ParseAmzDate("20150830T123600"));
  EXPECT_FALSE(ParseAmzDate("2015-08-30T12:36:00Z"));
  EXPECT_FALSE(ParseAmzDate("20150830T246000Z"));
  EXPECT_FALSE(ParseAmzDate("20151330T123600Z"));
}

TEST(SigV4Canonical, SplitRequestTarget) {
  using Pair = std::pair<std::string, std::string>;
  EXPECT_EQ(SplitRequestTarget("/v1/tags/arn%3Aa?tagKeys=a%20b&tagKeys=z"),
            (Pair{"/v1/tags/arn%3Aa", "tagKeys=a%20b&tagKeys=z"}));
  EXPECT_EQ(SplitRequestTarget("/v1/listjobs"), (Pair{"/v1/listjobs", ""}));
  EXPECT_EQ(SplitRequestTarget("/a?b=c?d#frag"), (Pair{"/a", "b=c?d"}));
  EXPECT_EQ(SplitRequestTarget("/a?"), (Pair{"/a", ""}));
}

TEST(SigV4Canonical, UriIsNormalizedAndEncodedOnceMore) {
  EXPECT_EQ(CanonicalUri(""), "/");
  EXPECT_EQ(CanonicalUri("/"), "/");
  EXPECT_EQ(CanonicalUri("/example1/example2/../.."), "/");
  EXPECT_EQ(CanonicalUri("/a/./b//c/"), "/a/b/c/");
  EXPECT_EQ(CanonicalUri("/v1/describejobs"), "/v1/describejobs");
  EXPECT_EQ(CanonicalUri("/v1/tags/arn%3Aaws%3Abatch%2Fq"), "/v1/tags/arn%253Aaws%253Abatch%252Fq");
  EXPECT_EQ(CanonicalUri("/a b/~x-_.y"), "/a%20b/~x-_.y");
}

TEST(SigV4Canonical, QueryIsSortedRawPairs) {
  EXPECT_EQ(CanonicalQueryString(""), "");
  EXPECT_EQ(CanonicalQueryString("Param2=value2&Param1=value1"), "Param1=value1&Param2=value2");
  EXPECT_EQ(CanonicalQueryString("Param1=value2&Param1=Value1"), "Param1=Value1&Param1=value2");
  EXPECT_EQ(CanonicalQueryString("tagKeys=b&tagKeys=a%20b&tagKeys=a-b"),
            "tagKeys=a%20b&tagKeys=a-b&tagKeys=b");
  // Pairs sort by key first: "a" < "a-b" although "a=" > "a-".
  EXPECT_EQ(CanonicalQueryString("a-b=1&a=2"), "a=2&a-b=1");
  EXPECT_EQ(CanonicalQueryString("flag"), "flag=");
  EXPECT_EQ(NormalizedQueryString("b=x y&a=%7e+"), "a=~%2B&b=x%20y");
}

TEST(SigV4Canonical, HeaderValuesAreTrimmed) {
  EXPECT_EQ(CanonicalHeaderValue("   value1  "), "value1");
  EXPECT_EQ(CanonicalHeaderValue("\"a   b \t  c\""), "\"a b c\"");
  EXPECT_EQ(CanonicalHeaderValue(""), "");
}

TEST(SigV4Canonical, HeadersToSignSkipsHopByHopHeaders) {
  HttpRequest req = BatchRequest();
  req.headers.emplace_back("Connection", "keep-alive");
  req.headers.emplace_back("Expect", "100-continue");
  req.headers.emplace_back("X-Amz-Date", "20150830T123600Z");
  EXPECT_EQ(HeadersToSign(req),
            (std::vector<std::string>{"amz-sdk-invocation-id", "amz-sdk-request", "content-length",
                                      "content-type", "host", "x-amz-date"}));
}

TEST(SigV4Canonical, CanonicalRequestOfGetVanilla) {
  HttpRequest req = ExampleGet();
  req.headers.emplace_back("X-Amz-Date", std::string(kExampleDate));
  EXPECT_EQ(CanonicalRequest(req, {"host", "x-amz-date"}),
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
            "host;x-amz-date\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(StringToSign(kExampleDate, "20150830/us-east-1/service/aws4_request",
                         CanonicalRequest(req, {"host", "x-amz-date"})),
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
            "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
}

TEST(SigV4Canonical, RepeatedHeadersAreJoinedWithCommas) {
  HttpRequest req = ExampleGet();
  req.headers.emplace_back("My-Header", " a ");
  req.headers.emplace_back("my-header", "b  c");
  EXPECT_EQ(CanonicalRequest(req, {"host", "my-header"}),
            "GET\n/\n\nhost:example.amazonaws.com\nmy-header:a,b c\n\nhost;my-header\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// Signatures of the AWS SigV4 test suite (cross-checked with botocore's SigV4Auth).
struct SuiteCase {
  const char* name;
  HttpRequest request;
  const char* signed_headers;
  const char* signature;
};

// By its name: gtest would print the case's bytes, addresses included, into each ctest name.
void PrintTo(const SuiteCase& c, std::ostream* os) { *os << c.name; }

class SigV4Suite : public ::testing::TestWithParam<SuiteCase> {};

TEST_P(SigV4Suite, SignsLikeAwsAndBotocore) {
  HttpRequest req = GetParam().request;
  ASSERT_TRUE(Sign(req, kExample, "us-east-1", "service", kExampleDate).ok());
  EXPECT_EQ(*FindHeader(req, "x-amz-date"), kExampleDate);
  EXPECT_EQ(*FindHeader(req, "authorization"),
            std::string("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/"
                        "aws4_request, SignedHeaders=") +
                GetParam().signed_headers + ", Signature=" + GetParam().signature);
  VerifyResult verified = Verify(req, kExampleKeys, kExampleTime, kDefaultMaxSkew, "service");
  ASSERT_TRUE(verified.ok()) << verified.error().message;
  EXPECT_EQ(verified->access_key_id, "AKIDEXAMPLE");
  EXPECT_EQ(verified->region, "us-east-1");
  EXPECT_EQ(verified->service, "service");
}

HttpRequest WithHeaders(HttpRequest req, std::vector<std::pair<std::string, std::string>> headers) {
  for (auto& h : headers) req.headers.push_back(std::move(h));
  return req;
}

HttpRequest WithMethodPath(std::string method, std::string path) {
  HttpRequest req = ExampleGet();
  req.method = std::move(method);
  req.path = std::move(path);
  return req;
}

INSTANTIATE_TEST_SUITE_P(
    AwsTestSuite, SigV4Suite,
    ::testing::Values(
        SuiteCase{"get_vanilla", ExampleGet(), "host;x-amz-date",
                  "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
        SuiteCase{"get_vanilla_query_order_key_case", ExampleGet("Param2=value2&Param1=value1"),
                  "host;x-amz-date",
                  "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"},
        SuiteCase{"get_vanilla_query_order_value", ExampleGet("Param1=value2&Param1=Value1"),
                  "host;x-amz-date",
                  "eedbc4e291e521cf13422ffca22be7d2eb8146eecf653089df300a15b2382bd1"},
        SuiteCase{"post_vanilla", WithMethodPath("POST", "/"), "host;x-amz-date",
                  "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"},
        SuiteCase{"get_relative_relative", WithMethodPath("GET", "/example1/example2/../.."),
                  "host;x-amz-date",
                  "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
        SuiteCase{
            "get_header_value_trim",
            WithHeaders(ExampleGet(), {{"My-Header1", " value1"}, {"My-Header2", "\"a   b   c\""}}),
            "host;my-header1;my-header2;x-amz-date",
            "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"}),
    [](const ::testing::TestParamInfo<SuiteCase>& p) { return p.param.name; });

TEST(SigV4Sign, MatchesBotocoreForABatchPathWithAnArn) {
  // botocore signs the already percent-encoded path encoded once more (value from SigV4Auth).
  HttpRequest req{.method = "POST",
                  .path = "/v1/tags/arn%3Aaws%3Abatch%3Aus-east-1%3A123456789012%3Ajob-queue%2Fq",
                  .query = "",
                  .headers = {{"Host", "127.0.0.1:8742"}, {"Content-Type", "application/json"}},
                  .body = R"({"tags":{"a":"b"}})"};
  ASSERT_TRUE(Sign(req, kExample, "us-west-2", "batch", kExampleDate).ok());
  EXPECT_EQ(SignatureOf(req), "157ada5df4a324198960017a96dc5361e9f487544918ca981cec1b26d5e9552a");
  EXPECT_TRUE(Verify(req, kExampleKeys, kExampleTime).ok());
}

TEST(SigV4Sign, MatchesBotocoreForARepeatedQueryKey) {
  HttpRequest req{.method = "DELETE",
                  .path = "/v1/tags/x",
                  .query = "tagKeys=b&tagKeys=a%20b&tagKeys=a-b",
                  .headers = {{"Host", "127.0.0.1:8742"}},
                  .body = ""};
  ASSERT_TRUE(Sign(req, kExample, "us-west-2", "batch", kExampleDate).ok());
  EXPECT_EQ(SignatureOf(req), "a0b4a49b9f374e862ad80af643eaca8704315bd3c66312a8adf98679796244d8");
  EXPECT_TRUE(Verify(req, kExampleKeys, kExampleTime).ok());
}

TEST(SigV4Sign, ReplacesAnOldSignatureAndDate) {
  HttpRequest req = ExampleGet();
  req.headers.emplace_back("authorization", "stale");
  req.headers.emplace_back("x-amz-date", "19990101T000000Z");
  ASSERT_TRUE(Sign(req, kExample, "us-east-1", "service", kExampleDate).ok());
  EXPECT_EQ(req.headers.size(), 3u);
  EXPECT_EQ(SignatureOf(req), "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
}

TEST(SigV4Sign, OptionalContentSha256Header) {
  HttpRequest req = SignedBatchRequest({.add_content_sha256_header = true});
  EXPECT_EQ(*FindHeader(req, "x-amz-content-sha256"), Sha256Hex(req.body));
  EXPECT_NE(FindHeader(req, "authorization")->find("x-amz-content-sha256;x-amz-date"),
            std::string::npos);
  EXPECT_TRUE(Verify(req, kExampleKeys, kExampleTime).ok());
}

TEST(SigV4Sign, RejectsBadInput) {
  HttpRequest req = ExampleGet();
  EXPECT_EQ(Sign(req, kExample, "us-east-1", "service", "2015-08-30").code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Sign(req, kExample, "", "service", kExampleDate).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Sign(req, Credentials{}, "us-east-1", "service", kExampleDate).code(),
            StatusCode::kInvalidArgument);
  HttpRequest no_host = ExampleGet();
  no_host.headers.clear();
  EXPECT_EQ(Sign(no_host, kExample, "us-east-1", "service", kExampleDate).code(),
            StatusCode::kInvalidArgument);
}

TEST(SigV4Verify, RoundTripReportsTheCaller) {
  HttpRequest req = SignedBatchRequest();
  // User-Agent is never signed, so a proxy may change it.
  for (auto& [name, value] : req.headers) {
    if (name == "User-Agent") value = "something else";
  }
  VerifyResult verified = Verify(req, kExampleKeys, kExampleTime + Seconds(60));
  ASSERT_TRUE(verified.ok()) << verified.error().message;
  EXPECT_EQ(verified->access_key_id, "AKIDEXAMPLE");
  EXPECT_EQ(verified->region, "us-west-2");
  EXPECT_EQ(verified->service, "batch");
  EXPECT_EQ(verified->amz_date, kExampleDate);
  EXPECT_EQ(verified->request_time, kExampleTime);
}

TEST(SigV4Verify, HeaderNamesAnyCaseAndOrder) {
  HttpRequest req = SignedBatchRequest();
  std::reverse(req.headers.begin(), req.headers.end());
  for (auto& [name, value] : req.headers) {
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  EXPECT_TRUE(Verify(req, kExampleKeys, kExampleTime).ok());
}

TEST(SigV4Verify, MissingAuthorization) {
  ExpectError(Verify(BatchRequest(), kExampleKeys, kExampleTime), 403,
              "MissingAuthenticationTokenException", "Missing Authentication Token");
}

TEST(SigV4Verify, GarbledAuthorization) {
  auto with_auth = [](std::string auth) {
    HttpRequest req = SignedBatchRequest();
    for (auto& [name, value] : req.headers) {
      if (name == "Authorization") value = auth;
    }
    return req;
  };
  ExpectError(Verify(with_auth("Bearer abc"), kExampleKeys, kExampleTime), 400,
              "IncompleteSignatureException", "Unsupported AWS 'algorithm': 'Bearer'");
  ExpectError(Verify(with_auth("AWS4-HMAC-SHA256"), kExampleKeys, kExampleTime), 400,
              "IncompleteSignatureException",
              "Authorization header requires 'Credential' parameter. Authorization header "
              "requires 'Signature' parameter. Authorization header requires 'SignedHeaders' "
              "parameter. Authorization=AWS4-HMAC-SHA256");
  ExpectError(Verify(with_auth("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-west-2/"
                               "batch/aws4_request, SignedHeaders=host;x-amz-date"),
                     kExampleKeys, kExampleTime),
              400, "IncompleteSignatureException",
              "Authorization header requires 'Signature' parameter.");
  ExpectError(Verify(with_auth("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-west-2, "
                               "SignedHeaders=host;x-amz-date, Signature=00"),
                     kExampleKeys, kExampleTime),
              400, "IncompleteSignatureException", "Credential should be");
  ExpectError(Verify(with_auth("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-west-2/"
                               "batch/aws5_request, SignedHeaders=host;x-amz-date, Signature=00"),
                     kExampleKeys, kExampleTime),
              400, "IncompleteSignatureException",
              "Credential should be scoped with a valid terminator: 'aws4_request', not "
              "'aws5_request'.");
  ExpectError(Verify(with_auth("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-west-2/"
                               "batch/aws4_request, SignedHeaders=x-amz-date, Signature=00"),
                     kExampleKeys, kExampleTime),
              400, "IncompleteSignatureException", "'Host' or ':authority' must be a");
  ExpectError(Verify(with_auth("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150831/us-west-2/"
                               "batch/aws4_request, SignedHeaders=host;x-amz-date, Signature=00"),
                     kExampleKeys, kExampleTime),
              403, "InvalidSignatureException",
              "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date "
              "from HTTP: '20150831' != '20150830', from '20150830T123600Z'.");
}

TEST(SigV4Verify, MissingOrMalformedDate) {
  HttpRequest req = SignedBatchRequest();
  std::erase_if(req.headers, [](const auto& h) { return h.first == "X-Amz-Date"; });
  ExpectError(Verify(req, kExampleKeys, kExampleTime), 400, "IncompleteSignatureException",
              "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' "
              "header.");
  req.headers.emplace_back("X-Amz-Date", "2015-08-30T12:36:00Z");
  ExpectError(Verify(req, kExampleKeys, kExampleTime), 400, "IncompleteSignatureException",
              "Date must be in ISO-8601 'basic format'.");
}

TEST(SigV4Verify, DateHeaderInsteadOfXAmzDate) {
  // botocore signs with the Date header (RFC 1123) when the request already has one.
  HttpRequest req = SignedBatchRequest();
  std::erase_if(req.headers, [](const auto& h) { return h.first == "X-Amz-Date"; });
  std::erase_if(req.headers, [](const auto& h) { return h.first == "Authorization"; });
  req.headers.emplace_back("Date", "Sun, 30 Aug 2015 12:36:00 GMT");
  std::vector<std::string> names = HeadersToSign(req);
  std::string sts = StringToSign(kExampleDate, "20150830/us-west-2/batch/aws4_request",
                                 CanonicalRequest(req, names));
  std::string sig = ComputeSignature(
      DeriveSigningKey(kExample.secret_access_key, "20150830", "us-west-2", "batch"), sts);
  std::string signed_list;
  for (const std::string& n : names) signed_list += (signed_list.empty() ? "" : ";") + n;
  req.headers.emplace_back("Authorization",
                           "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-west-2/batch/"
                           "aws4_request, SignedHeaders=" +
                               signed_list + ", Signature=" + sig);
  VerifyResult verified = Verify(req, kExampleKeys, kExampleTime);
  ASSERT_TRUE(verified.ok()) << verified.error().message;
  EXPECT_EQ(verified->amz_date, kExampleDate);
  for (auto& [name, value] : req.headers) {
    if (name == "Date") value = "Sun, 30 Aug 2015 12:36:00 -0000";  // formatdate's default
  }
  EXPECT_FALSE(Verify(req, kExampleKeys, kExampleTime).ok());  // Date is signed, value changed
}

TEST(SigV4Verify, UnknownAccessKey) {
  HttpRequest req = SignedBatchRequest();
  ExpectError(Verify(req, Keys({{"AKIAOTHER", "x"}}), kExampleTime), 403,
              "UnrecognizedClientException",
              "The security token included in the request is invalid.");
  ExpectError(Verify(req, KeyLookup(), kExampleTime), 403, "UnrecognizedClientException");
}

constexpr std::string_view kMismatch =
    "The request signature we calculated does not match the signature you provided. Check your "
    "AWS Secret Access Key and signing method. Consult the service documentation for details.";

TEST(SigV4Verify, WrongSecret) {
  ExpectError(Verify(SignedBatchRequest(), Keys({{"AKIDEXAMPLE", "not the secret"}}), kExampleTime),
              403, "InvalidSignatureException", kMismatch);
}

TEST(SigV4Verify, TamperedBody) {
  HttpRequest req = SignedBatchRequest();
  req.body[2] = 'X';
  ExpectError(Verify(req, kExampleKeys, kExampleTime), 403, "InvalidSignatureException", kMismatch);
}

TEST(SigV4Verify, TamperedBodyWithContentSha256Header) {
  HttpRequest req = SignedBatchRequest({.add_content_sha256_header = true});
  req.body += " ";
  ExpectError(Verify(req, kExampleKeys, kExampleTime), 403, "InvalidSignatureException",
              "The provided 'x-amz-content-sha256' header does not match what was computed");
}

TEST(SigV4Verify, UnsignedPayloadIsRefused) {
  HttpRequest req = BatchRequest();
  req.headers.emplace_back("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD");
  ASSERT_TRUE(Sign(req, kExample, "us-west-2", "batch", kExampleDate).ok());
  ExpectError(Verify(req, kExampleKeys, kExampleTime), 403, "InvalidSignatureException",
              "The provided 'x-amz-content-sha256' header does not match what was computed");
}

TEST(SigV4Verify, TamperedSignedHeaderPathQueryOrMethod) {
  {
    HttpRequest req = SignedBatchRequest();
    for (auto& [name, value] : req.headers) {
      if (name == "amz-sdk-request") value = "attempt=2";
    }
    ExpectError(Verify(req, kExampleKeys, kExampleTime), 403, "InvalidSignatureException",
                kMismatch);
  }
  {
    HttpRequest req = SignedBatchRequest();
    req.headers.emplace_back("Content-Type", "text/plain");  // a second value for a signed name
    ExpectError(Verify(req, kExampleKeys, kExampleTime), 403, "InvalidSignatureException");
  }
  {
    HttpRequest req = SignedBatchRequest();
    req.path = "/v1/submitjob";
    ExpectError(Verify(req, kExampleKeys, kExampleTime), 403, "InvalidSignatureException");
  }
  {
    HttpRequest req = SignedBatchRequest();
    req.query = "x=1";
    ExpectError(Verify(req, kExampleKeys, kExampleTime), 403, "InvalidSignatureException");
  }
  {
    HttpRequest req = SignedBatchRequest();
    req.method = "PUT";
    ExpectError(Verify(req, kExampleKeys, kExampleTime), 403, "InvalidSignatureException");
  }
  {
    HttpRequest req = SignedBatchRequest();
    for (auto& [name, value] : req.headers) {
      if (name == "Authorization") value.back() = value.back() == '0' ? '1' : '0';
    }
    ExpectError(Verify(req, kExampleKeys, kExampleTime), 403, "InvalidSignatureException",
                kMismatch);
  }
}

TEST(SigV4Verify, WireBytesEchoedInRefusalsArePrintableAscii) {
  // The server writes the message into a JSON body: raw bytes that are not UTF-8 would make that
  // fail (found by fuzz/sigv4_fuzz.cc: a region of 0xFF bytes echoed in the string to sign).
  HttpRequest req = SignedBatchRequest();
  for (auto& [name, value] : req.headers) {
    if (name == "Authorization") value.replace(value.find("us-west-2"), 9, "us-\xff\x01\tz");
  }
  VerifyResult mismatch = Verify(req, kExampleKeys, kExampleTime);
  ExpectError(mismatch, 403, "InvalidSignatureException", kMismatch);
  EXPECT_NE(mismatch.error().message.find("us-\\xFF\\x01\\x09z"), std::string::npos)
      << mismatch.error().message;

  HttpRequest bad_algorithm = SignedBatchRequest();
  bad_algorithm.headers.back().second = "\xc3\x28 Credential=x";  // Sign appends Authorization last
  VerifyResult garbled = Verify(bad_algorithm, kExampleKeys, kExampleTime);
  ExpectError(garbled, 400, "IncompleteSignatureException",
              "Unsupported AWS 'algorithm': '\\xC3('");
  for (const VerifyResult* r : {&mismatch, &garbled}) {
    for (char c : r->error().message) {
      EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << static_cast<int>(c);
    }
  }
}

TEST(SigV4Verify, MissingSignedHeader) {
  HttpRequest req = SignedBatchRequest();
  std::erase_if(req.headers, [](const auto& h) { return h.first == "amz-sdk-invocation-id"; });
  ExpectError(Verify(req, kExampleKeys, kExampleTime), 403, "InvalidSignatureException", kMismatch);
}

TEST(SigV4Verify, MismatchMessageCarriesTheCanonicalRequest) {
  HttpRequest req = SignedBatchRequest();
  req.body = "{}";
  VerifyResult result = Verify(req, kExampleKeys, kExampleTime);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("The Canonical String for this request should have "
                                        "been\n'POST\n/v1/submitservicejob\n"),
            std::string::npos);
  EXPECT_NE(result.error().message.find(Sha256Hex("{}")), std::string::npos);
}

TEST(SigV4Verify, ClockSkew) {
  HttpRequest req = SignedBatchRequest();
  EXPECT_TRUE(Verify(req, kExampleKeys, kExampleTime + Seconds(15 * 60)).ok());
  EXPECT_TRUE(Verify(req, kExampleKeys, kExampleTime - Seconds(15 * 60)).ok());
  ExpectError(Verify(req, kExampleKeys, kExampleTime + Seconds(16 * 60)), 403,
              "InvalidSignatureException",
              "Signature expired: 20150830T123600Z is now earlier than 20150830T123700Z "
              "(20150830T125200Z - 15 min.)");
  ExpectError(Verify(req, kExampleKeys, kExampleTime - Seconds(16 * 60)), 403,
              "InvalidSignatureException",
              "Signature not yet current: 20150830T123600Z is still later than "
              "20150830T123500Z (20150830T122000Z + 15 min.)");
  EXPECT_TRUE(Verify(req, kExampleKeys, kExampleTime + Seconds(16 * 60), Seconds(20 * 60)).ok());
  ExpectError(Verify(req, kExampleKeys, kExampleTime + Seconds(60), Seconds(30)), 403,
              "InvalidSignatureException", "Signature expired:");
}

TEST(SigV4Verify, AnyRegionIsAcceptedAndReported) {
  HttpRequest req = BatchRequest();
  ASSERT_TRUE(Sign(req, kExample, "eu-central-1", "batch", kExampleDate).ok());
  VerifyResult verified = Verify(req, kExampleKeys, kExampleTime);
  ASSERT_TRUE(verified.ok());
  EXPECT_EQ(verified->region, "eu-central-1");
  EXPECT_EQ(verified->service, "batch");
}

TEST(SigV4Verify, CredentialScopeMustNameTheBatchService) {
  // A correct signature scoped to another service (one a key holder may have signed for some
  // other endpoint) is not a Batch request.
  for (const char* service : {"execute-api", "s3", "Batch", "batch2"}) {
    SCOPED_TRACE(service);
    HttpRequest req = BatchRequest();
    ASSERT_TRUE(Sign(req, kExample, "us-west-2", service, kExampleDate).ok());
    ExpectError(Verify(req, kExampleKeys, kExampleTime), 403, "InvalidSignatureException",
                "Credential should be scoped to correct service: 'batch'.");
  }
}

TEST(SigV4Verify, AwsNormalizedQueryIsAcceptedToo) {
  // A client that signs the query AWS-normalized ("a=x%20y") but sends it differently ("a=x+y"
  // is not equivalent, but "%7E" vs "~" is): both forms verify.
  HttpRequest req{.method = "GET",
                  .path = "/v1/tags/x",
                  .query = "a=%7Eb",
                  .headers = {{"Host", "127.0.0.1:8742"}},
                  .body = ""};
  HttpRequest normalized = req;
  normalized.query = "a=~b";
  ASSERT_TRUE(Sign(normalized, kExample, "us-west-2", "batch", kExampleDate).ok());
  normalized.query = req.query;  // sent with the escaped tilde
  EXPECT_TRUE(Verify(normalized, kExampleKeys, kExampleTime).ok());
  ASSERT_TRUE(Sign(req, kExample, "us-west-2", "batch", kExampleDate).ok());  // botocore form
  EXPECT_TRUE(Verify(req, kExampleKeys, kExampleTime).ok());
}

}  // namespace
}  // namespace allot::api
