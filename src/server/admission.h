#pragma once

// What the HTTP server counts when it admits a connection (src/server/http_server.cc, MakeRoom;
// docs/security.md, "The API port"), apart from the sockets so that it can be tested alone:
//
// - AdmissionKey: the address a client counts as for the per-address limits.
// - ReadingConnections: the connections still reading a request, by key, oldest first: the ones
//   a new connection displaces when a budget of them is reached.

#include <boost/asio/ip/address.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>

namespace allot::server {

// The address a client counts as for the per-address limits: its own, except that every
// loopback address (127.0.0.0/8, ::1, and 127/8 mapped into IPv6 as ::ffff:127.x.y.z) counts as
// 127.0.0.1, and any other IPv4-mapped IPv6 address as that IPv4 address. Any local process, a
// job included, may connect from any of 127/8's 16M addresses: counted one by one, a limit per
// address would bound nothing a local process holds. Other IPv6 addresses count one by one, not
// by /64: a /64 is often a subnet of many machines (a cloud subnet, a LAN), which would then share
// one client's limits.
boost::asio::ip::address AdmissionKey(const boost::asio::ip::address& peer);

// The connections that are still reading a request: from their accept (or, on a keep-alive
// connection, from the first byte of its next request) until the request is whole. Each is
// known by its serial number and its client's AdmissionKey; the oldest is the one that began
// reading first. Thread-safety: none; the server holds its lock.
class ReadingConnections {
 public:
  using Serial = std::uint64_t;
  using Address = boost::asio::ip::address;
  struct Entry {
    Serial serial = 0;
    Address key;
  };

  // `serial` begins reading a request; a no-op when it reads already (its place stays).
  void Begin(Serial serial, const Address& key);
  // `serial` has read its request whole, or is gone; a no-op when it was not reading.
  void End(Serial serial);

  std::size_t size() const { return by_serial_.size(); }
  std::size_t CountOf(const Address& key) const;

  // The connection a new one from `key` displaces, so that both budgets still hold once the
  // new one reads too: the oldest of `key`'s when `key` has `per_key` or more, else the oldest
  // of all when there are `in_all` or more; none while under both.
  std::optional<Entry> Displaced(const Address& key, std::size_t per_key, std::size_t in_all) const;
  std::optional<Entry> OldestOf(const Address& key) const;
  std::optional<Entry> Oldest() const;

 private:
  // When a reading began: a counter rather than a clock, so that the order has no ties.
  using Order = std::uint64_t;
  using Queue = std::map<Order, Serial>;  // oldest first
  struct Reading {
    Order order = 0;
    Address key;
  };
  std::optional<Entry> Front(const Queue& queue) const;

  Order next_order_ = 0;
  std::unordered_map<Serial, Reading> by_serial_;
  Queue all_;
  std::map<Address, Queue> by_key_;  // no empty queues
};

}  // namespace allot::server
