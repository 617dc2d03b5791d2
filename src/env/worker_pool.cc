#include "env/worker_pool.h"

#include <algorithm>
#include <exception>
#include <thread>
#include <utility>

namespace allot::env {

bool WorkerPool::Post(std::string key, int max_per_key, std::function<void()> task,
                      std::string* no_thread) {
  std::uint64_t ticket = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!key.empty()) {
      Keyed& k = keyed_[key];
      if (k.in_pool >= std::max(max_per_key, 1)) {  // 0 would hold its tasks forever
        k.held.push_back(std::move(task));          // one of its key's, when it ends, queues it
        return true;
      }
      ++k.in_pool;
    }
    ticket = next_ticket_++;
    queue_.push_back({ticket, std::move(key), std::move(task)});
    if (workers_ >= max_workers_) return true;  // a worker takes it when done
    ++workers_;
  }
  try {
    std::thread([this] { Work(); }).detach();  // Drain and AwaitIdle wait for it
    return true;
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(mu_);
    --workers_;
    if (workers_ > 0) return true;  // the others take it
    // None will: the caller runs it. Its own task, wherever another Post put its own meanwhile.
    const auto it = std::find_if(queue_.begin(), queue_.end(),
                                 [ticket](const Queued& q) { return q.ticket == ticket; });
    // Gone from the queue: a worker that ran meanwhile took it (and ran it, or runs it), so the
    // caller must not run it again.
    if (it == queue_.end()) return true;
    const auto k = keyed_.find(it->key);
    if (k != keyed_.end() && --k->second.in_pool == 0 && k->second.held.empty()) keyed_.erase(k);
    queue_.erase(it);
    if (no_thread != nullptr) *no_thread = e.what();
    return false;
  }
}

void WorkerPool::Released(const std::string& key) {
  const auto it = keyed_.find(key);
  if (it == keyed_.end()) return;  // dropped by a Drain meanwhile
  Keyed& k = it->second;
  if (k.held.empty()) {
    if (--k.in_pool == 0) keyed_.erase(it);
    return;
  }
  queue_.push_back({next_ticket_++, key, std::move(k.held.front())});  // in_pool stays
  k.held.pop_front();
}

void WorkerPool::Work() {
  for (;;) {
    Queued next;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (queue_.empty()) {
        --workers_;
        idle_.notify_all();  // under the lock: the waiter may destroy the pool once it is released
        return;
      }
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    next.task();
    if (!next.key.empty()) {
      std::lock_guard<std::mutex> lock(mu_);
      Released(next.key);
    }
  }
}

void WorkerPool::AwaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return workers_ == 0; });  // a worker ends only on an empty queue
}

void WorkerPool::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  queue_.clear();
  keyed_.clear();  // held tasks go too; a running one's release then finds nothing
  idle_.wait(lock, [this] { return workers_ == 0; });
}

}  // namespace allot::env
