// Which job uses which file:// location (issue 10, section 1): no two unfinished jobs use the same
// checkpoint location or one inside the other's; a finished job's location stays its share's
// (another share may neither read it as an input channel nor take it), a vanished job's is free;
// no share takes a checkpoint location where another's live job reads; the claims of the jobs a
// start restored come from their stored payloads.

#include "server/checkpoint_claims.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "api/fields.h"
#include "api/payload.h"
#include "server/api_error.h"
#include "server/support/test_dir.h"

namespace allot::server {
namespace {

using Json = nlohmann::json;
using api::ParseBody;

namespace fs = std::filesystem;

// Payloads by job id, and the records batches kept (Keep); Get and Load fail while `fail` is set.
class PayloadStore : public store::Store {
 public:
  void Submit(store::Batch batch, std::function<void(const Status&)> done) override {
    Keep(batch);
    done(Status::Ok());
  }
  void Resume() override {}
  Result<std::vector<store::Record>> Load(store::Kind kind) override {
    if (fail) return Internal("disk gone");
    std::vector<store::Record> out;
    for (const auto& [key, value] : records[kind]) out.push_back({key, value});
    return out;
  }
  void Keep(const store::Batch& batch) {
    for (const store::Op& op : batch.ops) {
      if (op.value) {
        records[op.kind][op.key] = *op.value;
      } else {
        records[op.kind].erase(op.key);
      }
    }
  }
  Result<std::optional<std::string>> Get(store::Kind kind, std::string_view key) override {
    if (fail) return Internal("disk gone");
    if (kind != store::Kind::kJobPayload) {
      const auto& kept = records[kind];
      const auto found = kept.find(std::string(key));
      return found == kept.end() ? std::optional<std::string>()
                                 : std::optional<std::string>(found->second);
    }
    ++gets;  // payloads read
    auto it = payloads.find(std::string(key));
    if (kind != store::Kind::kJobPayload || it == payloads.end()) {
      return std::optional<std::string>();
    }
    return std::optional<std::string>(it->second);
  }
  Result<std::vector<store::Record>> Range(store::Kind kind,
                                           const store::KeyRange& range) override {
    return store::RangeOfLoad(*this, kind, range);
  }
  void Close() override {}

  std::map<std::string, std::string> payloads;
  std::map<store::Kind, std::map<std::string, std::string>> records;
  bool fail = false;
  int gets = 0;
};

Json BasePayload() {
  return Json{{"AlgorithmSpecification", {{"ContainerEntrypoint", Json::array({"/bin/true"})}}},
              {"ResourceConfig", {{"InstanceType", "ml.g5.xlarge"}, {"InstanceCount", 1}}}};
}

std::string PayloadWithCheckpoint(const std::string& dir) {
  Json p = BasePayload();
  p["CheckpointConfig"] = {{"S3Uri", "file://" + dir}};
  return p.dump();
}

std::string PayloadWithChannel(const std::string& dir) {
  Json p = BasePayload();
  p["InputDataConfig"] =
      Json::array({{{"ChannelName", "train"},
                    {"DataSource", {{"S3DataSource", {{"S3Uri", "file://" + dir}}}}}}});
  return p.dump();
}

class CheckpointClaimsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = FreshTestDir("allot-claims");
    fs::create_directories(base_ / "ck" / "a");
    fs::create_directory_symlink(base_ / "ck" / "a", base_ / "alias");
  }
  void TearDown() override { fs::remove_all(base_); }

  std::string Dir(const std::string& rel) const { return (base_ / rel).string(); }

  // A new submission `id` of `share` (of queue "q") naming checkpoint location `rel`: "" if
  // claimed, else the refusal.
  std::string Submit(const std::string& id, const std::string& rel,
                     const std::string& share = "team-a") {
    return SubmitPayload(id, share,
                         rel.empty() ? BasePayload().dump() : PayloadWithCheckpoint(Dir(rel)));
  }

