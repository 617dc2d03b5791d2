// A thread acting as a job's user (env/acting_as.h): the kernel checks paths as that user's, on
// that thread only, until the identity is given back.

#include "env/acting_as.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <future>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace allot::env {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kJobUid = 200123;

// Whether CAP_DAC_OVERRIDE or CAP_DAC_READ_SEARCH is in this thread's effective set.
bool DacCapabilitiesEffective() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return true;
  const auto bit = [](int cap) { return 1U << static_cast<unsigned>(cap); };
  return (data[0].effective & (bit(CAP_DAC_OVERRIDE) | bit(CAP_DAC_READ_SEARCH))) != 0;
}

// <scratch>/closed (root's, 0700) holding open/ (0755); <scratch>/group (root's group, 0770)
// holding open/ too. Each errno of opening `path` is that of the calling thread's identity.
class ActingAsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: only root takes another user's identity";
    std::string pattern = (fs::temp_directory_path() / "allot-acting-as-XXXXXX").string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    ASSERT_NE(::mkdtemp(buffer.data()), nullptr);
    dir_ = buffer.data();
    fs::permissions(dir_, fs::perms::owner_all | fs::perms::others_exec);
    for (const char* top : {"closed", "group"}) fs::create_directories(dir_ + "/" + top + "/open");
    fs::permissions(dir_ + "/closed", fs::perms::owner_all);
    fs::permissions(dir_ + "/group", fs::perms::owner_all | fs::perms::group_all);
    ASSERT_EQ(::chown((dir_ + "/group").c_str(), 0, 0), 0);
  }
  void TearDown() override {
    std::error_code error;
    if (!dir_.empty()) fs::remove_all(dir_, error);
  }
  static int OpenErrno(const std::string& path) {
    const int fd = ::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno;
    ::close(fd);
    return 0;
  }

  std::string dir_;
};

TEST_F(ActingAsTest, PathsAreCheckedAsTheUserWithNoneOfRootsGroupsUntilItEnds) {
  {
    const ActingAs as(kJobUid, kJobUid);
    ASSERT_TRUE(as.acting());
    EXPECT_EQ(OpenErrno(dir_ + "/closed/open"), EACCES);
    EXPECT_EQ(OpenErrno(dir_ + "/group/open"), EACCES) << "root's groups went with its uid";
    EXPECT_EQ(OpenErrno(dir_), 0);
  }
  EXPECT_EQ(OpenErrno(dir_ + "/closed/open"), 0) << "root again";
  EXPECT_EQ(OpenErrno(dir_ + "/group/open"), 0);
  EXPECT_EQ(::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1) << "the process stays dumpable";
}

// Another thread of the process (the server's other requests) keeps root's identity meanwhile.
// (A thread started while acting would inherit the identity: the thread must be there before.)
TEST_F(ActingAsTest, OnlyTheCallingThreadActsAsTheUser) {
  std::promise<void> acting;
  std::promise<int> other;
  std::thread thread([&] {
    acting.get_future().wait();
    other.set_value(OpenErrno(dir_ + "/closed/open"));
  });
  const ActingAs as(kJobUid, kJobUid);
  EXPECT_TRUE(as.acting());
  acting.set_value();
  EXPECT_EQ(other.get_future().get(), 0);
  thread.join();
  EXPECT_EQ(OpenErrno(dir_ + "/closed/open"), EACCES);
}

// Root's supplementary groups do not come along: a directory of a group root is in (here, a
// group given to this thread alone) is closed to the user, as it would be to the job.
TEST_F(ActingAsTest, RootsSupplementaryGroupsAreDropped) {
  constexpr gid_t kGroup = 4242;
  ASSERT_EQ(::chown((dir_ + "/group").c_str(), 0, kGroup), 0);
  int with_group = -1;
  int as_user = -1;
  std::thread([&] {
    const gid_t groups[] = {kGroup};
    if (::syscall(SYS_setgroups, 1, groups) != 0) return;
    {
      const ActingAs as(kJobUid, kJobUid);
      if (!as.acting()) return;
      as_user = OpenErrno(dir_ + "/group/open");
    }
    std::vector<gid_t> back(4);
    const int n = ::getgroups(static_cast<int>(back.size()), back.data());
    with_group = n == 1 && back[0] == kGroup ? 0 : -2;  // the thread's groups are given back
  }).join();
  EXPECT_EQ(as_user, EACCES);
  EXPECT_EQ(with_group, 0);
}

// The capabilities that pass permission checks are not effective while acting, even where the
// kernel would keep them (SECBIT_NO_SETUID_FIXUP), and are effective again afterwards.
TEST_F(ActingAsTest, NoCapabilityPassesAPermissionCheckWhileActing) {
  {
    const ActingAs as(kJobUid, kJobUid);
    ASSERT_TRUE(as.acting());
    EXPECT_FALSE(DacCapabilitiesEffective());
  }
  EXPECT_TRUE(DacCapabilitiesEffective());
}

}  // namespace
}  // namespace allot::env
