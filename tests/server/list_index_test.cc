// The list index: each order holds exactly the jobs its filter may return, newest last, and the
// name order finds exact names and prefixes ignoring ASCII case.

#include "server/list_index.h"

#include <gtest/gtest.h>

#include <deque>
#include <vector>

namespace allot::server {
namespace {

class ListIndexTest : public ::testing::Test {
 protected:
  JobRecord& Add(const std::string& name, Timestamp created, std::string_view share = "s1",
                 model::JobStatus status = model::JobStatus::kRunnable) {
    JobRecord& j = jobs_.emplace_back();
    j.seq = jobs_.size();
    j.name = name;
    j.queue = "q";
    j.share = share;
    j.status = status;
    j.created_at = created;
    index_.Add(j);
    return j;
  }

  std::vector<std::string> Names(bool prefix, std::string_view text) {
    std::vector<std::string> out;
    auto [first, last] = index_.ByName("q", text, prefix);
    for (auto it = first; it != last; ++it) out.emplace_back(it->name);
    return out;
  }

  static std::vector<model::JobId> Seqs(const ListIndex::Set& set) {
    std::vector<model::JobId> out;
    for (const auto& [created, seq] : set) out.push_back(seq);
    return out;
  }

  std::deque<JobRecord> jobs_;  // a deque: the index points at the records' names
  ListIndex index_;
};

TEST_F(ListIndexTest, ExactNamesAndPrefixesIgnoreAsciiCase) {
  Add("Train-A", 1);
  Add("train-a", 2);
  Add("train-b", 3);
  Add("train", 4);
  Add("trainz", 5);
  Add("other", 6);
  Add("tr@in", 7);
  Add("tr[in", 8);
  EXPECT_EQ(Names(false, "TRAIN-A"), (std::vector<std::string>{"Train-A", "train-a"}));
  EXPECT_EQ(Names(false, "train"), (std::vector<std::string>{"train"}));
  EXPECT_EQ(Names(true, "Train-"), (std::vector<std::string>{"Train-A", "train-a", "train-b"}));
  EXPECT_EQ(Names(true, "train").size(), 5u);
  // '@' + 1 is 'A', which folds to 'a': the prefix's end must skip the upper-case letters.
  EXPECT_EQ(Names(true, "tr@"), (std::vector<std::string>{"tr@in"}));
  EXPECT_EQ(Names(true, "tr["), (std::vector<std::string>{"tr[in"}));
  EXPECT_TRUE(Names(true, "zz").empty());
  EXPECT_EQ(Names(true, "").size(), 8u);
  EXPECT_TRUE(Names(false, "nobody").empty());
  auto [first, last] = index_.ByName("no-such-queue", "train", true);
  EXPECT_EQ(first, last);
}

TEST_F(ListIndexTest, StatusAndShareOrdersFollowEveryMove) {
  JobRecord& a = Add("a", 10, "s1");
  JobRecord& b = Add("b", 20, "s2");
  Add("c", 30, "s1");
  EXPECT_EQ(Seqs(index_.ByStatus("q", model::JobStatus::kRunnable)),
            (std::vector<model::JobId>{1, 2, 3}));
  index_.Move(b, model::JobStatus::kRunnable, model::JobStatus::kRunning);
  b.status = model::JobStatus::kRunning;
  EXPECT_EQ(Seqs(index_.ByStatus("q", model::JobStatus::kRunnable)),
            (std::vector<model::JobId>{1, 3}));
  EXPECT_EQ(Seqs(index_.ByStatus("q", model::JobStatus::kRunning)), (std::vector<model::JobId>{2}));
  EXPECT_EQ(Seqs(index_.ByShareStatus("q", "s2", model::JobStatus::kRunning)),
            (std::vector<model::JobId>{2}));
  EXPECT_TRUE(index_.ByShareStatus("q", "s2", model::JobStatus::kRunnable).empty());
  EXPECT_EQ(Seqs(index_.ByShareStatus("q", "s1", model::JobStatus::kRunnable)),
            (std::vector<model::JobId>{1, 3}));
  index_.Remove(a);
  EXPECT_EQ(Seqs(index_.All("q")), (std::vector<model::JobId>{2, 3}));
  EXPECT_TRUE(Names(false, "a").empty());
  EXPECT_TRUE(index_.ByShareStatus("q", "nobody", model::JobStatus::kRunnable).empty());
  EXPECT_TRUE(index_.All("other").empty());
}

}  // namespace
}  // namespace allot::server
