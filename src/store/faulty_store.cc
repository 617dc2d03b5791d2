#include "store/faulty_store.h"

#include <utility>

namespace allot::store {

FaultyStore::FaultyStore(std::unique_ptr<Store> inner) : inner_(std::move(inner)) {}

void FaultyStore::Fail(Status fault) {
  std::lock_guard<std::mutex> lock(mu_);
  fault_ = std::move(fault);
  holds_ = nullptr;  // unconditional, whatever FailWhile set before
}

void FaultyStore::FailWhile(Status fault, std::function<bool()> holds) {
  std::lock_guard<std::mutex> lock(mu_);
  fault_ = std::move(fault);
  holds_ = std::move(holds);
}

void FaultyStore::Heal() {
  std::lock_guard<std::mutex> lock(mu_);
  fault_.reset();
  holds_ = nullptr;
}

std::size_t FaultyStore::written_ops() const {
  std::lock_guard<std::mutex> lock(mu_);
  return written_;
}

int FaultyStore::failed_batches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_;
}

void FaultyStore::Submit(Batch batch, std::function<void(const Status&)> done) {
  std::optional<Status> failure;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (fault_ && !sticky_ && (!holds_ || holds_())) sticky_ = fault_;
    failure = sticky_;
    if (failure) ++failed_;
    if (!failure) written_ += batch.ops.size();
  }
  if (!failure) {
    inner_->Submit(std::move(batch), std::move(done));
    return;
  }
  // Through the inner queue, unwritten, so it answers after every batch submitted before it.
  inner_->Submit(Batch{}, [done = std::move(done), failure](const Status&) {
    if (done) done(*failure);
  });
}

void FaultyStore::Resume() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    sticky_.reset();
  }
  inner_->Resume();
}

Result<std::vector<Record>> FaultyStore::Load(Kind kind) { return inner_->Load(kind); }
Result<std::vector<Record>> FaultyStore::Scan(Kind kind) { return inner_->Scan(kind); }

Result<std::vector<Record>> FaultyStore::Range(Kind kind, const KeyRange& range) {
  return inner_->Range(kind, range);
}

Result<std::optional<std::string>> FaultyStore::Get(Kind kind, std::string_view key) {
  return inner_->Get(kind, key);
}

void FaultyStore::Close() { inner_->Close(); }

}  // namespace allot::store
