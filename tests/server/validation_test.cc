// Validation at the wire, checked in seconds without a server: the payload decoder and the field
// readers refuse bad input with a message naming the field, and accept what SageMaker accepts.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "api/fields.h"
#include "server/api_error.h"
#include "server/local_paths.h"
#include "server/support/test_dir.h"

namespace allot::server {
namespace {

using Json = nlohmann::json;
using api::OptionalInt;
using api::OptionalString;
using api::ParseBody;
using api::ParsedPayload;
using api::ParsePayload;
using api::PayloadSource;
using api::Quoted;
using api::ReadTags;
using api::RequireInt;
using api::RequireString;

Json GoodPayload() {
  return Json::parse(R"({
    "AlgorithmSpecification": {"TrainingInputMode": "File",
                               "ContainerEntrypoint": ["/bin/sh", "-c"],
                               "ContainerArguments": ["exit 0"]},
    "ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 2, "VolumeSizeInGB": 1},
    "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
    "HyperParameters": {"lr": "0.1"},
    "Environment": {"MODE": "fast"},
    "CheckpointConfig": {"LocalPath": "/opt/ml/checkpoints"}
  })");
}

// The message of the ClientError `fn` throws, or "" when it throws none.
template <typename Fn>
std::string Refusal(Fn fn) {
  try {
    fn();
  } catch (const ClientError& e) {
    return e.what();
  }
  return "";
}

TEST(PayloadValidation, AGoodPayloadIsRead) {
  ParsedPayload p = ParsePayload(GoodPayload().dump(), "job-1");
  EXPECT_EQ(p.launch.training_job_name, "job-1");
  EXPECT_EQ(p.launch.argv, (std::vector<std::string>{"/bin/sh", "-c", "exit 0"}));
  EXPECT_EQ(p.launch.instance_count, 2);
  ASSERT_EQ(p.demand.size(), 1U);
  EXPECT_EQ(p.demand[0].count, 2);
  EXPECT_EQ(p.max_runtime_seconds, 3600);
  EXPECT_EQ(p.launch.environment.at("MODE"), "fast");
}

TEST(PayloadValidation, EachBadFieldIsRefusedByName) {
  struct Case {
    const char* name;
    const char* pointer;  // JSON pointer into the good payload
    Json value;
    const char* field;  // what the message must name
  };
  const Case kCases[] = {
      {"max runtime 0", "/StoppingCondition/MaxRuntimeInSeconds", 0, "MaxRuntimeInSeconds"},
      {"max runtime 2^63-1", "/StoppingCondition/MaxRuntimeInSeconds", INT64_MAX,
       "MaxRuntimeInSeconds"},
      {"empty entrypoint", "/AlgorithmSpecification/ContainerEntrypoint", Json::array({""}),
       "ContainerEntrypoint"},
      {"NUL in entrypoint", "/AlgorithmSpecification/ContainerEntrypoint",
       Json::array({std::string("a\0b", 3)}), "ContainerEntrypoint"},
      {"empty environment name", "/Environment", Json{{"", "x"}}, "Environment"},
      {"A=B environment name", "/Environment", Json{{"A=B", "x"}}, "Environment"},
      {"checkpoint at /", "/CheckpointConfig/LocalPath", "/", "CheckpointConfig.LocalPath"},
      {"checkpoint under input", "/CheckpointConfig/LocalPath", "/opt/ml/input/data/x",
       "CheckpointConfig.LocalPath"},
      {"checkpoint with ..", "/CheckpointConfig/LocalPath", "/opt/ml/../etc",
       "CheckpointConfig.LocalPath"},
      // The private tmpfs /tmp would be bound over by the job's disk directory.
      {"checkpoint at /tmp", "/CheckpointConfig/LocalPath", "/tmp", "CheckpointConfig.LocalPath"},
      {"checkpoint under /tmp", "/CheckpointConfig/LocalPath", "/tmp/ck",
       "CheckpointConfig.LocalPath"},
      {"instance count huge", "/ResourceConfig/InstanceCount", INT64_MAX, "InstanceCount"},
      {"instance type traversal", "/ResourceConfig/InstanceType", "../x", "InstanceType"},
      {"training job name", "/TrainingJobName", "../../etc", "TrainingJobName"},
      {"channel traversal", "/InputDataConfig", Json::parse(R"([{"ChannelName": "../../x",
                        "DataSource": {"S3DataSource": {"S3Uri": "file:///tmp"}}}])"),
       "ChannelName"},
      {"channel twice", "/InputDataConfig",
       Json::parse(
           R"([{"ChannelName": "a", "DataSource": {"S3DataSource": {"S3Uri": "file:///tmp"}}},
                       {"ChannelName": "a", "DataSource": {"S3DataSource": {"S3Uri": "file:///tmp"}}}])"),
       "ChannelName"},
      {"1200 instances", "/ResourceConfig/InstanceGroups",
       Json::parse(R"([{"InstanceType": "ml.g5.xlarge", "InstanceCount": 600},
                       {"InstanceType": "ml.g5.xlarge", "InstanceCount": 600}])"),
       "InstanceGroups"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    Json p = GoodPayload();
    p[Json::json_pointer(c.pointer)] = c.value;
    const std::string message = Refusal([&] { ParsePayload(p.dump(), "job"); });
    EXPECT_NE(message.find(c.field), std::string::npos) << message;
  }
}

