// Walking a tree someone else controls (env/tree_walk.h): links never followed, even one swapped
// in while the walk runs; the depth capped.

#include "env/tree_walk.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <system_error>
#include <vector>

namespace allot::env {
namespace {

namespace fs = std::filesystem;

class TreeWalkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "allot-walk-test-XXXXXX").string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    ASSERT_NE(::mkdtemp(buffer.data()), nullptr);
    dir_ = buffer.data();
    fs::create_directories(dir_ + "/tree/d");
    fs::create_directories(dir_ + "/outside");
    std::ofstream(dir_ + "/tree/d/f") << "f";
    std::ofstream(dir_ + "/outside/secret") << "s";
  }
  void TearDown() override {
    std::error_code error;
    fs::remove_all(dir_, error);
  }
  int Top() const { return OpenTreeTop((dir_ + "/tree").c_str()); }

  std::string dir_;
};

TEST_F(TreeWalkTest, VisitsEveryEntryWithItsDepthAndALinkAsALink) {
  fs::create_directory_symlink(dir_ + "/outside", dir_ + "/tree/link");
  std::set<std::string> seen;
  const WalkEnd end = WalkTree(Top(), 8, [&](const WalkedEntry& e) {
    seen.insert(std::string(e.name) + "@" + std::to_string(e.depth) +
                (S_ISLNK(e.st.st_mode) ? " link" : ""));
    return true;
  });
  EXPECT_EQ(end, WalkEnd::kComplete);
  EXPECT_EQ(seen, (std::set<std::string>{"d@0", "f@1", "link@0 link"}));
}

// The visitor sees a directory before the walk enters it; a hostile owner may swap it for a link
// right then. The walk does not follow it: nothing of where it leads is visited.
TEST_F(TreeWalkTest, ADirectorySwappedForALinkBeforeItIsEnteredIsNotFollowed) {
  std::vector<std::string> seen;
  int error = 0;
  const WalkEnd end = WalkTree(
      Top(), 8,
      [&](const WalkedEntry& e) {
        seen.emplace_back(e.name);
        if (std::string(e.name) == "d") {
          fs::rename(dir_ + "/tree/d", dir_ + "/tree/d.moved");
          fs::create_directory_symlink(dir_ + "/outside", dir_ + "/tree/d");
        }
        return true;
      },
      &error);
  EXPECT_EQ(end, WalkEnd::kUnreadable);
  // What the walk met: a link where the directory was (O_DIRECTORY | O_NOFOLLOW on a link).
  EXPECT_TRUE(error == ENOTDIR || error == ELOOP) << error;
  for (const std::string& name : seen) EXPECT_NE(name, "secret");
}

// A chain of directories deeper than the cap: the walk stops there, holding one directory per
// level, and says so.
TEST_F(TreeWalkTest, ATreeDeeperThanTheCapEndsTheWalk) {
  std::string path = dir_ + "/tree/d";
  for (int i = 0; i < 40; ++i) path += "/x";
  fs::create_directories(path);
  int deepest = 0;
  const WalkEnd end = WalkTree(Top(), 16, [&](const WalkedEntry& e) {
    deepest = std::max(deepest, e.depth);
    return true;
  });
  EXPECT_EQ(end, WalkEnd::kTooDeep);
  EXPECT_EQ(deepest, 16);
  EXPECT_EQ(WalkTree(Top(), 64, [](const WalkedEntry&) { return true; }), WalkEnd::kComplete);
}

TEST_F(TreeWalkTest, TheVisitorStopsTheWalkAndTheTopIsNeverALink) {
  int visited = 0;
  EXPECT_EQ(WalkTree(Top(), 8, [&](const WalkedEntry&) { return ++visited < 1; }),
            WalkEnd::kStopped);
  EXPECT_EQ(visited, 1);
  fs::create_directory_symlink(dir_ + "/outside", dir_ + "/top-link");
  EXPECT_LT(OpenTreeTop((dir_ + "/top-link").c_str()), 0);
}

}  // namespace
}  // namespace allot::env
