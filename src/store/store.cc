#include "store/store.h"

#include <algorithm>
#include <future>
#include <utility>

namespace allot::store {

Status Store::Commit(Batch batch) {
  std::promise<Status> promise;
  std::future<Status> result = promise.get_future();
  Submit(std::move(batch), [&promise](const Status& status) { promise.set_value(status); });
  return result.get();
}

Result<std::vector<Record>> RangeOfLoad(Store& store, Kind kind, const KeyRange& range) {
  Result<std::vector<Record>> all = store.Load(kind);
  if (!all.ok()) return all.status();
  std::vector<Record> in_range;
  auto inside = [&range](const Record& r) {
    return r.key >= range.from && (range.to.empty() || r.key < range.to);
  };
  std::copy_if(all->begin(), all->end(), std::back_inserter(in_range), inside);
  if (range.descending) std::reverse(in_range.begin(), in_range.end());
  if (in_range.size() > range.limit) in_range.resize(range.limit);
  return in_range;
}

}  // namespace allot::store
