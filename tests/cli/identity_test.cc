// Unit tests of the pure parts of `allot users` and `allot audit`: --since/--until, the audit
// query and table, user paths, policy files, saved keys.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "cli/audit.h"
#include "cli/client.h"
#include "cli/users.h"
#include "common/civil_time.h"

namespace allot::cli {
namespace {

constexpr Timestamp kJan31 = 1'738'332'309'000;  // 2025-01-31T14:05:09Z
constexpr Duration kMinute = 60'000;
constexpr Duration kHour = 60 * kMinute;
constexpr Duration kDay = 24 * kHour;

TEST(ParseRelativeDuration, Table) {
  struct Case {
    std::string_view text;
    std::optional<Duration> want;
  };
  const Case kCases[] = {
      {"30m", 30 * kMinute},
      {"1h", kHour},
      {"7d", 7 * kDay},
      {"90s", 90'000},
      {"2w", 14 * kDay},
      {"1h30m", kHour + 30 * kMinute},
      {"0s", 0},
      {"", std::nullopt},
      {"h", std::nullopt},
      {"10", std::nullopt},
      {"5x", std::nullopt},
      {"1.5h", std::nullopt},
      {"-1h", std::nullopt},
      {"1H", std::nullopt},
      {"1h ", std::nullopt},
      {"1234567890h", std::nullopt},  // 10 digits: refused rather than overflowing
  };
  for (const Case& tc : kCases) {
    SCOPED_TRACE(tc.text);
    EXPECT_EQ(ParseRelativeDuration(tc.text), tc.want);
  }
}

TEST(ParseRfc3339, Table) {
  struct Case {
    std::string_view text;
    std::optional<Timestamp> want;
  };
  const Case kCases[] = {
      {"2025-01-31T14:05:09Z", kJan31},
      {"2025-01-31T16:05:09+02:00", kJan31},
      {"2025-01-31T09:35:09-04:30", kJan31},
      {"2025-01-31t14:05:09.250z", kJan31 + 250},
      {"2025-01-31T14:05:09.5Z", kJan31 + 500},
      {"2025-01-31T14:05:09.123456789Z", kJan31 + 123},
      {"2025-01-31 14:05:09Z", kJan31},
      {"2025-01-31", 1'738'281'600'000},
      {"1970-01-01T00:00:00Z", 0},
      {"2024-02-29T00:00:00Z", 1'709'164'800'000},
      {"2025-02-29T00:00:00Z", std::nullopt},  // not a leap year
      {"2025-01-31T14:05:09", std::nullopt},   // RFC 3339 needs the offset
      {"2025-01-31T24:00:00Z", std::nullopt},
      {"2025-01-31T14:60:00Z", std::nullopt},
      {"2025-13-01", std::nullopt},
      {"2025-1-31", std::nullopt},
      {"2025-01-31T14:05Z", std::nullopt},
      {"2025-01-31T14:05:09.Z", std::nullopt},
      {"2025-01-31T14:05:09+2:00", std::nullopt},
      {"2025-01-31T14:05:09+24:00", std::nullopt},
      {"2025-01-31T14:05:09Zjunk", std::nullopt},
      {"", std::nullopt},
      {"1h", std::nullopt},
  };
  for (const Case& tc : kCases) {
    SCOPED_TRACE(tc.text);
    EXPECT_EQ(ParseRfc3339(tc.text), tc.want);
  }
}

TEST(ParseTimeFlag, DurationsCountBackFromNow) {
  EXPECT_EQ(ParseTimeFlag("1h", kJan31, "--since"), kJan31 - kHour);
  EXPECT_EQ(ParseTimeFlag("30m", kJan31, "--since"), kJan31 - 30 * kMinute);
  EXPECT_EQ(ParseTimeFlag("7d", kJan31, "--since"), kJan31 - 7 * kDay);
  EXPECT_EQ(ParseTimeFlag("now", kJan31, "--until"), kJan31);
  EXPECT_EQ(ParseTimeFlag("2025-01-31T14:05:09Z", 0, "--since"), kJan31);
}

TEST(ParseTimeFlag, RefusalNamesTheFlagAndTheForms) {
  try {
    ParseTimeFlag("yesterday", kJan31, "--until");
    FAIL() << "no error";
  } catch (const CliError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("--until \"yesterday\""), std::string::npos) << message;
    EXPECT_NE(message.find("1h"), std::string::npos) << message;
    EXPECT_NE(message.find("2025-01-31T14:05:09Z"), std::string::npos) << message;
  }
}

TEST(FormatRfc3339Utc, DropsMillisecondsAndRoundTrips) {
  EXPECT_EQ(FormatRfc3339Utc(kJan31 + 999), "2025-01-31T14:05:09Z");
  EXPECT_EQ(FormatRfc3339Utc(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(ParseRfc3339(FormatRfc3339Utc(kJan31)), kJan31);
}

TEST(AuditQuery, EncodesEveryFilterAndLeavesOutEmptyOnes) {
  EXPECT_EQ(AuditQuery({}, 100, ""), "maxResults=100");
  AuditFilter f{.user = "alice",
                .resource = "arn:aws:batch:local:0:service-job/j 1",
                .action = "batch:UpdateServiceJob",
                .since = kJan31 - kHour,
                .until = kJan31};
  EXPECT_EQ(AuditQuery(f, 7, "tok/=+"),
            "principal=alice&resource=arn%3Aaws%3Abatch%3Alocal%3A0%3Aservice-job%2Fj%201"
            "&action=batch%3AUpdateServiceJob&since=1738328709000&until=1738332309000"
            "&maxResults=7&nextToken=tok%2F%3D%2B");
}

TEST(PercentEncode, KeepsOnlyUnreservedCharacters) {
  EXPECT_EQ(PercentEncode("AZaz09-_.~"), "AZaz09-_.~");
  EXPECT_EQ(PercentEncode("a+b@c,d=e/f g"), "a%2Bb%40c%2Cd%3De%2Ff%20g");
  EXPECT_EQ(PercentEncode("\xC3\xA9"), "%C3%A9");
}

TEST(FormatChanges, OldArrowNew) {
  EXPECT_EQ(FormatChanges(Json::parse(R"({"schedulingPriority": {"old": 1, "new": 50}})")),
            "schedulingPriority 1\u219250");
  EXPECT_EQ(FormatChanges(Json::parse(
                R"({"state": {"old": "ENABLED", "new": "DISABLED"}, "priority": {"new": 2}})")),
            "priority -\u21922, state ENABLED\u2192DISABLED");
  EXPECT_EQ(FormatChanges(Json()), "");
  EXPECT_EQ(FormatChanges(Json::object()), "");
}

TEST(PrintAuditRecords, OneLinePerRecordInTheOrderGiven) {
  const Json records = Json::parse(R"([
    {"time": 1738332309000, "userName": "alice",
     "principal": "arn:aws:iam::000000000000:user/alice", "sourceAddress": "127.0.0.1",
     "action": "batch:UpdateServiceJob",
     "resource": "arn:aws:batch:local:000000000000:service-job/abc", "outcome": "AccessDenied"},
    {"time": 1738332249000, "principal": "arn:aws:iam::000000000000:user/admin",
     "sourceAddress": "10.0.0.2", "action": "batch:UpdateServiceJob", "resource": "abc",
     "outcome": "Allowed", "changes": {"schedulingPriority": {"old": 1, "new": 50}}}
  ])");
  std::ostringstream out;
  PrintAuditRecords(records, out);
  EXPECT_EQ(out.str(),
            "TIME                  USER   SOURCE     ACTION                  RESOURCE         "
            "OUTCOME       CHANGES\n"
            "2025-01-31T14:05:09Z  alice  127.0.0.1  batch:UpdateServiceJob  service-job/abc  "
            "AccessDenied\n"
            "2025-01-31T14:04:09Z  admin  10.0.0.2   batch:UpdateServiceJob  abc              "
            "Allowed       schedulingPriority 1\u219250\n");
  std::ostringstream none;
  PrintAuditRecords(Json::array(), none);
  EXPECT_EQ(none.str(), "no audit records\n");
}

TEST(UserPath, EncodesTheName) {
  EXPECT_EQ(UserPath(""), "/allot/v1/users");
  EXPECT_EQ(UserPath("alice"), "/allot/v1/users/alice");
  EXPECT_EQ(UserPath("a+b@c", "/policy"), "/allot/v1/users/a%2Bb%40c/policy");
}

class PolicyFileTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    std::ofstream(path_) << text;
    return path_;
  }
  void TearDown() override { std::remove(path_.c_str()); }

