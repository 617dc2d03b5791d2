#include "api/secret_box.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace allot::api {
namespace {

class SecretBoxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "allot_secret_box_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  std::string dir_;
};

TEST_F(SecretBoxTest, SealedSecretsOpenOnlyUnderTheirKeyAndContext) {
  Result<SecretBox> box = SecretBox::OpenOrCreate(Path("master.key"));
  ASSERT_TRUE(box.ok()) << box.status().ToString();
  Result<std::string> sealed = box->Seal("wJalrXUtnFEMI/K7MDENG", "AKIAEXAMPLE");
  ASSERT_TRUE(sealed.ok());
  EXPECT_EQ(sealed->find("wJalr"), std::string::npos);
  EXPECT_EQ(sealed->rfind("v1:", 0), 0u);
  EXPECT_EQ(box->Open(*sealed, "AKIAEXAMPLE").value(), "wJalrXUtnFEMI/K7MDENG");
  // Another record's key, a flipped character, another master key: none opens.
  EXPECT_EQ(box->Open(*sealed, "AKIAOTHER").status().code(), StatusCode::kInvalidArgument);
  std::string altered = *sealed;
  // A character inside the text (the last ones may be padding bits base64 ignores).
  altered[10] = altered[10] == 'A' ? 'z' : 'A';
  EXPECT_FALSE(box->Open(altered, "AKIAEXAMPLE").ok());
  EXPECT_FALSE(box->Open("v1:%%%%", "AKIAEXAMPLE").ok());
  EXPECT_FALSE(box->Open("plain-secret", "AKIAEXAMPLE").ok());
  Result<SecretBox> other = SecretBox::OpenOrCreate(Path("other.key"));
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->Open(*sealed, "AKIAEXAMPLE").ok());
  // Two seals of one secret differ (a fresh nonce each).
  EXPECT_NE(box->Seal("s", "k").value(), box->Seal("s", "k").value());
}

TEST_F(SecretBoxTest, TheKeyFileIsMadeOnceWithMode0600AndReadAgain) {
  Result<SecretBox> first = SecretBox::OpenOrCreate(Path("master.key"));
  ASSERT_TRUE(first.ok());
  struct stat st {};
  ASSERT_EQ(::stat(Path("master.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string sealed = first->Seal("secret", "key").value();
  Result<SecretBox> again = SecretBox::OpenOrCreate(Path("master.key"));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->Open(sealed, "key").value(), "secret");
}

TEST_F(SecretBoxTest, ABadKeyFileIsRefusedNamingIt) {
  std::ofstream(Path("short.key")) << "abcd\n";
  ::chmod(Path("short.key").c_str(), 0600);
  Result<SecretBox> s = SecretBox::OpenOrCreate(Path("short.key"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("short.key"), std::string::npos);
  EXPECT_NE(s.status().message().find("64 hex digits"), std::string::npos);
  std::ofstream(Path("open.key")) << std::string(64, 'a') << "\n";
  ::chmod(Path("open.key").c_str(), 0644);
  Result<SecretBox> o = SecretBox::OpenOrCreate(Path("open.key"));
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("0600"), std::string::npos);
}

}  // namespace
}  // namespace allot::api