  // The same with input channel "train" at `rel`.
  std::string Read(const std::string& id, const std::string& rel, const std::string& share) {
    return SubmitPayload(id, share, PayloadWithChannel(Dir(rel)));
  }

  std::string SubmitPayload(const std::string& id, const std::string& share,
                            const std::string& payload) {
    JobRecord job;
    job.seq = next_seq_++;
    job.id = id;
    job.queue = "q";
    job.share = Share(share);
    job.status = model::JobStatus::kSubmitted;
    job.attempt = 1;  // as if it launched (a job that never did keeps no claim once finished)
    const api::LaunchInfo launch = api::ParsePayload(payload, id).launch;
    if (Status s = claims_.Claim(launch, job, jobs_, store_); !s.ok()) return s.message();
    jobs_.emplace(job.seq, std::move(job));  // accepted: the controller adds it
    store_.payloads[id] = payload;
    return "";
  }

  // A job of team-a that a start restored, with its stored payload.
  void Stored(const std::string& id, model::JobStatus status, std::string payload,
              int attempt = 0) {
    JobRecord job;
    job.seq = next_seq_++;
    job.id = id;
    job.queue = "q";
    job.share = Share("team-a");
    job.status = status;
    job.attempt = attempt;
    jobs_.emplace(job.seq, std::move(job));
    store_.payloads[id] = std::move(payload);
  }

  // The share names the records point to (the controller interns them).
  std::string_view Share(const std::string& name) { return *shares_.insert(name).first; }

  JobRecord& Job(const std::string& id) {
    for (auto& [seq, job] : jobs_) {
      if (job.id == id) return job;
    }
    throw std::logic_error("no job " + id);
  }

  fs::path base_;
  std::set<std::string> shares_;
  model::JobId next_seq_ = 1;
  CheckpointClaims::Jobs jobs_;
  PayloadStore store_;
  CheckpointClaims claims_;
};

TEST_F(CheckpointClaimsTest, ALiveJobsLocationIsRefusedNamingIt) {
  ASSERT_EQ(Submit("job-a", "ck/a"), "");
  EXPECT_EQ(Submit("job-b", "ck/a"),
            "serviceRequestPayload.CheckpointConfig.S3Uri: file://" + Dir("ck/a") +
                " is the checkpoint location of job job-a, which has not finished");
  EXPECT_EQ(Submit("job-c", "ck/a/inner"),
            "serviceRequestPayload.CheckpointConfig.S3Uri: file://" + Dir("ck/a/inner") +
                " is inside the checkpoint location of job job-a, which has not finished");
  EXPECT_EQ(Submit("job-d", "ck"),
            "serviceRequestPayload.CheckpointConfig.S3Uri: file://" + Dir("ck") +
                " contains the checkpoint location of job job-a, which has not finished");
  EXPECT_NE(Submit("job-e", "alias").find("is the checkpoint location of job job-a"),
            std::string::npos)
      << "a link to the location is the location";
  EXPECT_NE(Submit("job-f", "alias/x").find("is inside"), std::string::npos);
  // Neighbours whose names only start alike, and jobs without a location, are free.
  EXPECT_EQ(Submit("job-g", "ck/a2"), "");
  EXPECT_EQ(Submit("job-h", "ck/b"), "");
  EXPECT_EQ(Submit("job-i", ""), "");
  EXPECT_EQ(store_.gets, 0) << "no restored jobs named a location before: nothing to read";
}

