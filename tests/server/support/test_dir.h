#pragma once

// A scratch directory per test, under the system's temporary directory: named for the process
// and the running test, so parallel test programs and repeated runs never meet, and emptied
// first (a run that crashed leaves one behind).

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace allot::server {

inline std::filesystem::path FreshTestDir(const std::string& prefix) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              (prefix + "-" + std::to_string(::getpid()) + "-" +
                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace allot::server
