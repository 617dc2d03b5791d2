// `allot server --host-map FILE`: which GPUs and CPUs each instance slot of a type owns.

#include <yaml-cpp/yaml.h>

#include <stdexcept>

#include "cli/commands.h"

namespace allot::cli {

std::map<std::string, std::vector<server::Options::Slot>> ReadHostMap(const std::string& path) {
  const YAML::Node root = YAML::LoadFile(path);
  if (!root.IsMap()) throw std::runtime_error("expected a map from instance type to slot lists");
  std::map<std::string, std::vector<server::Options::Slot>> map;
  for (const auto& entry : root) {
    const std::string unit = entry.first.as<std::string>();
    if (!entry.second.IsSequence()) {
      throw std::runtime_error(unit + ": expected a list of slots {gpus: ..., cpus: ...}");
    }
    for (const YAML::Node& slot : entry.second) {
      if (!slot.IsMap()) throw std::runtime_error(unit + ": each slot is a map with gpus/cpus");
      server::Options::Slot s;
      for (const auto& kv : slot) {
        const std::string key = kv.first.as<std::string>();
        if (key == "gpus") {
          s.gpus = kv.second.as<std::string>();
        } else if (key == "cpus") {
          s.cpus = kv.second.as<std::string>();
        } else {
          throw std::runtime_error(unit + ": unknown slot field " + key + " (gpus, cpus)");
        }
      }
      map[unit].push_back(s);
    }
  }
  return map;
}

}  // namespace allot::cli