TEST_F(CheckpointClaimsTest, AFinishedJobsLocationStaysItsShares) {
  ASSERT_EQ(Submit("job-a", "ck/a"), "");
  ASSERT_EQ(Submit("job-b", "ck/b"), "");
  Job("job-a").status = model::JobStatus::kRunning;
  EXPECT_NE(Submit("job-x", "ck/a"), "");
  Job("job-a").status = model::JobStatus::kSucceeded;
  const std::string other_share =
      "is a checkpoint location of another quota share (a share's checkpoint locations stay its "
      "own after its jobs have finished)";
  EXPECT_EQ(
      Submit("job-y", "ck/a", "team-b"),
      "serviceRequestPayload.CheckpointConfig.S3Uri: file://" + Dir("ck/a") + " " + other_share)
      << "another share would restore its checkpoints, or plant its own";
  EXPECT_NE(Submit("job-z", "ck/a/inner", "team-b").find("is inside a checkpoint location of"),
            std::string::npos);
  EXPECT_NE(Submit("job-w", "ck", "team-b").find("contains a checkpoint location of"),
            std::string::npos);
  EXPECT_EQ(Submit("job-c", "ck/a"), "") << "its own share uses it again";
  // job-b's submission was refused after its claim (or rolled back): it is not among the jobs.
  jobs_.erase(Job("job-b").seq);
  EXPECT_EQ(Submit("job-d", "ck/b", "team-b"), "") << "its job is gone";
  EXPECT_NE(Submit("job-e", "ck").find("of job job-c,"), std::string::npos);
}

TEST_F(CheckpointClaimsTest, AQueuesShareIsNotTheSameNameInAnotherQueue) {
  ASSERT_EQ(Submit("job-a", "ck/a"), "");
  Job("job-a").status = model::JobStatus::kFailed;
  JobRecord job;
  job.seq = next_seq_++;
  job.id = "other-queue";
  job.queue = "q2";
  job.share = Share("team-a");
  api::LaunchInfo launch;
  launch.checkpoint_sync_dir = Dir("ck/a");
  EXPECT_NE(claims_.Claim(launch, job, jobs_, store_).message().find("another quota share"),
            std::string::npos)
      << "its jobs run as another uid";
}

TEST_F(CheckpointClaimsTest, AnInputChannelNeverReadsAnotherSharesCheckpoints) {
  ASSERT_EQ(Submit("job-a", "ck/a"), "");
  const std::string field =
      "serviceRequestPayload.InputDataConfig.train.DataSource.S3DataSource.S3Uri: file://";
  const std::string other = " a checkpoint location of another quota share";
  EXPECT_EQ(Read("steal", "ck/a", "team-b"),
            field + Dir("ck/a") + " is" + other +
                " (a share's checkpoint locations stay its own after its jobs have finished)");
  EXPECT_EQ(Read("steal-2", "ck", "team-b").rfind(field + Dir("ck") + " contains" + other, 0), 0U);
  EXPECT_EQ(Read("steal-3", "ck/a/inner", "team-b")
                .rfind(field + Dir("ck/a/inner") + " is inside" + other, 0),
            0U);
  EXPECT_NE(Read("steal-4", "alias", "team-b").find(" is" + other), std::string::npos)
      << "a link to the location is the location";
  EXPECT_EQ(Read("own", "ck/a", "team-a"), "") << "a share reads its own checkpoints";
  EXPECT_EQ(Read("own-2", "ck", "team-a"), "");
  EXPECT_EQ(Read("beside", "ck/a2", "team-b"), "");
  Job("job-a").status = model::JobStatus::kSucceeded;
  EXPECT_NE(Read("later", "ck/a", "team-b").find(other), std::string::npos)
      << "the location stays team-a's after its job finished";
}

TEST_F(CheckpointClaimsTest, NoCheckpointLocationWhereAnotherSharesLiveJobReads) {
  ASSERT_EQ(Read("reader", "ck", "team-b"), "");
  EXPECT_EQ(Read("reader-2", "ck", "team-c"), "")
      << "readers of different shares do not exclude each other";
  Job("reader-2").status = model::JobStatus::kSucceeded;
  const std::string reads =
      "an input channel of a job of another quota share, which has not finished";
  EXPECT_EQ(Submit("job-a", "ck/a"), "serviceRequestPayload.CheckpointConfig.S3Uri: file://" +
                                         Dir("ck/a") + " is inside " + reads);
  EXPECT_EQ(Submit("job-b", "ck/a", "team-b"), "") << "its own share's reader";
  Job("reader").status = model::JobStatus::kFailed;
  EXPECT_EQ(Submit("job-c", "ck/c"), "") << "a finished job reads nothing";
  EXPECT_NE(Read("reader-3", "ck", "team-c").find("contains a checkpoint location"),
            std::string::npos)
      << "team-b's and team-a's locations are under it now";
}

