#include "server/finished_trees.h"

#include <algorithm>
#include <set>

namespace allot::server {

void FinishedTrees::Add(const std::string& share, Timestamp ended, model::JobId seq,
                        std::int64_t bytes) {
  Forget(seq);
  const Order order{ended, seq};
  Share& s = shares_[share];
  s.trees[order] = bytes;
  s.bytes += bytes;
  total_bytes_ += bytes;
  where_[seq] = {share, order};
}

void FinishedTrees::Forget(model::JobId seq) {
  auto it = where_.find(seq);
  if (it == where_.end()) return;
  auto share = shares_.find(it->second.first);
  auto tree = share->second.trees.find(it->second.second);
  share->second.bytes -= tree->second;
  total_bytes_ -= tree->second;
  share->second.trees.erase(tree);
  if (share->second.trees.empty()) shares_.erase(share);
  where_.erase(it);
}

std::vector<FinishedTrees::Tree> FinishedTrees::Pick(
    std::int64_t bytes, const std::map<std::string, std::int64_t>& live,
    const std::set<model::JobId>& skip) const {
  // Each share with a tree to give, by what it holds, the most first (then by name); its next
  // tree is its oldest not yet picked nor skipped.
  struct Next {
    std::map<Order, std::int64_t>::const_iterator tree;
    std::map<Order, std::int64_t>::const_iterator end;
    void SkipHeldBack(const std::set<model::JobId>& skip) {
      while (tree != end && skip.count(tree->first.second) > 0) ++tree;
    }
  };
  struct Larger {  // more bytes first, then the name
    bool operator()(const std::pair<std::int64_t, std::string>& a,
                    const std::pair<std::int64_t, std::string>& b) const {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    }
  };
  std::set<std::pair<std::int64_t, std::string>, Larger> largest;
  std::map<std::string, Next> next;
  for (const auto& [name, share] : shares_) {
    Next n{share.trees.begin(), share.trees.end()};
    n.SkipHeldBack(skip);
    if (n.tree == n.end) continue;
    const auto held = live.find(name);
    largest.insert({share.bytes + (held == live.end() ? 0 : held->second), name});
    next.emplace(name, n);
  }
  std::vector<Tree> picked;
  std::int64_t freed = 0;
  while (freed < bytes && !largest.empty()) {
    auto [held, name] = *largest.begin();
    largest.erase(largest.begin());
    Next& n = next.at(name);
    const auto& [order, tree_bytes] = *n.tree;
    picked.push_back({order.second, name, tree_bytes});
    freed += tree_bytes;
    ++n.tree;
    n.SkipHeldBack(skip);
    if (n.tree != n.end) largest.insert({held - tree_bytes, name});
  }
  return picked;
}

std::vector<std::pair<std::string, std::int64_t>> FinishedTrees::ShareBytes() const {
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (const auto& [name, share] : shares_) out.emplace_back(name, share.bytes);
  return out;
}

std::int64_t FinishedTrees::Bytes(const std::string& share) const {
  auto it = shares_.find(share);
  return it == shares_.end() ? 0 : it->second.bytes;
}

std::optional<Eviction> PickEviction(const std::vector<LiveTree>& live,
                                     const FinishedTrees& finished, std::int64_t excess) {
  std::map<std::string, std::int64_t> held;  // each share with a live tree: all it holds
  std::int64_t live_bytes = 0;
  for (const LiveTree& t : live) {
    if (t.bytes <= 0) continue;
    held[t.share] += t.bytes;
    live_bytes += t.bytes;
  }
  if (held.empty() || live_bytes < excess) return std::nullopt;
  for (auto& [name, bytes] : held) bytes += finished.Bytes(name);
  // The first of the largest: ties go by name (the map's order).
  const auto share = std::max_element(
      held.begin(), held.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  std::optional<Eviction> pick;
  for (const LiveTree& t : live) {
    if (t.share != share->first || t.bytes <= 0 || t.stopping) continue;
    if (!pick || t.bytes > pick->tree.bytes ||
        (t.bytes == pick->tree.bytes && t.seq > pick->tree.seq)) {
      pick = Eviction{t, share->second};
    }
  }
  return pick;
}

}  // namespace allot::server
