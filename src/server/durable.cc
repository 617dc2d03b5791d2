#include "server/durable.h"

#include <utility>

#include "common/check.h"

namespace allot::server {

Durable Durable::Unset() {
  Durable d;
  d.state_ = std::make_shared<State>();
  return d;
}

Durable Durable::Ready(Status status) {
  Durable d = Unset();
  d.Set(std::move(status));
  return d;
}

const Status& Durable::get() const {
  ALLOT_CHECK(valid());
  if (!ready()) {
    std::unique_lock<std::mutex> lock(state_->mu);
    state_->cv.wait(lock, [this] { return state_->set.load(std::memory_order_relaxed); });
  }
  return state_->status;
}

void Durable::OnSet(std::function<void()> then) const {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!state_->set.load(std::memory_order_relaxed)) {
      state_->then.push_back(std::move(then));
      return;
    }
  }
  then();
}

void Durable::Set(Status status) const {
  std::vector<std::function<void()>> then;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    ALLOT_CHECK(!state_->set.load(std::memory_order_relaxed));  // once only
    state_->status = std::move(status);
    state_->set.store(true, std::memory_order_release);
    then.swap(state_->then);
  }
  // No system call unless a thread waits (glibc's broadcast returns at once without waiters).
  state_->cv.notify_all();
  for (std::function<void()>& f : then) f();
}

}  // namespace allot::server