// A rule added after a job was stored holds for new submissions only: the stored job still
// launches, and a running one keeps its checkpoints' sync and its claim.
TEST(PayloadValidation, AStoredPayloadIsReadUnderTheRulesItWasAcceptedBy) {
  Json p = GoodPayload();
  p["CheckpointConfig"] = {{"LocalPath", "/tmp/ck"}};
  EXPECT_NE(Refusal([&] { ParsePayload(p.dump(), "job"); }).find("CheckpointConfig.LocalPath"),
            std::string::npos);
  EXPECT_EQ(ParsePayload(p.dump(), "job", PayloadSource::kStored).launch.checkpoint_local_path,
            "/tmp/ck");
  p["CheckpointConfig"] = {{"LocalPath", "/usr/ck"}};  // refused since the beginning
  EXPECT_NE(Refusal([&] {
              ParsePayload(p.dump(), "job", PayloadSource::kStored);
            }).find("CheckpointConfig.LocalPath"),
            std::string::npos);
}

TEST(PayloadValidation, DeepOrBrokenPayloadsAreRefusedWithoutRecursion) {
  const std::string deep = R"({"x": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_NE(Refusal([&] { ParsePayload(deep, "job"); }).find("serviceRequestPayload"),
            std::string::npos);
  EXPECT_NE(Refusal([&] { ParsePayload("{\"a\": \"\xff\"}", "job"); }).find("UTF-8"),
            std::string::npos);
  EXPECT_NE(Refusal([&] { ParsePayload("[1]", "job"); }).find("JSON object"), std::string::npos);
}

TEST(FieldReaders, IntegersAreReadOnlyWithinTheirBounds) {
  const Json r = Json::parse(R"({"small": 5, "huge": 18446744073709551615, "float": 1.5,
                                 "negative": -1, "text": "7"})");
  EXPECT_EQ(OptionalInt(r, "small", 0, 10), 5);
  EXPECT_FALSE(OptionalInt(r, "absent", 0, 10).has_value());
  for (const char* field : {"huge", "float", "negative", "text"}) {
    SCOPED_TRACE(field);
    const std::string message = Refusal([&] { (void)OptionalInt(r, field, 0, 10, "x.y"); });
    EXPECT_NE(message.find("x.y must be an integer between 0 and 10"), std::string::npos)
        << message;
  }
}

TEST(FieldReaders, QuotedValuesStayShort) {
  EXPECT_EQ(Quoted(Json(std::string(1000, 'a'))).size(), 64U + 3U);
  EXPECT_EQ(Quoted(Json::array({1, 2, 3})), "a list of 3 items");
}

// --- file:// URIs and the --file-root directories (issue 10, section 1) ---

namespace fs = std::filesystem;

