#pragma once

// Time is a value passed in by the caller; nothing in common/, model/ or engine/ reads a clock.
// Epoch milliseconds, as on the AWS wire.

#include <cstdint>

namespace allot {

using Timestamp = std::int64_t;  // milliseconds since the Unix epoch
using Duration = std::int64_t;   // milliseconds

constexpr Duration kMillisPerSecond = 1000;
constexpr Duration Seconds(std::int64_t s) { return s * kMillisPerSecond; }

}  // namespace allot
