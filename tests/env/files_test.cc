// Whole-file reads and atomic writes (env/files.h).

#include "env/files.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace allot::env {
namespace {

namespace fs = std::filesystem;

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "allot-env-test-XXXXXX").string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    ASSERT_NE(::mkdtemp(buffer.data()), nullptr);
    dir_ = buffer.data();
  }
  void TearDown() override {
    std::error_code error;
    fs::remove_all(dir_, error);
  }
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    return names;
  }

  std::string dir_;
};

TEST_F(FilesTest, WritesReplacesAndReadsBack) {
  const std::string path = dir_ + "/a.json";
  ASSERT_TRUE(WriteFileAtomically(path, "first").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "second\n").ok());
  const Result<std::string> text = ReadFile(path);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "second\n");
  EXPECT_EQ(Names(), std::vector<std::string>{"a.json"});  // no temporary file left
}

TEST_F(FilesTest, TheModeIsTheOneAskedFor) {
  const std::string path = dir_ + "/secret";
  ASSERT_TRUE(WriteFileAtomically(path, "key", 0600).ok());
  EXPECT_EQ(fs::status(path).permissions(), fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/plain", "x").ok());
  EXPECT_EQ(fs::status(dir_ + "/plain").permissions(),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                fs::perms::others_read);
}

TEST_F(FilesTest, AFailedWriteLeavesTheOldFileAndNoTemporary) {
  // A non-empty directory where the file should go: the rename fails.
  const std::string path = dir_ + "/taken";
  ASSERT_TRUE(fs::create_directories(path + "/inside"));
  const Status status = WriteFileAtomically(path, "text");
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_NE(status.message().find(path), std::string::npos) << status.message();
  EXPECT_EQ(Names(), std::vector<std::string>{"taken"});
  EXPECT_EQ(WriteFileAtomically(dir_ + "/no/such/dir/file", "x").code(), StatusCode::kInternal);
}

TEST_F(FilesTest, ReadingAMissingFileIsNotFound) {
  EXPECT_EQ(ReadFile(dir_ + "/none").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadFile(dir_).status().code(), StatusCode::kInternal);  // a directory
}

}  // namespace
}  // namespace allot::env