// A scratch tree per test: <tmp>/root (the file root, with data/ and a link out to /etc),
// <tmp>/data-dir (the server's data directory) and <tmp>/outside.
class FileRootsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = FreshTestDir("allot-roots");
    fs::create_directories(root() / "data");
    fs::create_directories(base_ / "data-dir");
    fs::create_directories(base_ / "outside");
    std::ofstream(root() / "data" / "train.csv") << "1,2\n";
    fs::create_directory_symlink("/etc", root() / "to-etc");
    fs::create_directory_symlink(root() / "data", root() / "to-data");
    fs::create_directory_symlink(base_ / "data-dir", root() / "to-data-dir");
    fs::create_directory_symlink(base_ / "nowhere", root() / "dangling");
  }
  void TearDown() override { fs::remove_all(base_); }

  fs::path root() const { return base_ / "root"; }
  std::string data_dir() const { return (base_ / "data-dir").string(); }

  // A payload with one file:// URI at `pointer` (a channel's, the checkpoint's or the output's).
  static ParsedPayload WithUri(const std::string& kind, const std::string& path) {
    Json p = GoodPayload();
    const std::string uri = "file://" + path;
    if (kind == "channel") {
      p["InputDataConfig"] = Json::array(
          {{{"ChannelName", "train"}, {"DataSource", {{"S3DataSource", {{"S3Uri", uri}}}}}}});
    } else if (kind == "checkpoint") {
      p["CheckpointConfig"]["S3Uri"] = uri;
    } else {
      p["OutputDataConfig"] = {{"S3OutputPath", uri}};
    }
    return ParsePayload(p.dump(), "job");
  }

  std::string Check(const std::string& kind, const std::string& path,
                    const std::vector<std::string>& roots,
                    const std::optional<exec::JobUser>& as = std::nullopt) {
    return CheckLocalPaths(WithUri(kind, path), roots, data_dir(), /*channels_exist=*/true, as)
        .message();
  }

  fs::path base_;
};

const char* const kFields[][2] = {
    {"channel", "serviceRequestPayload.InputDataConfig.train.DataSource.S3DataSource.S3Uri"},
    {"checkpoint", "serviceRequestPayload.CheckpointConfig.S3Uri"},
    {"output", "serviceRequestPayload.OutputDataConfig.S3OutputPath"}};

TEST_F(FileRootsTest, WithoutRootsEveryFileUriIsRefusedNamingTheFieldAndTheSetting) {
  for (const auto& [kind, field] : kFields) {
    SCOPED_TRACE(kind);
    const std::string path = (root() / "data").string();
    EXPECT_EQ(Check(kind, path, {}),
              std::string(field) + ": file://" + path +
                  " is not under an allowed file root; the server allows file:// URIs only "
                  "under the directories given with --file-root (none are set)");
  }
}

TEST_F(FileRootsTest, APathInARootOrTheRootItselfIsAllowed) {
  const std::vector<std::string> roots = {root().string()};
  for (const auto& [kind, field] : kFields) {
    SCOPED_TRACE(kind);
    EXPECT_EQ(Check(kind, root().string(), roots), "");
    EXPECT_EQ(Check(kind, (root() / "data").string(), roots), "");
    EXPECT_EQ(Check(kind, (root() / "to-data").string(), roots), "") << "a link within the root";
  }
  // A checkpoint or output location may be created later; a channel's source must exist.
  EXPECT_EQ(Check("checkpoint", (root() / "new" / "ck").string(), roots), "");
  EXPECT_EQ(Check("output", (root() / "new" / "out").string(), roots), "");
  EXPECT_NE(Check("channel", (root() / "new").string(), roots).find("does not exist"),
            std::string::npos);
}

TEST_F(FileRootsTest, PathsOutsideTheRootsAreRefusedWithoutLookingAtThem) {
  const std::vector<std::string> roots = {root().string(), (base_ / "outside").string()};
  for (const auto& [kind, field] : kFields) {
    SCOPED_TRACE(kind);
    for (const std::string& path : {std::string("/etc"), data_dir(), data_dir() + "/credentials",
                                    root().string() + "2", base_.string()}) {
      SCOPED_TRACE(path);
      const std::string message = Check(kind, path, roots);
      EXPECT_EQ(message.find(std::string(field) + ": file://" + path +
                             " is not under an allowed file root; "),
                0U)
          << message;
      EXPECT_NE(message.find("--file-root (set: " + root().string() + ", "), std::string::npos)
          << message;
    }
  }
  // A source outside the roots that does not exist reads like one that does.
  EXPECT_EQ(Check("channel", "/nonexistent/allot", roots).find("does not exist"),
            std::string::npos);
}

