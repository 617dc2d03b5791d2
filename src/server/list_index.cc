#include "server/list_index.h"

namespace allot::server {

const ListIndex::Set ListIndex::kEmpty;

void ListIndex::Add(const std::string& queue, const std::string& share, const std::string& status,
                    Key key) {
  Queue& q = queues_[queue];
  q.all.insert(key);
  q.by_status[status].insert(key);
  q.by_share_status[{share, status}].insert(key);
}

void ListIndex::Remove(const std::string& queue, const std::string& share,
                       const std::string& status, Key key) {
  auto it = queues_.find(queue);
  if (it == queues_.end()) return;
  it->second.all.erase(key);
  it->second.by_status[status].erase(key);
  it->second.by_share_status[{share, status}].erase(key);
}

void ListIndex::Move(const std::string& queue, const std::string& share, const std::string& from,
                     const std::string& to, Key key) {
  if (from == to) return;
  Queue& q = queues_[queue];
  q.by_status[from].erase(key);
  q.by_status[to].insert(key);
  q.by_share_status[{share, from}].erase(key);
  q.by_share_status[{share, to}].insert(key);
}

const ListIndex::Set& ListIndex::All(const std::string& queue) const {
  auto it = queues_.find(queue);
  return it == queues_.end() ? kEmpty : it->second.all;
}

const ListIndex::Set& ListIndex::ByStatus(const std::string& queue,
                                          const std::string& status) const {
  auto it = queues_.find(queue);
  if (it == queues_.end()) return kEmpty;
  auto s = it->second.by_status.find(status);
  return s == it->second.by_status.end() ? kEmpty : s->second;
}

const ListIndex::Set& ListIndex::ByShareStatus(const std::string& queue, const std::string& share,
                                               const std::string& status) const {
  auto it = queues_.find(queue);
  if (it == queues_.end()) return kEmpty;
  auto s = it->second.by_share_status.find({share, status});
  return s == it->second.by_share_status.end() ? kEmpty : s->second;
}

}  // namespace allot::server
