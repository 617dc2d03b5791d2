// Validation at the wire, checked in seconds without a server: the payload decoder and the field
// readers refuse bad input with a message naming the field, and accept what SageMaker accepts.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/api_error.h"
#include "server/fields.h"
#include "server/payload.h"

namespace allot::server {
namespace {

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

}  // namespace
}  // namespace allot::server
