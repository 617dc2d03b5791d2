#include "store/store.h"

#include <future>
#include <utility>

namespace allot::store {

Status Store::Commit(Batch batch) {
  std::promise<Status> promise;
  std::future<Status> result = promise.get_future();
  Submit(std::move(batch), [&promise](const Status& status) { promise.set_value(status); });
  return result.get();
}

}  // namespace allot::store
