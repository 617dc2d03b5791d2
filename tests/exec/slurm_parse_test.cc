// The Slurm executor's readers of what Slurm prints: host lists, squeue's lines, sinfo --json.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "exec/hostlist.h"
#include "exec/slurm_client.h"

namespace allot::exec {
namespace {

using Names = std::vector<std::string>;

TEST(HostListTest, ExpandsRangesListsAndPadding) {
  EXPECT_EQ(*ExpandHostList("n1"), Names({"n1"}));
  EXPECT_EQ(*ExpandHostList("n[1-3]"), Names({"n1", "n2", "n3"}));
  EXPECT_EQ(*ExpandHostList("n[1-2,7],gpu05"), Names({"n1", "n2", "n7", "gpu05"}));
  EXPECT_EQ(*ExpandHostList("gpu[08-10]"), Names({"gpu08", "gpu09", "gpu10"}));
  EXPECT_EQ(*ExpandHostList("rack[1-2]-n[1-2]"),
            Names({"rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"}));
  EXPECT_EQ(*ExpandHostList(""), Names());
}

TEST(HostListTest, RefusesMalformedLists) {
  for (const char* bad : {"n[1-3", "n1-3]", "n[3-1]", "n[a-b]", "n[1-]", "n[1-999999999]"}) {
    EXPECT_FALSE(ExpandHostList(bad).ok()) << bad;
  }
}

// As `squeue --noheader --all --states=all --format='%i|%T|%r|%N|%k|%Z'` prints it.
constexpr char kSqueue[] =
    "426|RUNNING|None|n[1-3]|abc-123|/shared/jobs/abc-123/attempt-1\n"
    "427|NODE_FAIL|NodeDown|n3|def|/shared/b\n"
    "428|PENDING|Resources||(null)|/shared/odd|dir\n";

TEST(SqueueTextTest, ReadsJobs) {
  Result<std::vector<SlurmJob>> jobs = ParseSqueueText(kSqueue);
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ((*jobs)[0].id, "426");
  EXPECT_EQ((*jobs)[0].comment, "abc-123");
  EXPECT_EQ((*jobs)[0].state, "RUNNING");
  EXPECT_EQ((*jobs)[0].nodes, "n[1-3]");
  EXPECT_EQ((*jobs)[0].work_dir, "/shared/jobs/abc-123/attempt-1");
  EXPECT_EQ((*jobs)[1].state, "NODE_FAIL");
  EXPECT_EQ((*jobs)[1].reason, "NodeDown");
  EXPECT_EQ((*jobs)[2].comment, "");                  // no comment
  EXPECT_EQ((*jobs)[2].nodes, "");                    // pending: no nodes yet
  EXPECT_EQ((*jobs)[2].work_dir, "/shared/odd|dir");  // the last field keeps its bars
  EXPECT_TRUE(ParseSqueueText("").ok());
  EXPECT_TRUE(ParseSqueueText("")->empty());
}

TEST(SqueueTextTest, RefusesWhatSqueueDoesNotPrint) {
  EXPECT_FALSE(ParseSqueueText("squeue: error: Unable to contact slurm controller\n").ok());
  EXPECT_FALSE(ParseSqueueText("12|RUNNING|None\n").ok());
  EXPECT_FALSE(ParseSqueueText("x1|RUNNING|None|n1||/d\n").ok());
}

TEST(SacctTest, ReadsTheAllocationsLine) {
  Result<SlurmJob> job = ParseSacctLine("41|COMPLETED|n1\n42|CANCELLED by 0|n[2-3]\n", "42");
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->state, "CANCELLED");
  EXPECT_EQ(job->nodes, "n[2-3]");
  EXPECT_EQ(ParseSacctLine("", "42").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ParseSacctLine("421|FAILED|n1\n", "42").status().code(), StatusCode::kNotFound);
}

// sinfo exits 0 when slurmctld does not answer, with an empty list: that is no answer, not
// "no nodes".
TEST(SinfoJsonTest, AnErrorBesideAnEmptyListIsNoAnswer) {
  Result<std::vector<SlurmNode>> nodes =
      ParseNodesJson(R"({"errors": [{"error": "Unspecified error", "errno": -1}], "nodes": []})");
  ASSERT_FALSE(nodes.ok());
  EXPECT_EQ(nodes.status().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(ParseNodesJson("[]").ok());
}

TEST(SlurmStateTest, EndedAndPendingStates) {
  for (const char* s : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
                        "BOOT_FAIL", "OUT_OF_MEMORY", "DEADLINE", "CANCELLED+COMPLETING"}) {
    EXPECT_TRUE(SlurmStateEnded(s)) << s;
    EXPECT_FALSE(SlurmStatePending(s)) << s;
  }
  for (const char* s : {"RUNNING", "COMPLETING", "PENDING", "CONFIGURING"}) {
    EXPECT_FALSE(SlurmStateEnded(s)) << s;
  }
  EXPECT_TRUE(SlurmStatePending("PENDING"));
  EXPECT_FALSE(SlurmStatePending("RUNNING"));
}

TEST(SinfoJsonTest, ReadsNodesAddressesPartitionsAndUsability) {
  Result<std::vector<SlurmNode>> nodes = ParseNodesJson(R"({"nodes": [
      {"name": "n1", "address": "10.0.0.1", "state": "idle", "state_flags": [],
       "partitions": ["gpu", "all"]},
      {"name": "n2", "address": "10.0.0.2", "state": "down", "state_flags": ["NOT_RESPONDING"],
       "partitions": ["gpu"]},
      {"name": "n3", "address": "10.0.0.3", "state": "mixed", "state_flags": ["DRAIN"],
       "partitions": ["gpu"]},
      {"name": "n4", "address": "10.0.0.4", "state": ["ALLOCATED"], "partitions": ["gpu"]}]})");
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 4u);
  EXPECT_EQ((*nodes)[0].address, "10.0.0.1");
  EXPECT_EQ((*nodes)[0].partitions, Names({"gpu", "all"}));
  EXPECT_TRUE((*nodes)[0].usable);
  EXPECT_FALSE((*nodes)[1].usable);
  EXPECT_FALSE((*nodes)[2].usable);
  EXPECT_TRUE((*nodes)[3].usable);
}

}  // namespace
}  // namespace allot::exec
