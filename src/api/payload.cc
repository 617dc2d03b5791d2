#include "api/payload.h"

#include <set>

#include "api/fields.h"
#include "api/wire_error.h"
#include "common/strings.h"
#include "model/rules.h"

namespace allot::api {

namespace {

// SageMaker's own limits for the CreateTrainingJob fields Allot reads, and Allot's where it
// documents none.
constexpr std::size_t kMaxPayloadBytes = std::size_t{10} * 1024;
constexpr std::int64_t kMaxInstancesPerJob = 1000;  // Allot: hosts of one job, all groups
constexpr std::size_t kMaxInstanceGroups = 5;
constexpr std::int64_t kMaxRuntimeSeconds = 2'419'200;  // SageMaker: 28 days
constexpr std::size_t kMaxChannels = 20;
constexpr std::size_t kMaxChannelName = 64;
constexpr std::size_t kMaxEnvironment = 100;
constexpr std::size_t kMaxEnvironmentKey = 512;
constexpr std::size_t kMaxEnvironmentValue = 512;
constexpr std::size_t kMaxHyperParameters = 100;
constexpr std::size_t kMaxArgument = std::size_t{256} * 1024;
constexpr std::size_t kMaxPath = 1024;

const std::string kPrefix = "serviceRequestPayload.";

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// ContainerEntrypoint / ContainerArguments: strings execve can take (no NUL), each bounded.
std::vector<std::string> Arguments(const Json& obj, const char* field, const std::string& path) {
  std::vector<std::string> out = OptionalStringList(obj, field, 1000, path);
  for (const std::string& s : out) {
    if (s.find('\0') != std::string::npos) Refuse(path + " entries must not contain NUL");
    if (s.size() > kMaxArgument) Refuse(path + " entries must be at most 262144 bytes");
  }
  return out;
}

std::int64_t InstanceCount(const Json& obj, const std::string& path) {
  return RequireInt(obj, "InstanceCount", 1, kMaxInstancesPerJob, path);
}

void ReadResources(const Json& p, ParsedPayload* out) {
  std::vector<model::UnitCount> parts;
  const std::string rc_path = kPrefix + "ResourceConfig";
  const Json* rc = OptionalObject(p, "ResourceConfig", rc_path);
  if (rc == nullptr) Refuse(rc_path + " is required (InstanceType and InstanceCount)");
  if (const Json* groups = OptionalArray(*rc, "InstanceGroups", rc_path + ".InstanceGroups");
      groups && !groups->empty()) {
    if (groups->size() > kMaxInstanceGroups) {
      Refuse(rc_path + ".InstanceGroups allows at most 5 groups, got " +
             std::to_string(groups->size()));
    }
    RequireObjects(*groups, rc_path + ".InstanceGroups");
    for (const Json& g : *groups) {
      const std::string type =
          RequireString(g, "InstanceType", rc_path + ".InstanceGroups.InstanceType");
      RefuseUnless(model::rules::CheckCapacityUnit(type, rc_path + ".InstanceGroups.InstanceType"));
      parts.push_back({type, InstanceCount(g, rc_path + ".InstanceGroups.InstanceCount")});
    }
  } else {
    const std::string type = RequireString(*rc, "InstanceType", rc_path + ".InstanceType");
    RefuseUnless(model::rules::CheckCapacityUnit(type, rc_path + ".InstanceType"));
    const std::int64_t n =
        rc->contains("InstanceCount") ? InstanceCount(*rc, rc_path + ".InstanceCount") : 1;
    parts.push_back({type, n});
  }
  out->launch.instance_type = parts.front().unit;
  std::int64_t hosts = 0;
  for (const model::UnitCount& u : parts) hosts += u.count;  // each <= 1000, at most 5
  if (hosts > kMaxInstancesPerJob) {
    Refuse(rc_path + ".InstanceGroups total at most 1000 instances per job, got " +
           std::to_string(hosts));
  }
  out->launch.instance_count = static_cast<int>(hosts);
  Result<model::Demand> demand = model::NormalizeDemand(parts);
  if (!demand.ok()) Refuse(rc_path + ": " + demand.status().message());
  out->demand = demand.value();
}

// An absolute path without ".", ".." or empty segments, NUL or a trailing slash.
bool IsCleanAbsolutePath(const std::string& path) {
  if (path.empty() || path[0] != '/' || path.size() > kMaxPath) return false;
  if (path.find('\0') != std::string::npos) return false;
  if (path.size() > 1 && path.back() == '/') return false;
  std::size_t start = 1;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string segment = path.substr(start, end - start);
    if (path.size() > 1 && (segment.empty() || segment == "." || segment == "..")) return false;
    start = end + 1;
  }
  return true;
}

// A local path from a file:// URI (the only S3Uri scheme a local executor can read).
std::string LocalPathOf(const std::string& uri, const std::string& field) {
  const std::string scheme = "file://";
  std::string path = uri.rfind(scheme, 0) == 0 ? uri.substr(scheme.size()) : "";
  if (!IsCleanAbsolutePath(path) || path == "/") {
    Refuse(field +
           " must be a file:///absolute/path URI on this machine (no '.' or '..' "
           "segments), got " +
           Quoted(Json(uri)));
  }
  return path;
}

void CheckChannelName(const std::string& name, std::set<std::string>& seen,
                      const std::string& path) {
  bool ok = !name.empty() && name.size() <= kMaxChannelName && name != "." && name != "..";
  for (char c : name) ok = ok && (IsAlnum(c) || c == '.' || c == '-' || c == '_');
  if (!ok) {
    Refuse(path + " must be 1 to 64 letters, digits, '.', '-' or '_' (not \".\" or \"..\"), got " +
           Quoted(Json(name)));
  }
  if (!seen.insert(name).second)
    Refuse(path + " " + Quoted(Json(name)) + " appears more than once");
}

void ReadChannels(const Json& p, ParsedPayload* out) {
  const std::string path = kPrefix + "InputDataConfig";
  const Json* channels = OptionalArray(p, "InputDataConfig", path);
  if (channels == nullptr) return;
  if (channels->size() > kMaxChannels) {
    Refuse(path + " allows at most 20 channels, got " + std::to_string(channels->size()));
  }
  RequireObjects(*channels, path);
  std::set<std::string> seen;
  for (const Json& c : *channels) {
    const std::string name = RequireString(c, "ChannelName", path + ".ChannelName");
    CheckChannelName(name, seen, path + ".ChannelName");
    const std::string source_path = path + "." + name + ".DataSource.S3DataSource";
    const Json* source = OptionalObject(c, "DataSource", path + "." + name + ".DataSource");
    const Json* s3 = source ? OptionalObject(*source, "S3DataSource", source_path) : nullptr;
    if (s3 == nullptr) Refuse(source_path + " is required");
    out->launch.channels.emplace_back(
        name,
        LocalPathOf(RequireString(*s3, "S3Uri", source_path + ".S3Uri"), source_path + ".S3Uri"));
  }
}

// The checkpoint directory is bound at LocalPath inside the sandbox: never over the root, the
// SageMaker input tree or the system directories the job runs from, nor over the private,
// size-capped /tmp, which would then be the checkpoint directory on disk (/dev/shm, the other
// such mount, is under /dev).
void CheckCheckpointPath(const std::string& local, const std::string& field, PayloadSource source) {
  static const char* const kSystem[] = {"/bin",   "/boot",  "/dev",    "/etc",  "/lib",
                                        "/lib32", "/lib64", "/libx32", "/proc", "/run",
                                        "/sbin",  "/sys",   "/usr"};
  bool ok = IsCleanAbsolutePath(local) && local != "/" && local != "/opt" && local != "/opt/ml" &&
            !IsUnder(local, "/opt/ml/input") &&
            (source == PayloadSource::kStored || !IsUnder(local, "/tmp"));
  for (const char* dir : kSystem) ok = ok && !IsUnder(local, dir);
  if (!ok) {
    Refuse(field +
           " must be an absolute path without '.' or '..' segments, other than /, /opt/ml, "
           "/tmp and the system directories, and not under /opt/ml/input; got " +
           Quoted(Json(local)));
  }
}

void ReadTrainingInputs(const Json& p, ParsedPayload* out, PayloadSource source) {
  if (const Json* hps = OptionalObject(p, "HyperParameters", kPrefix + "HyperParameters")) {
    if (hps->size() > kMaxHyperParameters) {
      Refuse(kPrefix + "HyperParameters allows at most 100 entries");
    }
    for (const auto& [k, v] : hps->items()) {
      if (!v.is_string()) Refuse(kPrefix + "HyperParameters." + k + " must be a string");
      out->launch.hyperparameters[k] = v.get<std::string>();
    }
  }
  ReadChannels(p, out);
  const std::string cc_path = kPrefix + "CheckpointConfig";
  if (const Json* cc = OptionalObject(p, "CheckpointConfig", cc_path)) {
    if (auto local = OptionalString(*cc, "LocalPath", cc_path + ".LocalPath")) {
      CheckCheckpointPath(*local, cc_path + ".LocalPath", source);
      out->launch.checkpoint_local_path = *local;
    }
    if (auto uri = OptionalString(*cc, "S3Uri", cc_path + ".S3Uri")) {
      out->launch.checkpoint_sync_dir = LocalPathOf(*uri, cc_path + ".S3Uri");
    }
  }
}

// OutputDataConfig.S3OutputPath: only a file:// one is a local path (and checked as one); an
// s3:// one, which the SageMaker SDK always sends, is ignored as before.
void ReadOutput(const Json& p, ParsedPayload* out) {
  const std::string path = kPrefix + "OutputDataConfig";
  const Json* output = OptionalObject(p, "OutputDataConfig", path);
  if (output == nullptr) return;
  std::optional<std::string> uri = OptionalString(*output, "S3OutputPath", path + ".S3OutputPath");
  if (uri && AsciiLower(uri->substr(0, 5)) == "file:") {
    out->output_dir = LocalPathOf(*uri, path + ".S3OutputPath");
  }
}

void ReadEnvironment(const Json& p, ParsedPayload* out) {
  const std::string path = kPrefix + "Environment";
  const Json* env = OptionalObject(p, "Environment", path);
  if (env == nullptr) return;
  if (env->size() > kMaxEnvironment) Refuse(path + " allows at most 100 variables");
  for (const auto& [k, v] : env->items()) {
    bool ok = !k.empty() && k.size() <= kMaxEnvironmentKey && !(k[0] >= '0' && k[0] <= '9');
    for (char c : k) ok = ok && (IsAlnum(c) || c == '_');
    if (!ok) {
      Refuse(path +
             " names must be 1 to 512 letters, digits or '_', not starting with a digit, "
             "got " +
             Quoted(Json(k)));
    }
    if (!v.is_string()) Refuse(path + "." + k + " must be a string, got " + Quoted(v));
    const std::string& value = v.get_ref<const std::string&>();
    if (value.size() > kMaxEnvironmentValue || value.find('\0') != std::string::npos) {
      Refuse(path + "." + k + " must be at most 512 characters without NUL");
    }
    out->launch.environment[k] = value;
  }
}

void ReadCommand(const Json& p, ParsedPayload* out) {
  const std::string path = kPrefix + "AlgorithmSpecification";
  const std::string required = path +
                               ".ContainerEntrypoint is required to run the job on this "
                               "machine (a non-empty list of strings, the first non-empty)";
  const Json* algo = OptionalObject(p, "AlgorithmSpecification", path);
  if (algo == nullptr) Refuse(required);
  out->launch.argv = Arguments(*algo, "ContainerEntrypoint", path + ".ContainerEntrypoint");
  if (out->launch.argv.empty() || out->launch.argv[0].empty()) Refuse(required);
  for (std::string& a : Arguments(*algo, "ContainerArguments", path + ".ContainerArguments")) {
    out->launch.argv.push_back(std::move(a));
  }
}

void ReadTrainingJobName(const Json& p, const std::string& job_name, ParsedPayload* out) {
  const std::string path = kPrefix + "TrainingJobName";
  std::optional<std::string> name = OptionalString(p, "TrainingJobName", path);
  if (!name) {
    out->launch.training_job_name = job_name;
    return;
  }
  // SageMaker: 1-63 letters, digits and hyphens, starting with a letter or digit.
  bool ok = !name->empty() && name->size() <= 63 && IsAlnum(name->front());
  for (char c : *name) ok = ok && (IsAlnum(c) || c == '-');
  if (!ok) {
    Refuse(path +
           " must be 1 to 63 letters, digits and hyphens starting with a letter or digit, "
           "got " +
           Quoted(Json(*name)));
  }
  out->launch.training_job_name = *name;
}

}  // namespace

ParsedPayload ParsePayload(const std::string& payload, const std::string& job_name,
                           PayloadSource source) {
  if (payload.size() > kMaxPayloadBytes) {
    Refuse("serviceRequestPayload must be at most 10240 bytes, got " +
           std::to_string(payload.size()));
  }
  Json p = ParseBody(payload, "serviceRequestPayload");  // the same limits as a request body
  ParsedPayload out;
  ReadTrainingJobName(p, job_name, &out);
  ReadCommand(p, &out);
  ReadEnvironment(p, &out);
  ReadResources(p, &out);
  ReadTrainingInputs(p, &out, source);
  ReadOutput(p, &out);
  const std::string stop_path = kPrefix + "StoppingCondition";
  if (const Json* stop = OptionalObject(p, "StoppingCondition", stop_path)) {
    out.max_runtime_seconds = OptionalInt(*stop, "MaxRuntimeInSeconds", 1, kMaxRuntimeSeconds,
                                          stop_path + ".MaxRuntimeInSeconds");
  }
  return out;
}

bool IsUnder(const std::string& path, const std::string& dir) {
  if (dir == "/") return !path.empty() && path[0] == '/';
  return path == dir || path.rfind(dir + "/", 0) == 0;
}

}  // namespace allot::api
