#pragma once

// A bounded set of worker threads for work that may take long (a launch's checkpoint restore, an
// attempt end's checkpoint sync) and must not hold up the thread that asks for it. A worker is
// started when a task finds none free, up to a bound, and ends when it finds the queue empty: a
// few long tasks hold up no other while the bound is not reached, and a burst of tasks does not
// start a thread each.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace allot::env {

class WorkerPool {
 public:
  explicit WorkerPool(int max_workers) : max_workers_(max_workers) {}
  ~WorkerPool() { Drain(); }  // what the tasks use must outlive them
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`, to run on a worker. False where no thread could be started and no worker
  // runs to take it: the task is not kept, and the caller runs it itself rather than not at all.
  bool Post(std::function<void()> task) { return Post({}, 0, std::move(task)); }
  // The same, for a task of `key` (a tenant, say; empty: none), of which at most `max_per_key`
  // are queued or run at once: the rest wait aside, in order, and each task of the key that ends
  // sends the next to the queue's tail, behind the other keys' tasks that came meanwhile. So one
  // key's many long tasks hold up its own, not every key's.
  // Posts of one key are expected from one thread at a time (both owners post so): were
  // two to race with a failed thread start, a held task could wait for the key's next one.
  // Where it answers false, `no_thread` (if given) gets why no thread could be started.
  bool Post(std::string key, int max_per_key, std::function<void()> task,
            std::string* no_thread = nullptr);
  // Waits until every task queued has run and every worker has ended.
  void AwaitIdle();
  // Drops the tasks not begun and waits for those running. Once nothing posts any more (an
  // owner's shutdown), no task outlives the call.
  void Drain();

 private:
  void Work();

  const int max_workers_;
  std::mutex mu_;
  std::condition_variable idle_;
  struct Queued {
    std::uint64_t ticket = 0;  // which Post queued it
    std::string key;
    std::function<void()> task;
  };
  struct Keyed {
    int in_pool = 0;                         // queued or running
    std::deque<std::function<void()>> held;  // past max_per_key, in order
  };
  // After a task of `key` ran: its key's next held task to the queue's tail. Needs mu_.
  void Released(const std::string& key);

  std::deque<Queued> queue_;
  std::map<std::string, Keyed> keyed_;
  std::uint64_t next_ticket_ = 0;
  int workers_ = 0;
};

}  // namespace allot::env
