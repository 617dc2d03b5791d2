#include "env/worker_pool.h"

#include <algorithm>
#include <exception>
#include <thread>
#include <utility>

namespace allot::env {

bool WorkerPool::Post(std::function<void()> task) {
  std::uint64_t ticket = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ticket = next_ticket_++;
    queue_.push_back({ticket, std::move(task)});
    if (workers_ >= max_workers_) return true;  // a worker takes it when done
    ++workers_;
  }
  try {
    std::thread([this] { Work(); }).detach();  // Drain and AwaitIdle wait for it
    return true;
  } catch (const std::exception&) {
    std::lock_guard<std::mutex> lock(mu_);
    --workers_;
    if (workers_ > 0) return true;  // the others take it
    // None will: the caller runs it. Its own task, wherever another Post put its own meanwhile.
    const auto it = std::find_if(queue_.begin(), queue_.end(),
                                 [ticket](const Queued& q) { return q.ticket == ticket; });
    if (it != queue_.end()) queue_.erase(it);
    return false;
  }
}

void WorkerPool::Work() {
  for (;;) {
    std::function<void()> task;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (queue_.empty()) {
        --workers_;
        idle_.notify_all();  // under the lock: the waiter may destroy the pool once it is released
        return;
      }
      task = std::move(queue_.front().task);
      queue_.pop_front();
    }
    task();
  }
}

void WorkerPool::AwaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return workers_ == 0; });  // a worker ends only on an empty queue
}

void WorkerPool::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  queue_.clear();
  idle_.wait(lock, [this] { return workers_ == 0; });
}

}  // namespace allot::env
