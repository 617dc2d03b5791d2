#include "server/payload.h"

#include "server/api_error.h"

namespace allot::server {

namespace {

constexpr std::size_t kMaxPayloadBytes = 10 * 1024;

std::vector<std::string> StringList(const Json& obj, const char* field, const std::string& path) {
  std::vector<std::string> out;
  const Json* list = OptionalArray(obj, field);
  if (list == nullptr) return out;
  for (const Json& v : *list) {
    if (!v.is_string()) Refuse(path + " must be a list of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

void ReadResources(const Json& p, ParsedPayload* out) {
  std::vector<model::UnitCount> parts;
  const Json* rc = OptionalObject(p, "ResourceConfig");
  if (rc == nullptr) {
    Refuse("serviceRequestPayload.ResourceConfig is required (InstanceType and InstanceCount)");
  }
  if (const Json* groups = OptionalArray(*rc, "InstanceGroups"); groups && !groups->empty()) {
    for (const Json& g : *groups) {
      const std::int64_t n = RequireInt(g, "InstanceCount");
      RequireRange(n, "serviceRequestPayload.ResourceConfig.InstanceGroups.InstanceCount", 1, 1000);
      parts.push_back({RequireString(g, "InstanceType"), n});
    }
  } else {
    const std::string type = OptionalString(*rc, "InstanceType").value_or("");
    if (type.empty()) Refuse("serviceRequestPayload.ResourceConfig.InstanceType is required");
    const std::int64_t n = OptionalInt(*rc, "InstanceCount").value_or(1);
    RequireRange(n, "serviceRequestPayload.ResourceConfig.InstanceCount", 1, 1000);
    parts.push_back({type, n});
  }
  out->launch.instance_type = parts.front().unit;
  std::int64_t hosts = 0;
  for (const model::UnitCount& u : parts) hosts += u.count;
  out->launch.instance_count = static_cast<int>(hosts);
  Result<model::Demand> demand = model::NormalizeDemand(parts);
  if (!demand.ok()) Refuse("serviceRequestPayload.ResourceConfig: " + demand.status().message());
  out->demand = demand.value();
}

// A local path from a file:// URI (the only S3Uri scheme a local executor can read).
std::string LocalPathOf(const std::string& uri, const std::string& field) {
  const std::string scheme = "file://";
  if (uri.rfind(scheme, 0) != 0 || uri.size() == scheme.size() || uri[scheme.size()] != '/') {
    Refuse(field + " must be a file:///absolute/path URI on this machine, got \"" + uri + "\"");
  }
  return uri.substr(scheme.size());
}

void ReadTrainingInputs(const Json& p, ParsedPayload* out) {
  if (const Json* hps = OptionalObject(p, "HyperParameters")) {
    for (const auto& [k, v] : hps->items()) {
      if (!v.is_string()) Refuse("serviceRequestPayload.HyperParameters." + k + " must be a string");
      out->launch.hyperparameters[k] = v.get<std::string>();
    }
  }
  if (const Json* channels = OptionalArray(p, "InputDataConfig")) {
    for (const Json& c : *channels) {
      const std::string name = RequireString(c, "ChannelName");
      const Json* source = OptionalObject(c, "DataSource");
      const Json* s3 = source ? OptionalObject(*source, "S3DataSource") : nullptr;
      if (s3 == nullptr) {
        Refuse("serviceRequestPayload.InputDataConfig." + name + ".DataSource.S3DataSource is "
               "required");
      }
      out->launch.channels.emplace_back(
          name, LocalPathOf(RequireString(*s3, "S3Uri"),
                            "serviceRequestPayload.InputDataConfig." + name + ".S3Uri"));
    }
  }
  if (const Json* cc = OptionalObject(p, "CheckpointConfig")) {
    if (auto local = OptionalString(*cc, "LocalPath")) {
      if (local->empty() || (*local)[0] != '/') {
        Refuse("serviceRequestPayload.CheckpointConfig.LocalPath must be an absolute path");
      }
      out->launch.checkpoint_local_path = *local;
    }
    if (auto uri = OptionalString(*cc, "S3Uri")) {
      out->launch.checkpoint_sync_dir =
          LocalPathOf(*uri, "serviceRequestPayload.CheckpointConfig.S3Uri");
    }
  }
}

}  // namespace

ParsedPayload ParsePayload(const std::string& payload, const std::string& job_name) {
  if (payload.size() > kMaxPayloadBytes) {
    Refuse("serviceRequestPayload must be at most 10240 bytes, got " +
           std::to_string(payload.size()));
  }
  Json p = Json::parse(payload, nullptr, false);
  if (p.is_discarded() || !p.is_object()) {
    Refuse("serviceRequestPayload must be a JSON object (a SageMaker CreateTrainingJob request)");
  }
  ParsedPayload out;
  out.launch.training_job_name = OptionalString(p, "TrainingJobName").value_or(job_name);
  const Json* algo = OptionalObject(p, "AlgorithmSpecification");
  if (algo == nullptr) {
    Refuse("serviceRequestPayload.AlgorithmSpecification.ContainerEntrypoint is required to run "
           "the job on this machine");
  }
  out.launch.argv = StringList(*algo, "ContainerEntrypoint",
                               "serviceRequestPayload.AlgorithmSpecification.ContainerEntrypoint");
  if (out.launch.argv.empty()) {
    Refuse("serviceRequestPayload.AlgorithmSpecification.ContainerEntrypoint is required to run "
           "the job on this machine (a non-empty list of strings)");
  }
  for (std::string& a : StringList(*algo, "ContainerArguments",
                                   "serviceRequestPayload.AlgorithmSpecification."
                                   "ContainerArguments")) {
    out.launch.argv.push_back(std::move(a));
  }
  if (const Json* env = OptionalObject(p, "Environment")) {
    for (const auto& [k, v] : env->items()) {
      if (!v.is_string()) Refuse("serviceRequestPayload.Environment." + k + " must be a string");
      out.launch.environment[k] = v.get<std::string>();
    }
  }
  ReadResources(p, &out);
  ReadTrainingInputs(p, &out);
  if (const Json* stop = OptionalObject(p, "StoppingCondition")) {
    out.max_runtime_seconds = OptionalInt(*stop, "MaxRuntimeInSeconds");
  }
  return out;
}

}  // namespace allot::server
