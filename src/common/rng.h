#pragma once

// A small seeded generator (SplitMix64): the same seed always gives the same sequence on every
// platform, unlike std::uniform_int_distribution whose output is implementation-defined.

#include <cstdint>

namespace allot {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Uniform in [lo, hi], both inclusive. REQUIRES: lo <= hi.
  std::int64_t Uniform(std::int64_t lo, std::int64_t hi) {
    const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
    return lo + static_cast<std::int64_t>(span == 0 ? Next() : Next() % span);
  }

  // True with probability percent / 100.
  bool Chance(int percent) { return Uniform(0, 99) < percent; }

 private:
  std::uint64_t state_;
};

}  // namespace allot
