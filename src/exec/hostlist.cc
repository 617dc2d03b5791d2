#include "exec/hostlist.h"

#include <cstddef>
#include <cstdint>

namespace allot::exec {

namespace {

constexpr std::size_t kMaxNames = 100'000;

// The top-level comma-separated items: commas inside brackets belong to the item.
Result<std::vector<std::string>> SplitItems(const std::string& list) {
  std::vector<std::string> items;
  std::string item;
  int depth = 0;
  for (const char c : list) {
    if (c == '[') ++depth;
    if (c == ']' && --depth < 0)
      return InvalidArgument("unbalanced ']' in host list '" + list + "'");
    if (c == ',' && depth == 0) {
      if (!item.empty()) items.push_back(item);
      item.clear();
      continue;
    }
    item += c;
  }
  if (depth != 0) return InvalidArgument("unbalanced '[' in host list '" + list + "'");
  if (!item.empty()) items.push_back(item);
  return items;
}

bool ParseNumber(const std::string& text, std::uint64_t& out) {
  if (text.empty() || text.size() > 18) return false;
  out = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return true;
}

std::string Padded(std::uint64_t n, std::size_t width) {
  std::string s = std::to_string(n);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

// "1-3,7" -> 1 2 3 7, padded to the width of each range's first bound.
Result<std::vector<std::string>> ExpandRanges(const std::string& ranges, const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= ranges.size()) {
    std::size_t end = ranges.find(',', start);
    if (end == std::string::npos) end = ranges.size();
    const std::string range = ranges.substr(start, end - start);
    const std::size_t dash = range.find('-');
    const std::string lo_text = range.substr(0, dash);
    const std::string hi_text = dash == std::string::npos ? lo_text : range.substr(dash + 1);
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;
    if (!ParseNumber(lo_text, lo) || !ParseNumber(hi_text, hi) || hi < lo) {
      return InvalidArgument("bad range '" + range + "' in host list '" + list + "'");
    }
    if (hi - lo >= kMaxNames || out.size() + (hi - lo + 1) > kMaxNames) {
      return InvalidArgument("host list '" + list + "' is too long");
    }
    for (std::uint64_t n = lo; n <= hi; ++n) out.push_back(Padded(n, lo_text.size()));
    start = end + 1;
  }
  return out;
}

Status ExpandItem(const std::string& item, const std::string& list, std::vector<std::string>& out) {
  const std::size_t open = item.find('[');
  if (open == std::string::npos) {
    out.push_back(item);
    return Status::Ok();
  }
  const std::size_t close = item.find(']', open);
  if (close == std::string::npos) return InvalidArgument("unbalanced '[' in '" + list + "'");
  Result<std::vector<std::string>> numbers =
      ExpandRanges(item.substr(open + 1, close - open - 1), list);
  if (!numbers.ok()) return numbers.status();
  const std::string prefix = item.substr(0, open);
  std::vector<std::string> tails;
  ALLOT_RETURN_IF_ERROR(ExpandItem(item.substr(close + 1), list, tails));
  if (tails.empty()) tails.emplace_back();
  for (const std::string& n : *numbers) {
    for (const std::string& tail : tails) {
      if (out.size() >= kMaxNames) return InvalidArgument("host list '" + list + "' is too long");
      out.push_back(prefix + n + tail);
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> ExpandHostList(const std::string& list) {
  Result<std::vector<std::string>> items = SplitItems(list);
  if (!items.ok()) return items.status();
  std::vector<std::string> names;
  for (const std::string& item : *items) {
    ALLOT_RETURN_IF_ERROR(ExpandItem(item, list, names));
  }
  return names;
}

}  // namespace allot::exec
