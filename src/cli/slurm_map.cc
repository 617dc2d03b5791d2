#include "cli/slurm_map.h"

#include <yaml-cpp/yaml.h>

#include <stdexcept>

#include "exec/sandbox.h"

namespace allot::cli {

namespace {

exec::SlurmPlacement ReadPlacement(const std::string& type, const YAML::Node& entry) {
  if (!entry.IsMap()) {
    throw std::runtime_error(type +
                             ": expected {partition: ..., gres: ..., cpus: ..., memory: ...}");
  }
  exec::SlurmPlacement p;
  for (const auto& kv : entry) {
    const std::string key = kv.first.as<std::string>();
    const std::string value = kv.second.as<std::string>();
    if (key == "partition") {
      p.partition = value;
    } else if (key == "constraint") {
      p.constraint = value;
    } else if (key == "gres") {
      p.gres = value;
    } else if (key == "cpus") {
      const int cpus = kv.second.as<int>();
      if (cpus < 1 || cpus > 100'000) throw std::runtime_error(type + ": cpus must be 1 to 100000");
      p.cpus = cpus;
    } else if (key == "memory") {
      const Result<std::int64_t> bytes = exec::ParseBytes(value);
      if (!bytes.ok()) throw std::runtime_error(type + ": memory: " + bytes.status().message());
      p.memory_mb = (*bytes + (1 << 20) - 1) >> 20;
    } else {
      throw std::runtime_error(type + ": unknown field " + key +
                               " (partition, constraint, gres, cpus, memory)");
    }
  }
  if (p.partition.empty()) throw std::runtime_error(type + ": partition is required");
  for (const std::string* text : {&p.partition, &p.constraint, &p.gres}) {
    if (text->find_first_of(" \t\n'\"\\;") != std::string::npos) {
      throw std::runtime_error(type + ": '" + *text + "' holds a character Slurm does not take");
    }
  }
  return p;
}

}  // namespace

std::map<std::string, exec::SlurmPlacement> ReadSlurmMap(const std::string& path) {
  const YAML::Node root = YAML::LoadFile(path);
  if (!root.IsMap()) throw std::runtime_error("expected a map from instance type to placement");
  std::map<std::string, exec::SlurmPlacement> map;
  for (const auto& entry : root) {
    const std::string type = entry.first.as<std::string>();
    map[type] = ReadPlacement(type, entry.second);
  }
  if (map.empty()) throw std::runtime_error("no instance type is mapped");
  return map;
}

}  // namespace allot::cli
