#include "exec/slurm_launch.h"

#include <nlohmann/json.hpp>

#include "env/files.h"

namespace allot::exec {

namespace {

using Json = nlohmann::json;

Json EncodeSpec(const LaunchSpec& s) {
  Json channels = Json::array();
  for (const LaunchSpec::Channel& c : s.channels) channels.push_back({c.name, c.source_dir});
  Json slots = Json::array();
  for (const LaunchSpec::HostSlot& h : s.host_slots) slots.push_back({h.gpus, h.cpus});
  Json out = {{"job", s.job},
              {"job_id", s.job_id},
              {"share", s.share},
              {"attempt", s.attempt},
              {"name", s.name},
              {"argv", s.argv},
              {"environment", s.environment},
              {"instance_type", s.instance_type},
              {"instance_count", s.instance_count},
              {"attempt_dir", s.attempt_dir},
              {"job_dir", s.job_dir},
              {"hyperparameters", s.hyperparameters},
              {"channels", channels},
              {"checkpoint_local_path", s.checkpoint_local_path},
              {"checkpoint_sync_dir", s.checkpoint_sync_dir},
              {"self_exe", s.self_exe},
              {"host_slots", slots},
              {"limits",
               {s.limits.memory_bytes, s.limits.pids, s.limits.tmp_bytes, s.limits.disk_bytes,
                s.limits.files}},
              {"readonly_paths", s.readonly_paths}};
  if (s.user) out["user"] = {s.user->uid, s.user->gid};
  return out;
}

LaunchSpec DecodeSpec(const Json& in) {
  LaunchSpec s;
  s.job = in.at("job").get<model::JobId>();
  s.job_id = in.at("job_id").get<std::string>();
  s.share = in.at("share").get<std::string>();
  s.attempt = in.at("attempt").get<int>();
  s.name = in.at("name").get<std::string>();
  s.argv = in.at("argv").get<std::vector<std::string>>();
  s.environment = in.at("environment").get<std::map<std::string, std::string>>();
  s.instance_type = in.at("instance_type").get<std::string>();
  s.instance_count = in.at("instance_count").get<int>();
  s.attempt_dir = in.at("attempt_dir").get<std::string>();
  s.job_dir = in.at("job_dir").get<std::string>();
  s.hyperparameters = in.at("hyperparameters").get<std::map<std::string, std::string>>();
  for (const Json& c : in.at("channels")) {
    s.channels.push_back({c.at(0).get<std::string>(), c.at(1).get<std::string>()});
  }
  s.checkpoint_local_path = in.at("checkpoint_local_path").get<std::string>();
  s.checkpoint_sync_dir = in.at("checkpoint_sync_dir").get<std::string>();
  s.self_exe = in.at("self_exe").get<std::string>();
  for (const Json& h : in.at("host_slots")) {
    s.host_slots.push_back({h.at(0).get<std::string>(), h.at(1).get<std::string>()});
  }
  const Json& limits = in.at("limits");
  s.limits = {limits.at(0).get<std::int64_t>(), limits.at(1).get<std::int64_t>(),
              limits.at(2).get<std::int64_t>(), limits.at(3).get<std::int64_t>(),
              // A launch written before the file limit (a server upgraded under running jobs).
              limits.size() > 4 ? limits.at(4).get<std::int64_t>() : 0};
  s.readonly_paths = in.at("readonly_paths").get<std::vector<std::string>>();
  if (in.contains("user")) {
    s.user = JobUser{in["user"].at(0).get<uid_t>(), in["user"].at(1).get<gid_t>()};
  }
  return s;
}

}  // namespace

Status WriteSlurmLaunch(const std::string& path, const SlurmLaunch& launch) {
  const Json doc = {{"spec", EncodeSpec(launch.spec)},
                    {"sandbox", launch.sandbox},
                    {"srun", launch.srun},
                    {"node_addresses", launch.node_addresses}};
  return env::WriteFileAtomically(path, doc.dump(), 0600);
}

Result<SlurmLaunch> ReadSlurmLaunch(const std::string& path) {
  Result<std::string> text = env::ReadFile(path);
  if (!text.ok()) return text.status();
  try {
    const Json doc = Json::parse(*text);
    SlurmLaunch launch;
    launch.spec = DecodeSpec(doc.at("spec"));
    launch.sandbox = doc.at("sandbox").get<bool>();
    launch.srun = doc.at("srun").get<std::string>();
    launch.node_addresses = doc.at("node_addresses").get<std::map<std::string, std::string>>();
    return launch;
  } catch (const Json::exception& e) {
    return InvalidArgument(path + " is not a launch file: " + e.what());
  }
}

}  // namespace allot::exec
