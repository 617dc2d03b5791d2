// The optional host map: each instance slot of a type has its own GPUs or CPU set. A dispatched
// attempt's hosts take the lowest free slots of their types (recorded in the job document, so a
// restart that re-adopts the attempt knows them) and give them back when the attempt ends.

#include "server/controller.h"

namespace allot::server {

void Controller::TakeSlots(JobRecord& job) {
  Json taken = Json::array();
  for (const model::UnitCount& part : job.spec.demand) {
    auto map = options_.host_map.find(part.unit);
    for (std::int64_t n = 0; n < part.count; ++n) {
      int slot = -1;
      if (map != options_.host_map.end()) {
        std::vector<bool>& used = slots_in_use_[part.unit];
        used.resize(map->second.size(), false);
        for (std::size_t i = 0; i < used.size() && slot < 0; ++i) {
          if (!used[i]) {
            used[i] = true;
            slot = static_cast<int>(i);
          }
        }
      }
      taken.push_back({{"unit", part.unit}, {"slot", slot}});
    }
  }
  job.doc["allot"]["slots"] = taken;
}

void Controller::ReleaseSlots(JobRecord& job) {
  Json& allot = job.doc["allot"];
  if (!allot.contains("slots")) return;
  for (const Json& s : allot["slots"]) {
    const int slot = s["slot"];
    auto it = slots_in_use_.find(s["unit"].get<std::string>());
    if (slot >= 0 && it != slots_in_use_.end() &&
        static_cast<std::size_t>(slot) < it->second.size()) {
      it->second[static_cast<std::size_t>(slot)] = false;
    }
  }
  allot.erase("slots");
}

void Controller::MarkSlotsTaken(const JobRecord& job) {
  for (const Json& s : job.doc["allot"].value("slots", Json::array())) {
    const int slot = s["slot"];
    auto map = options_.host_map.find(s["unit"].get<std::string>());
    if (slot < 0 || map == options_.host_map.end()) continue;
    std::vector<bool>& used = slots_in_use_[map->first];
    used.resize(map->second.size(), false);
    if (static_cast<std::size_t>(slot) < used.size()) used[static_cast<std::size_t>(slot)] = true;
  }
}

std::vector<exec::LaunchSpec::HostSlot> Controller::SlotsOf(const JobRecord& job) const {
  std::vector<exec::LaunchSpec::HostSlot> out;
  for (const Json& s : job.doc["allot"].value("slots", Json::array())) {
    const int slot = s["slot"];
    auto map = options_.host_map.find(s["unit"].get<std::string>());
    if (slot < 0 || map == options_.host_map.end() ||
        static_cast<std::size_t>(slot) >= map->second.size()) {
      out.push_back({});
      continue;
    }
    const Options::Slot& x = map->second[static_cast<std::size_t>(slot)];
    out.push_back({x.gpus, x.cpus});
  }
  return out;
}

}  // namespace allot::server
