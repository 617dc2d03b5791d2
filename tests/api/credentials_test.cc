#include "api/credentials.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace allot::api {
namespace {

class CredentialsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "allot_credentials_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }

  static std::string Slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static void Spit(const std::string& path, const std::string& contents) {
    std::ofstream(path) << contents;
  }
  static unsigned Mode(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0);
    return st.st_mode & 0777U;
  }

  std::string dir_;
};

TEST(GenerateCredentials, ShapeLikeAws) {
  std::set<std::string> seen;
  for (int i = 0; i < 50; ++i) {
    Result<Credentials> creds = GenerateCredentials();
    ASSERT_TRUE(creds.ok());
    const std::string& id = creds->access_key_id;
    ASSERT_EQ(id.size(), 20u);
    EXPECT_EQ(id.substr(0, 4), "AKIA");
    for (char c : id.substr(4)) {
      EXPECT_TRUE((c >= 'A' && c <= 'Z') || (c >= '2' && c <= '7')) << id;
    }
    const std::string& secret = creds->secret_access_key;
    ASSERT_EQ(secret.size(), 40u);
    for (char c : secret) {
      EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/') << secret;
    }
    seen.insert(id);
    seen.insert(secret);
  }
  EXPECT_EQ(seen.size(), 100u);
}

TEST_F(CredentialsFileTest, WriteThenReadWithMode0600) {
  std::string path = dir_ + "/.aws/credentials";  // the folder does not exist yet
  Credentials creds{"AKIAABCDEFGHIJKLMNOP", "abc/def+ghi0123456789abcdefghijklmnopqrs"};
  ASSERT_TRUE(WriteSharedCredentialsFile(path, creds).ok());
  EXPECT_EQ(Mode(path), 0600u);
  EXPECT_EQ(Mode(dir_ + "/.aws"), 0700u);
  EXPECT_EQ(Slurp(path),
            "[default]\naws_access_key_id = AKIAABCDEFGHIJKLMNOP\n"
            "aws_secret_access_key = abc/def+ghi0123456789abcdefghijklmnopqrs\n");
  Result<Credentials> read = ReadSharedCredentialsFile(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, creds);
}

TEST_F(CredentialsFileTest, OverwritingKeepsOtherProfilesAndTightensMode) {
  std::string path = dir_ + "/credentials";
  Spit(path,
       "# my keys\n[default]\naws_access_key_id = OLD\naws_secret_access_key = OLDSECRET\n"
       "region = us-east-1\n\n[work]\naws_access_key_id=WORK\naws_secret_access_key=WORKSECRET\n");
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  Credentials fresh{"AKIANEW", "NEWSECRET"};
  ASSERT_TRUE(WriteSharedCredentialsFile(path, fresh, "default").ok());
  EXPECT_EQ(Mode(path), 0600u);
  EXPECT_EQ(Slurp(path),
            "# my keys\n[work]\naws_access_key_id=WORK\naws_secret_access_key=WORKSECRET\n\n"
            "[default]\naws_access_key_id = AKIANEW\naws_secret_access_key = NEWSECRET\n");
  EXPECT_EQ(*ReadSharedCredentialsFile(path, "default"), fresh);
  EXPECT_EQ(*ReadSharedCredentialsFile(path, "work"), (Credentials{"WORK", "WORKSECRET"}));

  ASSERT_TRUE(WriteSharedCredentialsFile(path, Credentials{"AKIAW2", "S2"}, "work").ok());
  EXPECT_EQ(*ReadSharedCredentialsFile(path, "work"), (Credentials{"AKIAW2", "S2"}));
  EXPECT_EQ(*ReadSharedCredentialsFile(path, "default"), fresh);
  // No temporary file is left behind.
  std::string cmd = "test $(ls -A '" + dir_ + "' | wc -l) -eq 1";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

TEST_F(CredentialsFileTest, ReadErrors) {
  EXPECT_EQ(ReadSharedCredentialsFile(dir_ + "/nope").status().code(), StatusCode::kNotFound);
  std::string path = dir_ + "/credentials";
  Spit(path, "[default]\naws_access_key_id = A\n");
  EXPECT_EQ(ReadSharedCredentialsFile(path, "other").status().code(), StatusCode::kNotFound);
  Result<Credentials> missing = ReadSharedCredentialsFile(path, "default");
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("aws_secret_access_key"), std::string::npos);
}

TEST_F(CredentialsFileTest, WriteRejectsBadInput) {
  std::string path = dir_ + "/credentials";
  EXPECT_EQ(WriteSharedCredentialsFile(path, Credentials{"A", "B"}, "bad]name").code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(WriteSharedCredentialsFile(path, Credentials{"A", "B\nC"}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(WriteSharedCredentialsFile(path, Credentials{"", "B"}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(WriteSharedCredentialsFile("", Credentials{"A", "B"}).code(),
            StatusCode::kInvalidArgument);
}

TEST(ParseSharedCredentials, IniDetails) {
  std::string contents =
      "; comment\r\n"
      "[ other ]\n"
      "aws_access_key_id = X\n"
      "aws_secret_access_key = Y\n"
      "[default]\r\n"
      "# comment = not a key\n"
      "AWS_Access_Key_ID : AKIA1\r\n"
      "aws_secret_access_key=se=cret/+\n"
      "aws_session_token = ignored\n";
  Result<Credentials> creds = ParseSharedCredentials(contents, "default");
  ASSERT_TRUE(creds.ok()) << creds.status().ToString();
  EXPECT_EQ(*creds, (Credentials{"AKIA1", "se=cret/+"}));
  EXPECT_EQ(*ParseSharedCredentials(contents, "other"), (Credentials{"X", "Y"}));
}

}  // namespace
}  // namespace allot::api