  std::string Error(const std::string& path) {
    try {
      ReadPolicyFile(path);
    } catch (const CliError& e) {
      return e.what();
    }
    return "no error";
  }

 private:
  // One file per test and process: ctest runs the tests of this fixture in parallel processes,
  // and a shared name let one test read the file while another rewrote it.
  std::string path_ = ::testing::TempDir() + "identity_test_policy_" +
                      ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                      std::to_string(::getpid()) + ".json";
};

TEST_F(PolicyFileTest, ReadsAnObject) {
  const Json doc = ReadPolicyFile(
      Write(R"({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*"}]})"));
  EXPECT_EQ(doc["Statement"][0]["Effect"], "Allow");
}

TEST_F(PolicyFileTest, RefusesWhatIsNotAPolicyDocument) {
  EXPECT_NE(Error(Write("{\"Version\": ")).find("not JSON"), std::string::npos);
  EXPECT_NE(Error(Write("[1]")).find("is a JSON object"), std::string::npos);
  const std::string missing = ::testing::TempDir() + "no-such-policy.json";
  EXPECT_EQ(Error(missing), "policy file " + missing + ": cannot be read");
}

TEST(AccessKeyFromAnswer, ReadsTheKeyOrRefuses) {
  const Json answer = Json::parse(
      R"({"user": {"userName": "alice"},
          "accessKey": {"accessKeyId": "AKIAEXAMPLE", "secretAccessKey": "s3cr3t"}})");
  const api::Credentials creds = AccessKeyFromAnswer(answer);
  EXPECT_EQ(creds.access_key_id, "AKIAEXAMPLE");
  EXPECT_EQ(creds.secret_access_key, "s3cr3t");
  EXPECT_THROW(AccessKeyFromAnswer(Json::parse(R"({"user": {}})")), CliError);
  EXPECT_THROW(AccessKeyFromAnswer(Json::parse(R"({"accessKey": {"accessKeyId": "A"}})")),
               CliError);
}

