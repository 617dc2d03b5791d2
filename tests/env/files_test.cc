// Whole-file reads and atomic writes (env/files.h).

#include "env/files.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
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

// The store's reserve takes its bytes on disk (not a sparse file), leaves no temporary behind,
// and releasing it says whether there was one.
TEST_F(FilesTest, ASpaceReserveHoldsItsBytesOnDiskUntilReleased) {
  const std::string path = dir_ + "/store-reserve";
  EXPECT_FALSE(HasSpaceReserve(path));
  ASSERT_TRUE(CreateSpaceReserve(path, 1 << 20).ok());
  EXPECT_TRUE(HasSpaceReserve(path));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 1 << 20);
  EXPECT_GE(st.st_blocks * 512, 1 << 20);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(Names(), std::vector<std::string>{"store-reserve"});
  Result<bool> released = ReleaseSpaceReserve(path);
  ASSERT_TRUE(released.ok()) << released.status().ToString();
  EXPECT_TRUE(*released);
  EXPECT_FALSE(HasSpaceReserve(path));
  released = ReleaseSpaceReserve(path);
  ASSERT_TRUE(released.ok()) << released.status().ToString();
  EXPECT_FALSE(*released);
  // Where it cannot be made, nothing is left.
  EXPECT_FALSE(CreateSpaceReserve(dir_ + "/missing/store-reserve", 1 << 20).ok());
  EXPECT_TRUE(Names().empty());
}

TEST_F(FilesTest, ReadingAMissingFileIsNotFound) {
  EXPECT_EQ(ReadFile(dir_ + "/none").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadFile(dir_).status().code(), StatusCode::kInternal);  // a directory
}

// A sparse file's copy is sparse too: its data where the original has data, holes elsewhere, the
// same length. So copying a checkpoint of holes costs the disk nothing.
TEST_F(FilesTest, ACopyKeepsTheHolesOfASparseFile) {
  const std::string from = dir_ + "/sparse";
  const int fd = ::open(from.c_str(), O_WRONLY | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "head", 4, 0), 4);
  ASSERT_EQ(::pwrite(fd, "tail", 4, 64 << 20), 4);        // 64 MiB in: a hole between
  ASSERT_EQ(::ftruncate(fd, (64 << 20) + (8 << 20)), 0);  // and one at the end
  ::close(fd);
  const std::string to = dir_ + "/copy";
  ASSERT_TRUE(CopyFileData(from, to).ok());
  struct stat st {};
  ASSERT_EQ(::stat(to.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, (64 << 20) + (8 << 20));
  EXPECT_LT(st.st_blocks * 512, 1 << 20) << "the holes were written out";
  EXPECT_EQ(st.st_mode & 07777, 0600U);
  const int in = ::open(to.c_str(), O_RDONLY);
  char got[4] = {};
  EXPECT_EQ(::pread(in, got, 4, 64 << 20), 4);
  EXPECT_EQ(std::string(got, 4), "tail");
  EXPECT_EQ(::pread(in, got, 4, 0), 4);
  EXPECT_EQ(std::string(got, 4), "head");
  ::close(in);
  // An existing file is not overwritten, and a link is not followed.
  EXPECT_FALSE(CopyFileData(from, to).ok());
  ASSERT_EQ(::symlink(from.c_str(), (dir_ + "/link").c_str()), 0);
  EXPECT_FALSE(CopyFileData(dir_ + "/link", dir_ + "/copy2").ok());
  EXPECT_FALSE(fs::exists(dir_ + "/copy2"));
}

// A lease another process holds on the file fails the copy at once: opening it would otherwise
// wait for the lease's break time (45 s by default), for each file of a checkpoint location.
TEST_F(FilesTest, ACopyDoesNotWaitOnALease) {
  const std::string from = dir_ + "/leased";
  { std::ofstream(from) << "weights"; }
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t holder = ::fork();
  if (holder == 0) {
    const int fd = ::open(from.c_str(), O_RDWR);
    const char ok = fd >= 0 && ::fcntl(fd, F_SETLEASE, F_WRLCK) == 0 ? 'y' : 'n';
    [[maybe_unused]] const ssize_t n = ::write(ready[1], &ok, 1);
    ::pause();
    ::_exit(0);
  }
  char ok = 0;
  ASSERT_EQ(::read(ready[0], &ok, 1), 1);
  if (ok != 'y') {
    ::kill(holder, SIGKILL);
    ::waitpid(holder, nullptr, 0);
    GTEST_SKIP() << "no lease could be taken here";
  }
  // Had it waited, the lease would have been broken, and the copy succeeded.
  const Status copied = CopyFileData(from, dir_ + "/copy");
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
  EXPECT_FALSE(copied.ok());
  EXPECT_NE(copied.message().find("another process holds a lease on it"), std::string::npos)
      << copied.message();
  EXPECT_FALSE(fs::exists(dir_ + "/copy"));
}

}  // namespace
}  // namespace allot::env
