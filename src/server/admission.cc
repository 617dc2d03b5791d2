#include "server/admission.h"

namespace allot::server {

namespace ip = boost::asio::ip;

ip::address AdmissionKey(const ip::address& peer) {
  ip::address_v4 v4;
  if (peer.is_v4()) {
    v4 = peer.to_v4();
  } else if (peer.to_v6().is_v4_mapped()) {
    v4 = ip::make_address_v4(ip::v4_mapped, peer.to_v6());
  } else {
    return peer.to_v6().is_loopback() ? ip::address(ip::address_v4::loopback()) : peer;
  }
  return v4.is_loopback() ? ip::address(ip::address_v4::loopback()) : ip::address(v4);
}

void ReadingConnections::Begin(Serial serial, const Address& key) {
  const auto [it, added] = by_serial_.try_emplace(serial, Reading{next_order_, key});
  if (!added) return;
  all_.emplace(next_order_, serial);
  by_key_[key].emplace(next_order_, serial);
  ++next_order_;
}

void ReadingConnections::End(Serial serial) {
  const auto it = by_serial_.find(serial);
  if (it == by_serial_.end()) return;
  const auto [order, key] = it->second;
  all_.erase(order);
  const auto queue = by_key_.find(key);
  queue->second.erase(order);
  if (queue->second.empty()) by_key_.erase(queue);
  by_serial_.erase(it);
}

std::size_t ReadingConnections::CountOf(const Address& key) const {
  const auto it = by_key_.find(key);
  return it == by_key_.end() ? 0 : it->second.size();
}

std::optional<ReadingConnections::Entry> ReadingConnections::Displaced(const Address& key,
                                                                       std::size_t per_key,
                                                                       std::size_t in_all) const {
  if (CountOf(key) >= per_key) {
    if (auto own = OldestOf(key)) return own;
  }
  if (size() >= in_all) return Oldest();
  return std::nullopt;
}

std::optional<ReadingConnections::Entry> ReadingConnections::OldestOf(const Address& key) const {
  const auto it = by_key_.find(key);
  if (it == by_key_.end()) return std::nullopt;
  return Front(it->second);
}

std::optional<ReadingConnections::Entry> ReadingConnections::Oldest() const { return Front(all_); }

std::optional<ReadingConnections::Entry> ReadingConnections::Front(const Queue& queue) const {
  if (queue.empty()) return std::nullopt;
  const Serial serial = queue.begin()->second;
  return Entry{serial, by_serial_.at(serial).key};
}

}  // namespace allot::server