TEST_F(CheckpointClaimsTest, AtLaunchTheLocationsAreResolvedAgainAndItsOwnClaimsDoNotCount) {
  fs::create_directories(base_ / "b");
  fs::create_directory_symlink(base_ / "b", base_ / "link");
  ASSERT_EQ(Submit("job-a", "ck/a"), "");
  ASSERT_EQ(Read("job-b", "link", "team-b"), "");
  api::LaunchInfo launch;
  launch.channels = {{"train", Dir("link")}};
  EXPECT_TRUE(claims_.CheckAtLaunch(launch, Job("job-b"), jobs_, store_).ok());
  EXPECT_TRUE(claims_
                  .CheckAtLaunch(api::LaunchInfo{.checkpoint_sync_dir = Dir("ck/a")}, Job("job-a"),
                                 jobs_, store_)
                  .ok())
      << "its own claim";
  // The link now leads into team-a's location.
  fs::remove(base_ / "link");
  fs::create_directory_symlink(base_ / "ck" / "a", base_ / "link");
  const Status s = claims_.CheckAtLaunch(launch, Job("job-b"), jobs_, store_);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("is a checkpoint location of another quota share"), std::string::npos)
      << s.message();
  EXPECT_EQ(claims_.size(), 2U) << "a check at launch records nothing";
}

// The controller resolves each path once, as the share's jobs reach it, and checks its roots and
// permissions there: the claim is keyed where that led, and at launch checked and recorded as
// given, never where a link leads by the time the claims look (a swap between two resolutions
// would otherwise claim a place that was never checked).
TEST_F(CheckpointClaimsTest, TheCallersResolutionIsTheOneClaimedAndRecorded) {
  fs::create_directories(base_ / "b");
  fs::create_directory_symlink(base_ / "b", base_ / "link");
  JobRecord job;
  job.seq = next_seq_++;
  job.id = "job-a";
  job.queue = "q";
  job.share = Share("team-a");
  job.status = model::JobStatus::kSubmitted;
  job.attempt = 1;
  const api::LaunchInfo written{.checkpoint_sync_dir = Dir("link")};
  const api::LaunchInfo resolved{.checkpoint_sync_dir = Dir("ck/a")};
  ASSERT_TRUE(claims_.Claim(written, job, jobs_, store_, {}, &resolved).ok());
  jobs_.emplace(job.seq, std::move(job));
  EXPECT_NE(Submit("job-b", "ck/a", "team-b").find("another quota share"), std::string::npos);
  EXPECT_EQ(Submit("job-c", "b", "team-b"), "") << "where the link leads is not what was claimed";
  store::Batch records;
  ASSERT_TRUE(claims_
                  .CheckAtLaunch(api::LaunchInfo{.checkpoint_sync_dir = Dir("link")}, Job("job-a"),
                                 jobs_, store_, &records, /*resolved=*/true)
                  .ok());
  ASSERT_EQ(records.ops.size(), 1U);
  EXPECT_EQ(records.ops[0].key, "q/team-a\n" + Dir("link")) << "not resolved again";
}

