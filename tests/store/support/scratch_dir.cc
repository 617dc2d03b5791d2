#include "store/support/scratch_dir.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace allot::store::testing {

ScratchDir::ScratchDir() {
  const char* base = std::getenv("TEST_TMPDIR");
  if (base == nullptr || *base == '\0') base = std::getenv("TMPDIR");
  if (base == nullptr || *base == '\0') base = "/tmp";
  std::string pattern = std::string(base) + "/allot_store_XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  const char* made = mkdtemp(buffer.data());
  if (made == nullptr) {
    ADD_FAILURE() << "mkdtemp " << pattern << " failed";
    std::abort();
  }
  path_ = made;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::unique_ptr<SqliteStore> OpenOrDie(const std::string& path,
                                       std::size_t max_batches_per_commit) {
  Result<std::unique_ptr<SqliteStore>> store =
      SqliteStore::Open({.path = path, .max_batches_per_commit = max_batches_per_commit});
  if (!store.ok()) {
    ADD_FAILURE() << "open " << path << ": " << store.status().ToString();
    std::abort();
  }
  return std::move(store).value();
}

}  // namespace allot::store::testing
