#include "env/malloc.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>

namespace allot::env {
namespace {

// The VmFlags (/proc/self/smaps) of the mapping that holds `p`: "hg" marks MADV_HUGEPAGE.
std::set<std::string> VmFlagsOf(const void* p) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t from = 0;
    std::uintptr_t to = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> from >> dash >> to && dash == '-') {
      inside = from <= at && at < to;
      continue;
    }
    if (!inside || line.rfind("VmFlags:", 0) != 0) continue;
    std::istringstream words(line.substr(8));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

// Builds without sanitizers link tcmalloc; sanitizer builds keep the malloc the sanitizer puts
// in glibc's place. Either way HeapInUse counts what malloc handed out.
TEST(Malloc, HeapInUseCountsWhatMallocHandsOut) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizer's malloc is not the one HeapInUse reads";
#else
  constexpr std::size_t kBytes = 64 << 20;
  const std::int64_t before = HeapInUse();
  std::unique_ptr<char, decltype(&std::free)> block(static_cast<char*>(std::malloc(kBytes)),
                                                    &std::free);
  ASSERT_NE(block, nullptr);
  std::memset(block.get(), 1, kBytes);
  EXPECT_GE(HeapInUse() - before, static_cast<std::int64_t>(kBytes));
  block.reset();
  EXPECT_LT(HeapInUse() - before, static_cast<std::int64_t>(kBytes));
#endif
}

TEST(Malloc, TheServerAllocatorServesAfterItIsPrepared) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizer builds keep the sanitizer's malloc";
#else
  ASSERT_TRUE(TcmallocLinked()) << "a build without sanitizers links tcmalloc";
  char* argv[] = {nullptr};
  ASSERT_TRUE(PrepareServerMalloc(argv).ok());
  // More than tcmalloc holds free: it asks the system, now in pieces marked for huge pages.
  constexpr std::size_t kBig = std::size_t{512} << 20;
  std::unique_ptr<char, decltype(&std::free)> big(static_cast<char*>(std::malloc(kBig)),
                                                  &std::free);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(VmFlagsOf(big.get()).count("hg"), 1U) << "MADV_HUGEPAGE on the block's mapping";
  // Many blocks, each written through and freed again.
  for (int i = 0; i < 64; ++i) {
    std::unique_ptr<char, decltype(&std::free)> block(static_cast<char*>(std::malloc(5 << 20)),
                                                      &std::free);
    ASSERT_NE(block, nullptr);
    std::memset(block.get(), i, 5 << 20);
    EXPECT_EQ(block.get()[(5 << 20) - 1], static_cast<char>(i));
  }
#endif
}

}  // namespace
}  // namespace allot::env