// After a start the live jobs' locations are read from their payloads and resolved as their
// share's jobs' user (SetUserOf): a link through a directory that user may not search claims
// what it names, not what lies past it (as root, it would keep team-a out of its own place).
TEST_F(CheckpointClaimsTest, TheRestoredLiveJobsLocationsAreResolvedAsTheirSharesUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: the claims take the share's user";
  fs::create_directories(base_ / "closed" / "sub");
  fs::permissions(base_ / "closed", fs::perms::owner_all);
  fs::permissions(base_, fs::perms::owner_all | fs::perms::others_exec);
  fs::create_directory_symlink(base_ / "closed" / "sub", base_ / "through");
  for (const bool as_user : {false, true}) {
    SCOPED_TRACE(as_user);
    jobs_.clear();
    store_.payloads.clear();
    claims_ = CheckpointClaims();  // a restart
    if (as_user) {
      claims_.SetUserOf([](const JobRecord&) -> Result<std::optional<exec::JobUser>> {
        return std::optional<exec::JobUser>(exec::JobUser{200123, 200123});
      });
    }
    Stored("bobs", model::JobStatus::kRunnable, PayloadWithCheckpoint(Dir("through")));
    Job("bobs").share = Share("team-b");
    const std::string refusal = Submit("alices", "closed/sub", "team-a");
    if (as_user) {
      EXPECT_EQ(refusal, "") << "team-a's own place is not bob's";
      EXPECT_NE(Submit("alices-2", "through", "team-a").find("another quota share"),
                std::string::npos)
          << "bob's claim is on the name he gave";
    } else {
      EXPECT_NE(refusal.find("another quota share"), std::string::npos) << "as root";
    }
  }
}

TEST_F(CheckpointClaimsTest, ASequenceNumberUsedAgainIsNotTheSameJob) {
  ASSERT_EQ(Submit("job-a", "ck/a"), "");
  const model::JobId seq = Job("job-a").seq;
  jobs_.erase(seq);  // rolled back; a later submission got the same sequence number
  JobRecord other;
  other.seq = seq;
  other.id = "job-other";
  jobs_.emplace(seq, std::move(other));
  EXPECT_EQ(Submit("job-b", "ck/a", "team-b"), "");
}

// After a start: the live jobs' claims come from their payloads, the finished jobs' checkpoint
// locations from the claims stored with their submissions, and no finished job's payload is read.
TEST_F(CheckpointClaimsTest, TheRestoredJobsClaimsComeFromTheirPayloadsAndTheStoredClaims) {
  ASSERT_EQ(Submit("done", "ck/b"), "");
  // Its claim is stored as it launches.
  store::Batch launched;
  ASSERT_TRUE(claims_
                  .CheckAtLaunch(api::LaunchInfo{.checkpoint_sync_dir = Dir("ck/b")}, Job("done"),
                                 jobs_, store_, &launched)
                  .ok());
  store_.Keep(launched);
  Job("done").status = model::JobStatus::kSucceeded;
  claims_ = CheckpointClaims();  // a restart: nothing in memory
  store_.gets = 0;

  Stored("live", model::JobStatus::kRunnable, PayloadWithCheckpoint(Dir("ck/a")));
  // Finished before the claims were stored: its payload is not read, so it claims nothing.
  Stored("old", model::JobStatus::kSucceeded, PayloadWithCheckpoint(Dir("ck/d")));
  Stored("none", model::JobStatus::kRunning, R"({"ResourceConfig": {}})");
  Stored("reader", model::JobStatus::kRunning, PayloadWithChannel(Dir("ck/r")));
  Stored("read", model::JobStatus::kSucceeded, PayloadWithChannel(Dir("ck/s")));
  // The field name in escapes: found all the same.
  std::string escaped = PayloadWithCheckpoint(Dir("ck/c"));
  escaped.replace(escaped.find("file://"), 1, "\\u0066");
  Stored("escaped", model::JobStatus::kRunning, escaped);
  EXPECT_EQ(Submit("new-1", "ck/b"), "") << "the finished job's location is its share's";
  EXPECT_EQ(store_.gets, 4) << "every live job's payload is read, no finished one's";
  EXPECT_NE(Submit("new-2", "ck/b", "team-b").find("of another quota share"), std::string::npos);
  EXPECT_NE(Submit("new-3", "ck/a").find("of job live,"), std::string::npos);
  EXPECT_NE(Submit("new-4", "ck/c").find("of job escaped,"), std::string::npos);
  EXPECT_NE(Submit("new-5", "ck/r/x", "team-b").find("an input channel of a job"),
            std::string::npos);
  EXPECT_EQ(Submit("new-6", "ck/s/x", "team-b"), "") << "a finished job's channel counts no more";
  EXPECT_EQ(Submit("new-7", "ck/d", "team-b"), "") << "no claim was stored for it";
  EXPECT_EQ(store_.gets, 4) << "read once";
}

