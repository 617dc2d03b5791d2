// Removing a tree someone else controls (env/remove_tree.h): links removed, never followed; any
// depth; a directory whose rights were taken removed all the same.

#include "env/remove_tree.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "env/tree_walk.h"

namespace allot::env {
namespace {

namespace fs = std::filesystem;

class RemoveTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "allot-remove-test-XXXXXX").string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    ASSERT_NE(::mkdtemp(buffer.data()), nullptr);
    dir_ = buffer.data();
    fs::create_directories(dir_ + "/outside/sub");
    std::ofstream(dir_ + "/outside/secret") << "s";
    std::ofstream(dir_ + "/outside/sub/kept") << "k";
    parent_fd_ = OpenTreeTop(dir_.c_str());
    ASSERT_GE(parent_fd_, 0);
  }
  void TearDown() override {
    ::close(parent_fd_);
    std::error_code error;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, error);
    fs::remove_all(dir_, error);
  }
  void ExpectOutsideUntouched() const {
    EXPECT_TRUE(fs::exists(dir_ + "/outside/secret"));
    EXPECT_TRUE(fs::exists(dir_ + "/outside/sub/kept"));
  }

  std::string dir_;
  int parent_fd_ = -1;
};

TEST_F(RemoveTreeTest, RemovesLinksAndNeverWhatTheyPointAt) {
  const std::string tree = dir_ + "/tree";
  fs::create_directories(tree + "/a/b");
  std::ofstream(tree + "/a/b/f") << "f";
  fs::create_directory_symlink(dir_ + "/outside", tree + "/a/to-outside-dir");
  fs::create_symlink(dir_ + "/outside/secret", tree + "/to-secret");
  fs::create_hard_link(dir_ + "/outside/secret", tree + "/a/hard-secret");
  ASSERT_EQ(::mkfifo((tree + "/a/fifo").c_str(), 0600), 0);

  Result<RemovedTree> removed = RemoveTree(parent_fd_, "tree");
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_EQ(removed->entries, 8);  // tree, a, b, f, two links, the hard link, the FIFO
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree)));
  ExpectOutsideUntouched();
}

TEST_F(RemoveTreeTest, ATopThatIsALinkIsRemovedAsALink) {
  fs::create_directory_symlink(dir_ + "/outside", dir_ + "/tree");
  Result<RemovedTree> removed = RemoveTree(parent_fd_, "tree");
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_EQ(removed->entries, 1);
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ + "/tree")));
  ExpectOutsideUntouched();
}

TEST_F(RemoveTreeTest, NothingThereIsNothingToRemove) {
  Result<RemovedTree> removed = RemoveTree(parent_fd_, "missing");
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_EQ(removed->entries, 0);
}

// A chain far deeper than the directories it keeps open, each level with a file and a link out.
TEST_F(RemoveTreeTest, AChainOfAnyDepthIsRemoved) {
  constexpr int kDepth = 300;
  std::string path = dir_ + "/tree";
  for (int i = 0; i < kDepth; ++i) {
    ASSERT_EQ(::mkdir(path.c_str(), 0755), 0) << i;
    std::ofstream(path + "/f") << i;
    fs::create_directory_symlink(dir_ + "/outside", path + "/out");
    path += "/d";
  }
  // In a child with 64 descriptors: the removal must not take one per level.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const rlimit few{64, 64};
    if (::setrlimit(RLIMIT_NOFILE, &few) != 0) ::_exit(2);
    Result<RemovedTree> removed = RemoveTree(parent_fd_, "tree");
    ::_exit(removed.ok() && removed->entries == 3 * kDepth ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ + "/tree")));
  ExpectOutsideUntouched();
}

