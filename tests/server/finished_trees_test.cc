// Which finished jobs' trees go first when the data directory runs short (finished_trees.h).

#include "server/finished_trees.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace allot::server {
namespace {

std::vector<model::JobId> Seqs(const std::vector<FinishedTrees::Tree>& trees) {
  std::vector<model::JobId> seqs;
  for (const FinishedTrees::Tree& t : trees) seqs.push_back(t.seq);
  return seqs;
}

// Team a filled the disk; team b holds little. a's oldest trees go, and b's stay until a holds
// less than b.
TEST(FinishedTreesTest, TheShareHoldingTheMostLosesItsOldestFirst) {
  FinishedTrees trees;
  trees.Add("q/a", 30, 3, 100);
  trees.Add("q/a", 10, 1, 100);
  trees.Add("q/a", 20, 2, 100);
  trees.Add("q/b", 5, 9, 60);
  EXPECT_EQ(trees.TotalBytes(), 360);
  EXPECT_EQ(trees.Bytes("q/a"), 300);

  EXPECT_EQ(Seqs(trees.Pick(150)), (std::vector<model::JobId>{1, 2}));
  // a: 300 -> 200 -> 100, then b (60) and a (100): a again, then b.
  EXPECT_EQ(Seqs(trees.Pick(1000)), (std::vector<model::JobId>{1, 2, 3, 9}));
  EXPECT_EQ(Seqs(trees.Pick(0)), std::vector<model::JobId>{});
  EXPECT_EQ(trees.Pick(1).front().share, "q/a");
}

TEST(FinishedTreesTest, TiesGoByEndTimeSeqAndShareName) {
  FinishedTrees trees;
  trees.Add("q/b", 10, 7, 50);
  trees.Add("q/a", 10, 8, 50);
  trees.Add("q/a", 10, 4, 0);
  // a and b hold 50 each: a by name; within a, the same end time goes by seq.
  EXPECT_EQ(Seqs(trees.Pick(100)), (std::vector<model::JobId>{4, 8, 7}));
}

TEST(FinishedTreesTest, ForgetAndAddAgainKeepTheTotals) {
  FinishedTrees trees;
  trees.Add("q/a", 1, 1, 10);
  trees.Add("q/a", 2, 2, 20);
  trees.Add("q/a", 1, 1, 15);  // measured again
  EXPECT_EQ(trees.Bytes("q/a"), 35);
  trees.Forget(1);
  trees.Forget(1);
  trees.Forget(42);
  EXPECT_EQ(trees.Bytes("q/a"), 20);
  EXPECT_EQ(trees.size(), 1u);
  trees.Forget(2);
  EXPECT_EQ(trees.TotalBytes(), 0);
  EXPECT_EQ(trees.Bytes("q/a"), 0);
  EXPECT_TRUE(trees.Pick(1).empty());
}

// A team whose running jobs fill the disk holds the most: its finished trees go first, even
// when they are small; another share's only after. A tree whose removal failed is passed over,
// and still counts as held.
TEST(FinishedTreesTest, RunningJobsCountTowardWhatAShareHolds) {
  FinishedTrees trees;
  trees.Add("q/a", 30, 1, 10);
  trees.Add("q/b", 10, 2, 50);
  trees.Add("q/b", 20, 3, 50);
  EXPECT_EQ(Seqs(trees.Pick(60)), (std::vector<model::JobId>{2, 3}));
  const std::map<std::string, std::int64_t> live = {{"q/a", 500}, {"q/c", 1000}};
  // c holds the most but has nothing finished to give; a (510) before b (100).
  EXPECT_EQ(Seqs(trees.Pick(60, live)), (std::vector<model::JobId>{1, 2}));
  EXPECT_EQ(Seqs(trees.Pick(60, live, {1})), (std::vector<model::JobId>{2, 3}));
  EXPECT_EQ(Seqs(trees.Pick(60, {}, {2})), (std::vector<model::JobId>{3, 1}));
}

}  // namespace
}  // namespace allot::server

namespace allot::server {
namespace {

// Eviction picks within the share holding the most, finished trees included: here b (2 live +
// 5 finished) over a (6 live), so b's largest live tree goes although a's single tree is larger.
TEST(PickEvictionTest, TheLargestLiveTreeOfTheShareHoldingTheMost) {
  FinishedTrees finished;
  finished.Add("q/b", 100, 1, 5);
  const std::vector<LiveTree> live = {{10, "q/a", 6}, {11, "q/b", 1}, {12, "q/b", 2}};
  const std::optional<Eviction> pick = PickEviction(live, finished);
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(pick->tree.seq, 12U);
  EXPECT_EQ(pick->tree.share, "q/b");
  EXPECT_EQ(pick->tree.bytes, 2);
  EXPECT_EQ(pick->share_bytes, 8);  // b's 1 + 2 live and 5 finished
  // Without b's finished tree, a holds the most.
  EXPECT_EQ(PickEviction(live, FinishedTrees())->tree.seq, 10U);
}

TEST(PickEvictionTest, TiesGoToTheShareNameThenTheNewestJob) {
  const std::vector<LiveTree> live = {{20, "q/b", 3}, {21, "q/a", 1}, {22, "q/a", 2},
                                      {23, "q/a", 0}, {24, "q/b", 0}, {25, "q/c", 2},
                                      {26, "q/c", 1}, {27, "q/a", 0}};
  // a, b and c each hold 3: a by name; its largest tree is 22.
  EXPECT_EQ(PickEviction(live, FinishedTrees())->tree.seq, 22U);
  const std::vector<LiveTree> even = {{30, "q/a", 4}, {31, "q/a", 4}, {29, "q/a", 4}};
  EXPECT_EQ(PickEviction(even, FinishedTrees())->tree.seq, 31U);
}

TEST(PickEvictionTest, NothingWhenNoLiveTreeHoldsAnything) {
  FinishedTrees finished;
  finished.Add("q/a", 100, 1, 50);
  EXPECT_FALSE(PickEviction({}, finished).has_value());
  EXPECT_FALSE(PickEviction({{5, "q/a", 0}}, finished).has_value());
}

// What fills the disk past the mark is not the jobs' files (another program's, say): no job is
// terminated for it, since that would free nothing.
TEST(PickEvictionTest, NothingWhenTheLiveTreesHoldLessThanTheExcess) {
  const std::vector<LiveTree> live = {{5, "q/a", 3}, {6, "q/b", 2}};
  EXPECT_FALSE(PickEviction(live, FinishedTrees(), 6).has_value());
  EXPECT_EQ(PickEviction(live, FinishedTrees(), 5)->tree.seq, 5U);
}

}  // namespace
}  // namespace allot::server

namespace allot::server {
namespace {

// A job already under a stop (a user's termination, a preemption) counts for its share but is
// not picked again: the next largest of that share is.
TEST(PickEvictionTest, AJobUnderAStopIsNotPickedAgain) {
  std::vector<LiveTree> live = {{5, "q/a", 9}, {6, "q/a", 2}, {7, "q/b", 10}};
  live[0].stopping = true;
  EXPECT_EQ(PickEviction(live, FinishedTrees())->tree.seq, 6U);  // a holds 11, b 10
  live[1].stopping = true;
  EXPECT_FALSE(PickEviction(live, FinishedTrees()).has_value());
}

}  // namespace
}  // namespace allot::server
