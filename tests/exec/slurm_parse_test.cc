// The Slurm executor's readers of what Slurm prints: host lists, squeue --json, sinfo --json.

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

// As squeue --json of Slurm 22.05 (openapi v0.0.38) writes it, trimmed to the fields read.
constexpr char kSqueue2205[] = R"({
  "meta": {"plugin": {"type": "openapi/v0.0.38"}},
  "errors": [],
  "jobs": [
    {"job_id": 426, "name": "train-1", "comment": "abc-123", "job_state": "RUNNING",
     "state_reason": "None", "nodes": "n[1-3]", "current_working_directory": "/shared/a",
     "exit_code": 0},
    {"job_id": 427, "name": "train-2", "comment": "", "job_state": "NODE_FAIL",
     "state_reason": "NodeDown", "nodes": "n3", "current_working_directory": "/shared/b",
     "exit_code": 256},
    {"job_id": 428, "name": "x", "job_state": "CANCELLED", "exit_code": 15, "nodes": ""}
  ]
})";

TEST(SqueueJsonTest, ReadsSlurm2205Jobs) {
  Result<std::vector<SlurmJob>> jobs = ParseSqueueJson(kSqueue2205);
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ((*jobs)[0].id, "426");
  EXPECT_EQ((*jobs)[0].comment, "abc-123");
  EXPECT_EQ((*jobs)[0].state, "RUNNING");
  EXPECT_EQ((*jobs)[0].nodes, "n[1-3]");
  EXPECT_EQ((*jobs)[0].work_dir, "/shared/a");
  EXPECT_EQ((*jobs)[1].state, "NODE_FAIL");
  EXPECT_EQ((*jobs)[1].reason, "NodeDown");
  EXPECT_EQ((*jobs)[1].exit_code, 1);   // a wait status: exit 1 in the high byte
  EXPECT_EQ((*jobs)[2].exit_code, -15);  // killed by SIGTERM
}

TEST(SqueueJsonTest, ReadsLaterReleasesStateLists) {
  Result<std::vector<SlurmJob>> jobs = ParseSqueueJson(R"({"jobs": [
      {"job_id": 9, "job_state": ["PENDING", "REQUEUED"], "nodes": "",
       "exit_code": {"status": ["SUCCESS"], "return_code": {"set": true, "number": 3}}}]})");
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ((*jobs)[0].state, "PENDING+REQUEUED");
  EXPECT_TRUE(SlurmStatePending((*jobs)[0].state));
  EXPECT_EQ((*jobs)[0].exit_code, 3);
}

// squeue exits 0 when slurmctld does not answer, with an empty list: that is no answer, not
// "every job is gone".
TEST(SqueueJsonTest, AnErrorBesideAnEmptyListIsNoAnswer) {
  Result<std::vector<SlurmJob>> jobs = ParseSqueueJson(R"({"errors": [{"description":
      "Failed while looking for jobs", "error_number": -1, "error": "Unspecified error"}],
      "jobs": []})");
  ASSERT_FALSE(jobs.ok());
  EXPECT_EQ(jobs.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(jobs.status().message().find("Failed while looking for jobs"), std::string::npos);
  EXPECT_FALSE(ParseNodesJson(R"({"errors": [{"error": "Unspecified error", "errno": -1}],
      "nodes": []})").ok());
}

TEST(SqueueJsonTest, RefusesWhatSlurmDoesNotWrite) {
  EXPECT_FALSE(ParseSqueueJson("squeue: error: Unable to contact slurm controller").ok());
  EXPECT_FALSE(ParseSqueueJson(R"({"errors": []})").ok());
  EXPECT_FALSE(ParseSqueueJson("[]").ok());
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