// A job that took every right off its directories: a server running as the job's own user
// (no sandbox) could otherwise neither read nor empty them. As root, the removal runs in a child
// as nobody, over nobody's tree, since root would pass every right.
TEST_F(RemoveTreeTest, DirectoriesWithoutRightsAreRemoved) {
  const bool as_nobody = ::geteuid() == 0;
  constexpr uid_t kNobody = 65534;
  const std::string home = dir_ + "/home";
  const std::string tree = home + "/tree";
  fs::create_directories(tree + "/locked/inner");
  std::ofstream(tree + "/locked/inner/f") << "f";
  std::ofstream(tree + "/locked/g") << "g";
  if (as_nobody) {
    ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
    for (const std::string& p : {home, tree, tree + "/locked", tree + "/locked/inner",
                                 tree + "/locked/inner/f", tree + "/locked/g"}) {
      ASSERT_EQ(::chown(p.c_str(), kNobody, kNobody), 0) << p;
    }
  }
  ASSERT_EQ(::chmod((tree + "/locked/inner").c_str(), 0), 0);
  ASSERT_EQ(::chmod((tree + "/locked").c_str(), 0500), 0);
  ASSERT_EQ(::chmod(tree.c_str(), 0), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (as_nobody && (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0)) ::_exit(2);
    const int home_fd = OpenTreeTop(home.c_str());
    Result<RemovedTree> removed = RemoveTree(home_fd, "tree");
    ::_exit(removed.ok() && removed->entries == 5 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree)));
}

// Another file system mounted inside the tree (an admin's, or one left behind) is not emptied:
// the removal stops there and says so.
TEST_F(RemoveTreeTest, AMountPointInsideTheTreeIsNotEntered) {
  const std::string tree = dir_ + "/tree";
  fs::create_directories(tree + "/mnt");
  std::ofstream(tree + "/f") << "f";
  if (std::system(("mount -t tmpfs -o size=1m tmpfs '" + tree + "/mnt' 2>/dev/null").c_str()) !=
      0) {
    GTEST_SKIP() << "cannot mount a tmpfs here";
  }
  std::ofstream(tree + "/mnt/keep") << "k";
  Result<RemovedTree> removed = RemoveTree(parent_fd_, "tree");
  EXPECT_FALSE(removed.ok());
  EXPECT_NE(removed.status().message().find("mount point"), std::string::npos)
      << removed.status().ToString();
  EXPECT_TRUE(fs::exists(tree + "/mnt/keep"));
  EXPECT_EQ(std::system(("umount '" + tree + "/mnt'").c_str()), 0);
}

// A btrfs subvolume has a device number of its own but is on the same mount, and any user may
// make one in a directory of theirs: it is emptied and removed as a directory. Told apart from a
// mount point by st_dev alone, it pinned its tree's disk for good (review of 08614f7).
TEST_F(RemoveTreeTest, ABtrfsSubvolumeInsideTheTreeIsRemoved) {
  const std::string image = dir_ + "/btrfs.img";
  const std::string mnt = dir_ + "/btrfs";
  fs::create_directories(mnt);
  const std::string make = "truncate -s 128M '" + image + "' && mkfs.btrfs -q '" + image +
                           "' >/dev/null 2>&1 && mount -o loop '" + image + "' '" + mnt +
                           "' 2>/dev/null";
  if (std::system(make.c_str()) != 0) GTEST_SKIP() << "cannot mount a btrfs image here";
  const std::string tree = mnt + "/tree";
  fs::create_directories(tree);
  const bool made = std::system(("btrfs -q subvolume create '" + tree +
                                 "/sub' >/dev/null && "
                                 "head -c 1048576 /dev/zero > '" +
                                 tree + "/sub/data'")
                                    .c_str()) == 0;
  if (made) {
    const int top = OpenTreeTop(mnt.c_str());
    Result<RemovedTree> removed = RemoveTree(top, "tree");
    ::close(top);
    EXPECT_TRUE(removed.ok()) << removed.status().ToString();
    EXPECT_FALSE(fs::exists(fs::symlink_status(tree)));
  }
  EXPECT_EQ(std::system(("umount '" + mnt + "'").c_str()), 0);
  if (!made) GTEST_SKIP() << "cannot make a btrfs subvolume here";
}

TEST_F(RemoveTreeTest, AFileIsRemovedAlone) {
  std::ofstream(dir_ + "/file") << "x";
  Result<RemovedTree> removed = RemoveTree(parent_fd_, "file");
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_EQ(removed->entries, 1);
  ExpectOutsideUntouched();
}

}  // namespace
}  // namespace allot::env
