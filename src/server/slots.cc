// The optional host map: each instance slot of a type has its own GPUs or CPU set. A dispatched
// attempt's hosts take the lowest free slots of their types (recorded in the job document, so a
// restart that re-adopts the attempt knows them) and give them back when the attempt ends.

#include "server/controller.h"

namespace allot::server {

void Controller::TakeSlots(JobRecord& job) {
  std::vector<SlotRecord> taken;
  for (const model::UnitCount& part : job.demand) {
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
      taken.push_back({part.unit, slot});
    }
  }
  job.History().slots = std::move(taken);
}

void Controller::ReleaseSlots(JobRecord& job) {
  if (!job.history) return;
  for (const SlotRecord& s : job.history->slots) {
    const int slot = s.slot;
    auto it = slots_in_use_.find(s.unit);
    if (slot >= 0 && it != slots_in_use_.end() &&
        static_cast<std::size_t>(slot) < it->second.size()) {
      it->second[static_cast<std::size_t>(slot)] = false;
    }
  }
  job.history->slots.clear();
}

void Controller::MarkSlotsTaken(const JobRecord& job) {
  if (!job.history) return;
  for (const SlotRecord& s : job.history->slots) {
    const int slot = s.slot;
    auto map = options_.host_map.find(s.unit);
    if (slot < 0 || map == options_.host_map.end()) continue;
    std::vector<bool>& used = slots_in_use_[map->first];
    used.resize(map->second.size(), false);
    if (static_cast<std::size_t>(slot) < used.size()) used[static_cast<std::size_t>(slot)] = true;
  }
}

std::vector<exec::LaunchSpec::HostSlot> Controller::SlotsOf(const JobRecord& job) const {
  std::vector<exec::LaunchSpec::HostSlot> out;
  if (!job.history) return out;
  for (const SlotRecord& s : job.history->slots) {
    const int slot = s.slot;
    auto map = options_.host_map.find(s.unit);
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
