#pragma once

// A Store that fails on demand, for tests of what the server does when a write fails (a full
// disk, an I/O error): it wraps a real store and, while a fault is set, fails every Submit with
// it, unwritten, with the sticky semantics of store.h (a failure also fails every later batch
// until Resume()). A failed batch still goes through the inner store's queue (empty), so answers
// keep submission order. Loads and Gets pass through.
//
// Thread-safety: every method may be called from any thread.

#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "store/store.h"

namespace allot::store {

class FaultyStore final : public Store {
 public:
  explicit FaultyStore(std::unique_ptr<Store> inner);

  // From now on every Submit fails with `fault` (until Heal()).
  void Fail(Status fault);
  // As Fail, but only while `holds()` is true (a disk full until a file on it goes, say).
  void FailWhile(Status fault, std::function<bool()> holds);
  // Submits reach the inner store again (after Resume(), as for any failure).
  void Heal();
  // Batches failed so far because of a fault or of its stickiness.
  int failed_batches() const;
  // Puts and deletes passed to the inner store so far.
  std::size_t written_ops() const;

  void Submit(Batch batch, std::function<void(const Status&)> done) override;
  void Resume() override;
  Result<std::vector<Record>> Load(Kind kind) override;
  Result<std::vector<Record>> Scan(Kind kind) override;
  Result<std::optional<std::string>> Get(Kind kind, std::string_view key) override;
  Result<std::vector<Record>> Range(Kind kind, const KeyRange& range) override;
  void Close() override;

 private:
  std::unique_ptr<Store> inner_;
  mutable std::mutex mu_;
  std::optional<Status> fault_;   // guarded by mu_
  std::function<bool()> holds_;   // guarded by mu_: empty, always
  std::optional<Status> sticky_;  // guarded by mu_
  int failed_ = 0;                // guarded by mu_
  std::size_t written_ = 0;       // guarded by mu_
};

}  // namespace allot::store