TEST_F(FileRootsTest, ALinkOutOfTheRootIsRefusedOnceResolved) {
  const std::vector<std::string> roots = {root().string()};
  for (const auto& [kind, field] : kFields) {
    SCOPED_TRACE(kind);
    for (const char* link : {"to-etc", "to-etc/shadow", "to-data-dir", "dangling", "dangling/x"}) {
      SCOPED_TRACE(link);
      const std::string message = Check(kind, (root() / link).string(), roots);
      EXPECT_NE(message.find("is not under an allowed file root once symbolic links are resolved"),
                std::string::npos)
          << message;
    }
  }
}

TEST_F(FileRootsTest, NoPathMayOverlapTheDataDirectoryWhateverTheRoots) {
  // `allot server` refuses such a root at start; the check refuses such paths anyway.
  const std::vector<std::string> roots = {base_.string()};
  EXPECT_EQ(Check("channel", (base_ / "outside").string(), roots), "");
  EXPECT_NE(Check("channel", data_dir(), roots), "");
  EXPECT_NE(Check("checkpoint", data_dir() + "/jobs", roots), "");
  EXPECT_NE(Check("output", base_.string(), roots), "") << "it contains the data directory";
}

TEST_F(FileRootsTest, CanonicalPathResolvesWhatExistsAndKeepsTheRest) {
  EXPECT_EQ(CanonicalPath((root() / "to-data" / "train.csv").string()),
            (root() / "data" / "train.csv").string());
  EXPECT_EQ(CanonicalPath((root() / "to-data" / "a" / "b").string()),
            (root() / "data" / "a" / "b").string());
  EXPECT_EQ(CanonicalPath((root() / "data" / "train.csv" / "x").string()),
            (root() / "data" / "train.csv" / "x").string());
  EXPECT_EQ(CanonicalPath("/"), "/");
  EXPECT_EQ(CanonicalPath((root() / "dangling" / "x").string()), std::nullopt);
  EXPECT_EQ(CanonicalPath("relative/path"), std::nullopt);
}

// The walk follows at most 40 links and looks at most at 4096 names, whatever the path and the
// links a tenant made: a path through chains of long links is refused (ELOOP), not resolved
// one prefix at a time for minutes under the server's lock. Within the budget, links resolve.
TEST_F(FileRootsTest, CanonicalPathStopsAtItsBudget) {
  fs::path previous = root() / "data";
  for (int i = 1; i <= 41; ++i) {
    const fs::path link = root() / ("hop-" + std::to_string(i));
    fs::create_directory_symlink(previous, link);
    previous = link;
  }
  EXPECT_EQ(CanonicalPath((root() / "hop-40" / "train.csv").string()),
            (root() / "data" / "train.csv").string());
  int error = 0;
  EXPECT_EQ(CanonicalPath((root() / "hop-41" / "train.csv").string(), &error), std::nullopt);
  EXPECT_EQ(error, ELOOP);
  // Three links whose targets each name "." 2,000 times before the next: 6,000 names.
  std::string dots;
  for (int i = 0; i < 2000; ++i) dots += "./";
  fs::create_directory_symlink(dots + "long-2", root() / "long");
  fs::create_directory_symlink(dots + "long-3", root() / "long-2");
  fs::create_directory_symlink(dots + "data", root() / "long-3");
  EXPECT_EQ(CanonicalPath((root() / "long-3" / "train.csv").string()),
            (root() / "data" / "train.csv").string());
  error = 0;
  EXPECT_EQ(CanonicalPath((root() / "long" / "train.csv").string(), &error), std::nullopt);
  EXPECT_EQ(error, ELOOP);
  fs::create_directory_symlink(std::string("data/../data/../") + "data", root() / "short");
  EXPECT_EQ(CanonicalPath((root() / "short" / "a" / "b").string()),
            (root() / "data" / "a" / "b").string());
}

