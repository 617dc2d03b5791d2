// The executor the server runs jobs with (Options::executor).

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "exec/local_executor.h"
#include "exec/slurm_executor.h"
#include "server/controller.h"
#include "server/log.h"

namespace allot::server {

Result<std::unique_ptr<exec::Executor>> Controller::MakeExecutor(exec::Callbacks callbacks) {
  exec::LayoutOptions layout;
  layout.sandbox = options_.sandbox;
  if (options_.executor != "slurm") return exec::NewLocalExecutor({}, layout, std::move(callbacks));
  exec::SlurmOptions slurm;
  slurm.placements = options_.slurm_map;
  slurm.sandbox = options_.sandbox;
  slurm.warn = [](const std::string& event, const std::string& message) {
    log::Warn(event, {{"message", message}});
  };
  slurm.required_instances = [this] { return RequiredInstances(); };
  if (!options_.slurm_bin_dir.empty()) slurm.srun = options_.slurm_bin_dir + "/srun";
  std::unique_ptr<exec::SlurmClient> client = exec::NewSlurmCli(
      exec::SlurmCliOptions{.slurm_conf = options_.slurm_conf, .bin_dir = options_.slurm_bin_dir});
  ALLOT_RETURN_IF_ERROR(exec::CheckSlurmCluster(*client, slurm));
  log::Info("executor.slurm", {{"partitions", static_cast<std::int64_t>(slurm.placements.size())},
                               {"shared_dir", options_.shared_dir}});
  return exec::NewSlurmExecutor(slurm, std::move(client), std::move(callbacks));
}

std::map<std::string, int> Controller::RequiredInstances() {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, int> required;
  for (const auto& [name, env] : environments_) {
    for (const model::CapacityLimit& limit : env.capacity_limits) {
      if (limit.unit == "NUM_INSTANCES") continue;
      const int count = static_cast<int>(std::min<std::int64_t>(limit.max_capacity, 1 << 30));
      required[limit.unit] = std::max(required[limit.unit], count);
    }
  }
  return required;
}

}  // namespace allot::server
