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

#ifdef ALLOT_EXPECT_TCMALLOC

// The mapping (/proc/self/smaps) that holds an address: where it starts (1 when no mapping holds
// it) and its VmFlags, where "hg" marks MADV_HUGEPAGE.
struct Mapping {
  std::uintptr_t start = 1;
  std::set<std::string> flags;
};

Mapping MappingOf(const void* p) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  Mapping found;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t from = 0;
    std::uintptr_t to = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> from >> dash >> to && dash == '-') {
      inside = from <= at && at < to;
      if (inside) found.start = from;
      continue;
    }
    if (!inside || line.rfind("VmFlags:", 0) != 0) continue;
    std::istringstream words(line.substr(8));
    for (std::string w; words >> w;) found.flags.insert(w);
    break;
  }
  return found;
}

#endif  // ALLOT_EXPECT_TCMALLOC

// Builds without sanitizers link tcmalloc (ALLOT_EXPECT_TCMALLOC, set by tests/CMakeLists.txt
// as src/env/CMakeLists.txt decides); sanitizer builds keep the malloc the sanitizer puts in
// glibc's place, which HeapInUse does not read.
TEST(Malloc, HeapInUseCountsWhatMallocHandsOut) {
#ifndef ALLOT_EXPECT_TCMALLOC
  GTEST_SKIP() << "a sanitizer build: the sanitizer's malloc is not the one HeapInUse reads";
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
#ifndef ALLOT_EXPECT_TCMALLOC
  EXPECT_FALSE(TcmallocLinked());
  GTEST_SKIP() << "a sanitizer build keeps the sanitizer's malloc";
#else
  ASSERT_TRUE(TcmallocLinked()) << "a build without sanitizers links tcmalloc";
  if (!std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled")) {
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  }
  char* argv[] = {nullptr};
  ASSERT_TRUE(PrepareServerMalloc(argv).ok());
  // More than tcmalloc holds free: it asks the system, now in pieces marked for huge pages.
  constexpr std::size_t kBig = std::size_t{512} << 20;
  std::unique_ptr<char, decltype(&std::free)> big(static_cast<char*>(std::malloc(kBig)),
                                                  &std::free);
  ASSERT_NE(big, nullptr);
  const Mapping mapping = MappingOf(big.get());
  EXPECT_EQ(mapping.flags.count("hg"), 1U) << "MADV_HUGEPAGE on the block's mapping";
  EXPECT_EQ(mapping.start % (std::uintptr_t{2} << 20), 0U) << "2 MiB-aligned pieces";
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
