#pragma once

// A fresh directory for one test's database files, removed with everything in it at scope end.

#include <memory>
#include <string>

#include "store/sqlite_store.h"
#include "store/store.h"

namespace allot::store::testing {

class ScratchDir {
 public:
  ScratchDir();  // under $TEST_TMPDIR or $TMPDIR (else /tmp); aborts the test if that fails
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Opens the SQLite store at `path`, failing the test (fatally) if it cannot.
std::unique_ptr<SqliteStore> OpenOrDie(const std::string& path,
                                       std::size_t max_batches_per_commit = 1024);

}  // namespace allot::store::testing
