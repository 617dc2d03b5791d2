// The file:// checkpoint locations of live jobs (issue 10, section 1): no two unfinished jobs use
// the same one or one inside the other's; a finished or vanished job's claim is gone; the claims
// of the jobs a start restored come from their stored payloads.

#include "server/checkpoint_claims.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "api/fields.h"
#include "server/api_error.h"

namespace allot::server {
namespace {

using Json = nlohmann::json;
using api::ParseBody;

namespace fs = std::filesystem;

// Payloads by job id; Get fails while `fail` is set.
class PayloadStore : public store::Store {
 public:
  void Submit(store::Batch /*batch*/, std::function<void(const Status&)> done) override {
    done(Status::Ok());
  }
  void Resume() override {}
  Result<std::vector<store::Record>> Load(store::Kind /*kind*/) override {
    return std::vector<store::Record>{};
  }
  Result<std::optional<std::string>> Get(store::Kind kind, std::string_view key) override {
    ++gets;
    if (fail) return Internal("disk gone");
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
  bool fail = false;
  int gets = 0;
};

std::string PayloadWithCheckpoint(const std::string& dir) {
  return Json{{"AlgorithmSpecification", {{"ContainerEntrypoint", Json::array({"/bin/true"})}}},
              {"ResourceConfig", {{"InstanceType", "ml.g5.xlarge"}, {"InstanceCount", 1}}},
              {"CheckpointConfig", {{"S3Uri", "file://" + dir}}}}
      .dump();
}

class CheckpointClaimsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() /
            ("allot-claims-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(base_);
    fs::create_directories(base_ / "ck" / "a");
    fs::create_directory_symlink(base_ / "ck" / "a", base_ / "alias");
  }
  void TearDown() override { fs::remove_all(base_); }

  std::string Dir(const std::string& rel) const { return (base_ / rel).string(); }

  // A new submission `id` naming checkpoint location `rel`: "" if claimed, else the refusal.
  std::string Submit(const std::string& id, const std::string& rel) {
    JobRecord job;
    job.seq = next_seq_++;
    job.id = id;
    job.status = model::JobStatus::kSubmitted;
    if (Status s = claims_.Claim(rel.empty() ? "" : Dir(rel), job, jobs_, store_); !s.ok()) {
      return s.message();
    }
    jobs_.emplace(job.seq, std::move(job));  // accepted: the controller adds it
    store_.payloads[id] = PayloadWithCheckpoint(Dir(rel));
    return "";
  }

  JobRecord& Job(const std::string& id) {
    for (auto& [seq, job] : jobs_) {
      if (job.id == id) return job;
    }
    throw std::logic_error("no job " + id);
  }

  fs::path base_;
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

TEST_F(CheckpointClaimsTest, AFinishedOrVanishedJobsLocationIsFreeAgain) {
  ASSERT_EQ(Submit("job-a", "ck/a"), "");
  ASSERT_EQ(Submit("job-b", "ck/b"), "");
  Job("job-a").status = model::JobStatus::kRunning;
  EXPECT_NE(Submit("job-x", "ck/a"), "");
  Job("job-a").status = model::JobStatus::kSucceeded;
  EXPECT_EQ(Submit("job-c", "ck/a"), "") << "its job finished";
  // job-b's submission was refused after its claim (or rolled back): it is not among the jobs.
  jobs_.erase(Job("job-b").seq);
  EXPECT_EQ(Submit("job-d", "ck/b"), "") << "its job is gone";
  EXPECT_NE(Submit("job-e", "ck").find("of job job-c,"), std::string::npos);
}

TEST_F(CheckpointClaimsTest, ASequenceNumberUsedAgainIsNotTheSameJob) {
  ASSERT_EQ(Submit("job-a", "ck/a"), "");
  const model::JobId seq = Job("job-a").seq;
  jobs_.erase(seq);  // rolled back; a later submission got the same sequence number
  JobRecord other;
  other.seq = seq;
  other.id = "job-other";
  jobs_.emplace(seq, std::move(other));
  EXPECT_EQ(Submit("job-b", "ck/a"), "");
}

TEST_F(CheckpointClaimsTest, TheRestoredJobsClaimsComeFromTheirPayloads) {
  auto restored = [this](const std::string& id, model::JobStatus status, std::string payload) {
    JobRecord job;
    job.seq = next_seq_++;
    job.id = id;
    job.status = status;
    jobs_.emplace(job.seq, std::move(job));
    store_.payloads[id] = std::move(payload);
  };
  restored("live", model::JobStatus::kRunnable, PayloadWithCheckpoint(Dir("ck/a")));
  restored("done", model::JobStatus::kSucceeded, PayloadWithCheckpoint(Dir("ck/b")));
  restored("none", model::JobStatus::kRunning, R"({"ResourceConfig": {}})");
  // The field name in escapes: found all the same.
  std::string escaped = PayloadWithCheckpoint(Dir("ck/c"));
  escaped.replace(escaped.find("CheckpointConfig"), 1, "\\u0043");
  restored("escaped", model::JobStatus::kRunning, escaped);
  EXPECT_EQ(Submit("new-1", "ck/b"), "");
  EXPECT_EQ(store_.gets, 3) << "the finished job's payload is not read";
  EXPECT_NE(Submit("new-2", "ck/a").find("of job live,"), std::string::npos);
  EXPECT_NE(Submit("new-3", "ck/c").find("of job escaped,"), std::string::npos);
  EXPECT_EQ(store_.gets, 3) << "read once";
}

TEST_F(CheckpointClaimsTest, AStoreThatFailsIsAFaultAndIsReadAgainNextTime) {
  JobRecord live;
  live.seq = next_seq_++;
  live.id = "live";
  live.status = model::JobStatus::kRunnable;
  jobs_.emplace(live.seq, std::move(live));
  store_.payloads["live"] = PayloadWithCheckpoint(Dir("ck/a"));
  store_.fail = true;
  JobRecord job;
  job.seq = next_seq_++;
  job.id = "new";
  EXPECT_EQ(claims_.Claim(Dir("ck/a"), job, jobs_, store_).code(), StatusCode::kInternal);
  store_.fail = false;
  EXPECT_NE(Submit("new", "ck/a").find("of job live,"), std::string::npos);
}

TEST_F(CheckpointClaimsTest, FinishedJobsClaimsDoNotPileUp) {
  for (int i = 0; i < 5000; ++i) {
    const std::string id = "job-" + std::to_string(i);
    ASSERT_EQ(Submit(id, "ck/" + std::to_string(i)), "");
    Job(id).status = model::JobStatus::kFailed;
  }
  EXPECT_LT(claims_.size(), 2100U);
}

}  // namespace
}  // namespace allot::server
