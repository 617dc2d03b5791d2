#include "server/list_index.h"

#include <algorithm>
#include <limits>

#include "common/strings.h"

namespace allot::server {

namespace {

std::size_t Slot(model::JobStatus s) { return static_cast<std::size_t>(s); }

// AsciiLower, inline: the name order folds every byte it compares.
inline unsigned char Fold(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 'A' && u <= 'Z' ? static_cast<unsigned char>(u + ('a' - 'A')) : u;
}

// Compares ASCII-case-folded text: <0, 0, >0.
int CompareFolded(std::string_view a, std::string_view b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = Fold(a[i]);
    const unsigned char y = Fold(b[i]);
    if (x != y) return x < y ? -1 : 1;
  }
  return a.size() == b.size() ? 0 : (a.size() < b.size() ? -1 : 1);
}

}  // namespace

const ListIndex::Set ListIndex::kEmpty;
const ListIndex::NameSet ListIndex::kNoNames;

bool ListIndex::NameOrder::operator()(const NameKey& a, const NameKey& b) const {
  const int c = CompareFolded(a.name, b.name);
  return c != 0 ? c < 0 : a.key < b.key;
}

void ListIndex::Add(const JobRecord& job) {
  Queue& q = queues_[std::string(job.queue)];
  const Key key{job.created_at, job.seq};
  // New jobs, and a restart's jobs in submission order, come last in time: the end is the hint
  // that makes each insertion constant time (a wrong hint costs only the usual search).
  q.all.insert(q.all.end(), key);
  Set& by_status = q.by_status[Slot(job.status)];
  by_status.insert(by_status.end(), key);
  auto share = q.by_share.find(job.share);
  if (share == q.by_share.end())
    share = q.by_share.emplace(std::string(job.share), ByStatusSets{}).first;
  Set& by_share = share->second[Slot(job.status)];
  by_share.insert(by_share.end(), key);
  q.by_name.insert({job.name, key});
}

void ListIndex::Remove(const JobRecord& job) {
  auto it = queues_.find(job.queue);
  if (it == queues_.end()) return;
  Queue& q = it->second;
  const Key key{job.created_at, job.seq};
  q.all.erase(key);
  q.by_status[Slot(job.status)].erase(key);
  if (auto share = q.by_share.find(job.share); share != q.by_share.end()) {
    share->second[Slot(job.status)].erase(key);
  }
  q.by_name.erase({job.name, key});
}

void ListIndex::Move(const JobRecord& job, model::JobStatus from, model::JobStatus to) {
  if (from == to) return;
  auto it = queues_.find(job.queue);
  if (it == queues_.end()) return;
  Queue& q = it->second;
  const Key key{job.created_at, job.seq};
  q.by_status[Slot(from)].erase(key);
  q.by_status[Slot(to)].insert(key);
  if (auto share = q.by_share.find(job.share); share != q.by_share.end()) {
    share->second[Slot(from)].erase(key);
    share->second[Slot(to)].insert(key);
  }
}

const ListIndex::Set& ListIndex::All(std::string_view queue) const {
  auto it = queues_.find(queue);
  return it == queues_.end() ? kEmpty : it->second.all;
}

const ListIndex::Set& ListIndex::ByStatus(std::string_view queue, model::JobStatus status) const {
  auto it = queues_.find(queue);
  return it == queues_.end() ? kEmpty : it->second.by_status[Slot(status)];
}

const ListIndex::Set& ListIndex::ByShareStatus(std::string_view queue, std::string_view share,
                                               model::JobStatus status) const {
  auto it = queues_.find(queue);
  if (it == queues_.end()) return kEmpty;
  auto s = it->second.by_share.find(share);
  return s == it->second.by_share.end() ? kEmpty : s->second[Slot(status)];
}

std::pair<ListIndex::NameSet::const_iterator, ListIndex::NameSet::const_iterator> ListIndex::ByName(
    std::string_view queue, std::string_view name, bool prefix) const {
  auto it = queues_.find(queue);
  if (it == queues_.end()) return {kNoNames.end(), kNoNames.end()};
  const NameSet& names = it->second.by_name;
  // Keys compare by name first, so every entry of a name lies between these two keys.
  auto first = names.lower_bound({name, {std::numeric_limits<Timestamp>::min(), 0}});
  if (!prefix) {
    auto last = names.upper_bound(
        {name, {std::numeric_limits<Timestamp>::max(), std::numeric_limits<model::JobId>::max()}});
    return {first, last};
  }
  // The first name past every name that starts with `name`: the prefix with its last byte
  // raised to the next value a folded byte can take (none folds to 'A'..'Z').
  std::string past = AsciiLower(name);
  while (!past.empty() && static_cast<unsigned char>(past.back()) == 0xFF) past.pop_back();
  if (past.empty()) return {first, names.end()};
  char next = static_cast<char>(static_cast<unsigned char>(past.back()) + 1);
  if (next >= 'A' && next <= 'Z') next = '[';
  past.back() = next;
  auto last = names.lower_bound({past, {std::numeric_limits<Timestamp>::min(), 0}});
  return {first, last};
}

}  // namespace allot::server