// One budget serves all the paths of a request: three channels that each resolve within it are
// refused together once they pass it, so a request's cost is bounded, not each path's.
TEST_F(FileRootsTest, ARequestsPathsShareOneBudget) {
  std::string dots;
  for (int i = 0; i < 1500; ++i) dots += "./";
  fs::create_directory_symlink(dots + "data", root() / "half");
  const std::vector<std::string> roots = {root().string()};
  auto channels = [&](int n) {
    Json p = GoodPayload();
    p["InputDataConfig"] = Json::array();
    for (int i = 0; i < n; ++i) {
      p["InputDataConfig"].push_back(
          {{"ChannelName", "c" + std::to_string(i)},
           {"DataSource",
            {{"S3DataSource", {{"S3Uri", "file://" + (root() / "half").string()}}}}}});
    }
    return CheckLocalPaths(ParsePayload(p.dump(), "job"), roots, data_dir(),
                           /*channels_exist=*/true, std::nullopt)
        .message();
  };
  EXPECT_EQ(channels(2), "");
  EXPECT_NE(
      channels(3).find("c2.DataSource.S3DataSource.S3Uri: file://" + (root() / "half").string() +
                       " takes too many symbolic links to resolve"),
      std::string::npos)
      << channels(3);
}

// At launch the executor gets the paths as checked: a link swapped afterwards changes nothing
// that is bound or copied.
TEST_F(FileRootsTest, ResolveLocalPathsHandsTheLaunchThePathsAsChecked) {
  const std::vector<std::string> roots = {root().string()};
  ParsedPayload parsed = WithUri("channel", (root() / "to-data").string());
  parsed.launch.checkpoint_sync_dir = (root() / "to-data" / "ck").string();
  Result<api::LaunchInfo> resolved = ResolveLocalPaths(parsed, roots, data_dir(), std::nullopt);
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  ASSERT_EQ(resolved->channels.size(), 1U);
  EXPECT_EQ(resolved->channels[0].second, (root() / "data").string());
  EXPECT_EQ(resolved->checkpoint_sync_dir, (root() / "data" / "ck").string());
  EXPECT_EQ(resolved->argv, parsed.launch.argv);  // the rest as parsed
  // What is refused at submission is refused here too.
  EXPECT_FALSE(ResolveLocalPaths(WithUri("channel", (root() / "to-etc").string()), roots,
                                 data_dir(), std::nullopt)
                   .ok());
}

// As the share's jobs' user (a root server with the sandbox): a team's 0700 directory under the
// root hides what lies below it. A path past it is refused alike whether or not it is there,
// for every kind of URI; as the server, the same channel is accepted and the absent one is
// refused as absent. The roots themselves are resolved as the server.
TEST_F(FileRootsTest, PathsAreResolvedAsTheSharesJobsWouldReachThem) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: the check takes the share's user";
  const std::vector<std::string> roots = {root().string()};
  const exec::JobUser as{200123, 200123};
  fs::create_directories(root() / "team" / "data");
  std::ofstream(root() / "team" / "data" / "x.csv") << "1\n";
  fs::permissions(root() / "team", fs::perms::owner_all);
  fs::permissions(base_, fs::perms::owner_all | fs::perms::others_exec);
  fs::permissions(root(), fs::perms::owner_all | fs::perms::others_exec);
  for (const auto& [kind, field] : kFields) {
    SCOPED_TRACE(kind);
    for (const char* below : {"team/data", "team/nothing", "team/data/x.csv/y"}) {
      SCOPED_TRACE(below);
      const std::string path = (root() / below).string();
      EXPECT_EQ(Check(kind, path, roots, as),
                std::string(field) + ": file://" + path +
                    " is under a file root, but the jobs of this quota share (uid 200123) may "
                    "not reach it: every directory above it must let them through");
    }
    if (std::string(kind) != "checkpoint") {
      EXPECT_EQ(Check(kind, (root() / "data").string(), roots, as), "") << "open to others";
    }
  }
  // A checkpoint location is copied in and out as that user: it must be one the user may read
  // and write, or make.
  const std::string checkpoint = kFields[1][1];
  fs::create_directories(root() / "shared-ck");
  fs::permissions(root() / "shared-ck", fs::perms::all);
  EXPECT_EQ(Check("checkpoint", (root() / "shared-ck").string(), roots, as), "");
  EXPECT_EQ(Check("checkpoint", (root() / "shared-ck" / "new" / "ck").string(), roots, as), "");
  EXPECT_EQ(Check("checkpoint", (root() / "data").string(), roots, as),
            checkpoint + ": file://" + (root() / "data").string() +
                " the jobs of this quota share (uid 200123) may not read and write it: its "
                "checkpoints are copied in and out as that user");
  EXPECT_EQ(Check("checkpoint", (root() / "data" / "new").string(), roots, as),
            checkpoint + ": file://" + (root() / "data" / "new").string() +
                " does not exist yet, and the jobs of this quota share (uid 200123) may not make "
                "it: its checkpoints are copied in and out as that user");
  EXPECT_EQ(Check("checkpoint", (root() / "data").string(), roots), "") << "as the server";
  EXPECT_EQ(Check("channel", (root() / "team" / "data").string(), roots), "");
  EXPECT_NE(Check("channel", (root() / "team" / "nothing").string(), roots).find("does not exist"),
            std::string::npos);
  // Once the directory lets others through, the share's jobs reach the path: it is checked as
  // any other, its absence told as the job itself would see it.
  fs::permissions(root() / "team", fs::perms::owner_all | fs::perms::others_exec);
  EXPECT_EQ(Check("channel", (root() / "team" / "data").string(), roots, as), "");
  EXPECT_NE(
      Check("channel", (root() / "team" / "nothing").string(), roots, as).find("does not exist"),
      std::string::npos);
  // The thread is root again: the server's own checks see everything.
  fs::permissions(root() / "team", fs::perms::owner_all);
  EXPECT_EQ(Check("channel", (root() / "team" / "data").string(), roots), "");
}

