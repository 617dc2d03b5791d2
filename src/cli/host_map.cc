// `allot server --host-map FILE`: which GPUs and CPUs each instance slot of a type owns, and the
// sandbox limits of a type (cli/host_map.h).

#include "cli/host_map.h"

#include <yaml-cpp/yaml.h>

#include <stdexcept>

#include "cli/commands.h"
#include "exec/sandbox.h"

namespace allot::cli {
namespace {

// The slot list of an entry: the entry itself (a list) or its `slots` (a map).
YAML::Node SlotList(const std::string& unit, const YAML::Node& entry) {
  if (entry.IsSequence()) return entry;
  if (entry.IsMap()) {
    for (const auto& kv : entry) {
      const std::string key = kv.first.as<std::string>();
      if (key != "slots" && key != "limits") {
        throw std::runtime_error(unit + ": unknown field " + key + " (slots, limits)");
      }
    }
    const YAML::Node slots = entry["slots"];
    if (!slots) return YAML::Node(YAML::NodeType::Sequence);
    if (slots.IsSequence()) return slots;
  }
  throw std::runtime_error(unit + ": expected a list of slots {gpus: ..., cpus: ...}");
}

std::int64_t Size(const std::string& unit, const std::string& key, const YAML::Node& value) {
  const Result<std::int64_t> size = exec::ParseBytes(value.as<std::string>());
  if (!size.ok())
    throw std::runtime_error(unit + ": limits." + key + ": " + size.status().message());
  return *size;
}

// A number of processes or files: a whole number, 0 (none) or more.
std::int64_t Count(const std::string& unit, const std::string& key, const YAML::Node& value) {
  std::int64_t n = -1;
  if (!YAML::convert<std::int64_t>::decode(value, n) || n < 0) {
    throw std::runtime_error(unit + ": limits." + key +
                             " must be a whole number, 0 (none) or more");
  }
  return n;
}

}  // namespace

std::map<std::string, std::vector<server::Options::Slot>> ReadHostMap(const std::string& path) {
  const YAML::Node root = YAML::LoadFile(path);
  if (!root.IsMap()) throw std::runtime_error("expected a map from instance type to slot lists");
  std::map<std::string, std::vector<server::Options::Slot>> map;
  for (const auto& entry : root) {
    const std::string unit = entry.first.as<std::string>();
    for (const YAML::Node& slot : SlotList(unit, entry.second)) {
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

std::map<std::string, server::Options::LimitOverrides> ReadHostMapLimits(const std::string& path) {
  const YAML::Node root = YAML::LoadFile(path);
  std::map<std::string, server::Options::LimitOverrides> map;
  if (!root.IsMap()) return map;
  for (const auto& entry : root) {
    const std::string unit = entry.first.as<std::string>();
    if (!entry.second.IsMap() || !entry.second["limits"]) continue;
    const YAML::Node limits = entry.second["limits"];
    if (!limits.IsMap()) throw std::runtime_error(unit + ": limits must be a map");
    server::Options::LimitOverrides& o = map[unit];
    for (const auto& kv : limits) {
      const std::string key = kv.first.as<std::string>();
      if (key == "memory") {
        o.memory_bytes = Size(unit, key, kv.second);
      } else if (key == "pids") {
        o.pids = Count(unit, key, kv.second);
      } else if (key == "tmp") {
        o.tmp_bytes = Size(unit, key, kv.second);
      } else if (key == "disk") {
        o.disk_bytes = Size(unit, key, kv.second);
      } else if (key == "files") {
        o.files = Count(unit, key, kv.second);
      } else {
        throw std::runtime_error(unit + ": unknown limit " + key +
                                 " (memory, pids, tmp, disk, files)");
      }
    }
  }
  return map;
}

}  // namespace allot::cli
