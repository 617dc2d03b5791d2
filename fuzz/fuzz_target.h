#pragma once

// The libFuzzer entry point every fuzz/*_fuzz.cc defines. `make fuzz` links each with libFuzzer
// (clang, -fsanitize=fuzzer,address,undefined); `make test` links each with replay_main.cc
// instead and feeds it every file of fuzz/corpus/<target>/, so the seeds run with gcc too.
//
// A target returns 0 for any input. Anything else it notices (a broken property, an exception
// it did not expect) is a finding: it prints what and calls std::abort().

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace allot::fuzz {

// Prints "FINDING: <what>" to stderr and aborts, so libFuzzer saves the input as a crash.
[[noreturn]] void Finding(std::string_view what);

// True if `s` is valid UTF-8 (what a strict nlohmann dump needs of a string).
bool IsValidUtf8(std::string_view s);

}  // namespace allot::fuzz