TEST_F(FileRootsTest, RootsAreCanonicalAndNeverSlashOrOverlappingTheDataDirectory) {
  Result<std::vector<std::string>> ok =
      CanonicalFileRoots({(root() / "to-data").string(), (base_ / "outside").string()}, data_dir());
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok.value(),
            (std::vector<std::string>{(root() / "data").string(), (base_ / "outside").string()}));
  struct Case {
    std::string name;
    std::string root;
    std::string data_dir;
    std::string want;
  };
  const Case kCases[] = {
      {"slash", "/", data_dir(), "the root directory"},
      {"missing", (base_ / "missing").string(), data_dir(), "must be an existing directory"},
      {"a file", (root() / "data" / "train.csv").string(), data_dir(),
       "must be an existing directory"},
      {"the data dir", data_dir(), data_dir(), "overlaps the data directory"},
      {"inside it", data_dir() + "/jobs", data_dir(), "overlaps the data directory"},
      {"containing it", base_.string(), data_dir(), "overlaps the data directory"},
      {"a link to it", (root() / "to-data-dir").string(), data_dir(),
       "overlaps the data directory"},
      {"containing a data dir not created yet", base_.string(), (base_ / "new" / "data").string(),
       "overlaps the data directory"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    if (c.name == "inside it") fs::create_directories(c.root);
    Result<std::vector<std::string>> r = CanonicalFileRoots({root().string(), c.root}, c.data_dir);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().find("--file-root " + c.root + ": "), 0U)
        << r.status().message();
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status().message();
  }
}

TEST(PayloadValidation, OnlyAFileOutputPathIsALocalPath) {
  Json p = GoodPayload();
  p["OutputDataConfig"] = {{"S3OutputPath", "s3://bucket/prefix"}};
  EXPECT_EQ(ParsePayload(p.dump(), "job").output_dir, "");
  p["OutputDataConfig"] = {{"S3OutputPath", "file:///srv/out"}};
  EXPECT_EQ(ParsePayload(p.dump(), "job").output_dir, "/srv/out");
  p["OutputDataConfig"] = {{"S3OutputPath", "FILE:///srv/../etc"}};
  EXPECT_NE(Refusal([&] { ParsePayload(p.dump(), "job"); })
                .find("serviceRequestPayload.OutputDataConfig.S3OutputPath must be a "
                      "file:///absolute/path"),
            std::string::npos);
}

}  // namespace
}  // namespace allot::server