// A store from before the claim records: the first load reads the launched finished jobs'
// payloads once, stores their claims and a marker, and later loads read the records instead.
TEST_F(CheckpointClaimsTest, JobsThatFinishedBeforeTheRecordsGetThemOnce) {
  Stored("old", model::JobStatus::kSucceeded, PayloadWithCheckpoint(Dir("ck/a")), /*attempt=*/1);
  EXPECT_NE(Submit("steal", "ck/a", "team-b").find("of another quota share"), std::string::npos);
  EXPECT_EQ(store_.gets, 1);
  EXPECT_EQ(store_.records[store::Kind::kCheckpointClaim].size(), 1U);
  EXPECT_EQ(store_.records[store::Kind::kMeta].size(), 1U);
  claims_ = CheckpointClaims();  // a restart
  EXPECT_NE(Submit("steal-2", "ck/a", "team-b").find("of another quota share"), std::string::npos);
  EXPECT_EQ(store_.gets, 1) << "its payload is not read again";
}

// A job that never launched wrote nothing: once it finished (cancelled while it waited), its
// location, even a whole root, is no share's; one that launched keeps its share's.
TEST_F(CheckpointClaimsTest, AJobThatNeverLaunchedKeepsNoLocation) {
  ASSERT_EQ(Submit("waited", "ck"), "");
  EXPECT_NE(Submit("other", "ck/x", "team-b").find("of another quota share"), std::string::npos)
      << "while it waits it holds the location";
  Job("waited").attempt = 0;  // cancelled before it ever launched
  Job("waited").status = model::JobStatus::kFailed;
  EXPECT_EQ(Submit("other-2", "ck/x", "team-b"), "");
  store::Batch none;
  ASSERT_TRUE(claims_.CheckAtLaunch(api::LaunchInfo{}, Job("other-2"), jobs_, store_, &none).ok());
  EXPECT_TRUE(none.empty());
  store::Batch launched;
  ASSERT_TRUE(claims_
                  .CheckAtLaunch(api::LaunchInfo{.checkpoint_sync_dir = Dir("ck/x")},
                                 Job("other-2"), jobs_, store_, &launched)
                  .ok());
  EXPECT_EQ(launched.ops.size(), 1U);
}

TEST_F(CheckpointClaimsTest, AStoreThatFailsIsAFaultAndIsReadAgainNextTime) {
  Stored("live", model::JobStatus::kRunnable, PayloadWithCheckpoint(Dir("ck/a")));
  store_.fail = true;
  JobRecord job;
  job.seq = next_seq_++;
  job.id = "new";
  EXPECT_EQ(
      claims_.Claim(api::LaunchInfo{.checkpoint_sync_dir = Dir("ck/a")}, job, jobs_, store_).code(),
      StatusCode::kInternal);
  store_.fail = false;
  EXPECT_NE(Submit("new", "ck/a").find("of job live,"), std::string::npos);
}

TEST_F(CheckpointClaimsTest, ClaimsDoNotPileUp) {
  for (int i = 0; i < 5000; ++i) {
    const std::string id = "job-" + std::to_string(i);
    ASSERT_EQ(Submit(id, "ck/same"), "");
    Job(id).status = model::JobStatus::kFailed;
    ASSERT_EQ(Read(id + "-reads", "ck/same", "team-a"), "");
    Job(id + "-reads").status = model::JobStatus::kSucceeded;
  }
  EXPECT_LT(claims_.size(), 2100U) << "one share's finished claims of one location, and finished "
                                      "jobs' channels, are swept";
  EXPECT_NE(Submit("other", "ck/same", "team-b"), "") << "the newest claim is kept";
}

}  // namespace
}  // namespace allot::server
