#pragma once

// How `allot` answers a command line it cannot take. Exit codes (README, "Exit codes"):
// 0 success, 1 an error (the server refused, a file is bad, a job failed to be found),
// 2 a usage error (an unknown command or option, a missing argument). A mistyped command or
// option gets a did-you-mean; a missing argument is named.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace allot::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;

// The candidate closest to `word` (edit distance at most a third of its length, at least 1;
// or the only candidate that starts with it), or "" when none is close. Ties go to the
// earliest candidate, so the answer is deterministic.
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

// Parses args (argv with a trailing nullptr, as PrepareArgv returns). Returns nullopt when the
// command line was taken; otherwise the exit code, after printing the help (0) or the usage
// error with its hint on stderr (2).
std::optional<int> ParseCommandLine(CLI::App& app, std::vector<char*>& args);

}  // namespace allot::cli
