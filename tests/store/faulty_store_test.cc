// FaultyStore fails on demand with the sticky semantics of store.h, in submission order.

#include "store/faulty_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <mutex>
#include <string>
#include <vector>

namespace allot::store {
namespace {

class FaultyStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("allot-faulty-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    auto inner = OpenSqliteStore({.path = (dir_ / "allot.db").string()});
    ASSERT_TRUE(inner.ok()) << inner.status().ToString();
    store_ = std::make_unique<FaultyStore>(std::move(inner).value());
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  Status Put(const std::string& key) {
    Batch b;
    b.Put(Kind::kJob, key, "v");
    return store_->Commit(std::move(b));
  }
  bool Has(const std::string& key) {
    auto v = store_->Get(Kind::kJob, key);
    return v.ok() && v.value().has_value();
  }

  std::filesystem::path dir_;
  std::unique_ptr<FaultyStore> store_;
};

TEST_F(FaultyStoreTest, FailsWhileFaultedAndStaysFailedUntilResume) {
  ASSERT_TRUE(Put("before").ok());
  store_->Fail(ResourceExhausted("disk full"));
  EXPECT_EQ(Put("during").code(), StatusCode::kResourceExhausted);
  store_->Heal();
  // Healed, but sticky: a batch built after the failure must not commit without a Resume().
  EXPECT_EQ(Put("after-heal").code(), StatusCode::kResourceExhausted);
  store_->Resume();
  EXPECT_TRUE(Put("after-resume").ok());
  EXPECT_TRUE(Has("before"));
  EXPECT_FALSE(Has("during"));
  EXPECT_FALSE(Has("after-heal"));
  EXPECT_TRUE(Has("after-resume"));
  EXPECT_EQ(store_->failed_batches(), 2);
}

TEST_F(FaultyStoreTest, AFailedBatchAnswersAfterTheBatchesBeforeIt) {
  // Shared with the callbacks, which run on the store's thread: the last one may still be
  // unlocking `mu` when the test has its answer and returns (under ASan, glibc then asserted in
  // __pthread_tpp_change_priority on the destroyed mutex).
  struct Answers {
    std::vector<int> order;
    std::mutex mu;
    std::promise<void> all;
    int left = 3;
  };
  auto answers = std::make_shared<Answers>();
  std::future<void> all = answers->all.get_future();
  auto done = [answers](int n) {
    return [answers, n](const Status&) {
      std::lock_guard<std::mutex> lock(answers->mu);
      answers->order.push_back(n);
      if (--answers->left == 0) answers->all.set_value();
    };
  };
  Batch a;
  a.Put(Kind::kJob, "a", "1");
  store_->Submit(std::move(a), done(0));
  store_->Fail(Internal("io error"));
  store_->Submit(Batch{}, done(1));
  store_->Submit(Batch{}, done(2));
  all.wait();
  std::lock_guard<std::mutex> lock(answers->mu);
  EXPECT_EQ(answers->order, (std::vector<int>{0, 1, 2}));
}

}  // namespace
}  // namespace allot::store
