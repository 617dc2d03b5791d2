#pragma once

// The outcome of a store commit, awaited by the calls whose changes it holds: set once, on the
// store's writer thread; read on any thread.
//
// std::shared_future<Status> did this before. Each set cost two futex calls whether anyone waited
// or not (libstdc++ sets the value under std::call_once, and glibc's once always wakes), so the
// writer, settling a group commit's calls one at a time, was still on the second call when the
// answerer had already woken for the first and gone back to wait: the two threads took turns, one
// wake-up per call, 3.6 futex calls per submission under `strace -f`. Here a set takes an
// uncontended mutex and makes a system call only when a thread waits, so the writer settles a
// whole group before a thread it woke has run. (The loops now answer through OnSet, with no
// answerer thread: server/http_server.cc.)

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "common/status.h"

namespace allot::server {

class Durable {
 public:
  Durable() = default;  // no commit to wait for: valid() is false

  // One to be set once (Set), by the commit that holds the change.
  static Durable Unset();
  // One already set, for an answer that is known at once.
  static Durable Ready(Status status);

  // Whether there is a commit to wait for.
  bool valid() const { return state_ != nullptr; }
  // Whether the commit's outcome is known (false with no commit to wait for); never blocks.
  bool ready() const { return state_ != nullptr && state_->set.load(std::memory_order_acquire); }
  // Waits for the outcome. Requires valid().
  const Status& get() const;
  void wait() const { (void)get(); }

  // Runs `then` once the outcome is known: at once, on this thread, if it is; else on the thread
  // that sets it, right after setting it. Keep it short: it runs on the store's writer thread.
  void OnSet(std::function<void()> then) const;

  // Settles every copy of this Durable, wakes their waiters and runs what OnSet gave. Once only.
  void Set(Status status) const;

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::atomic<bool> set{false};
    Status status;                            // written once, before `set`
    std::vector<std::function<void()>> then;  // guarded by mu, until `set`
  };
  std::shared_ptr<State> state_;
};

}  // namespace allot::server