TEST(PrintUsersTable, ColumnsAndNoUsers) {
  const Json users = Json::parse(R"([
    {"userName": "alice", "arn": "arn:aws:iam::000000000000:user/alice", "createdAt": null,
     "accessKeyIds": ["AKIA1", "AKIA2"], "hasPolicy": true},
    {"userName": "bob", "arn": "arn:aws:iam::000000000000:user/bob", "accessKeyIds": [],
     "hasPolicy": false}
  ])");
  std::ostringstream out;
  PrintUsersTable(users, out);
  EXPECT_EQ(out.str(),
            "NAME   ARN                                   ACCESS KEYS  CREATED  POLICY\n"
            "alice  arn:aws:iam::000000000000:user/alice  AKIA1,AKIA2  -        yes\n"
            "bob    arn:aws:iam::000000000000:user/bob    -            -        no\n");
  std::ostringstream none;
  PrintUsersTable(Json::array(), none);
  EXPECT_EQ(none.str(), "no users\n");
}

TEST(PrintSavedKey, NamesTheFileOnlyWhenItIsNotTheDefault) {
  SavedKey key{.user_name = "alice",
               .access_key_id = "AKIAEXAMPLE",
               .credentials_file = "/home/a/.aws/credentials",
               .default_file = "/home/a/.aws/credentials",
               .endpoint_url = "http://127.0.0.1:8742",
               .region = "local"};
  std::ostringstream out;
  PrintSavedKey(key, out);
  EXPECT_EQ(out.str(),
            "wrote access key AKIAEXAMPLE of user alice as profile [alice] of "
            "/home/a/.aws/credentials (mode 0600)\n"
            "use it with:\n"
            "  allot jobs --profile alice\n"
            "  AWS_PROFILE=alice aws batch describe-job-queues --endpoint-url "
            "http://127.0.0.1:8742 --region local\n");
  key.credentials_file = "/tmp/my creds";
  std::ostringstream other;
  PrintSavedKey(key, other);
  EXPECT_NE(other.str().find("  AWS_SHARED_CREDENTIALS_FILE='/tmp/my creds' allot jobs --profile "
                             "alice\n"),
            std::string::npos)
      << other.str();
}

TEST(SharedCredentialsPath, FromTheEnvironmentLikeTheAwsCli) {
  const char* old_file = std::getenv("AWS_SHARED_CREDENTIALS_FILE");
  const bool had_file = old_file != nullptr;
  const std::string saved = had_file ? old_file : "";
  const std::string home = std::getenv("HOME") == nullptr ? "" : std::getenv("HOME");
  ::setenv("AWS_SHARED_CREDENTIALS_FILE", "/x/creds", 1);
  EXPECT_EQ(SharedCredentialsPath(), "/x/creds");
  ::setenv("AWS_SHARED_CREDENTIALS_FILE", "~/creds", 1);
  EXPECT_EQ(SharedCredentialsPath(), home + "/creds");
  ::unsetenv("AWS_SHARED_CREDENTIALS_FILE");
  EXPECT_EQ(SharedCredentialsPath(), (home.empty() ? "." : home) + "/.aws/credentials");
  if (had_file) ::setenv("AWS_SHARED_CREDENTIALS_FILE", saved.c_str(), 1);
}

}  // namespace
}  // namespace allot::cli
