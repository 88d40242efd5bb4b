// Deterministic, platform-independent randomness for the tiny model: FNV-1a hashing of names,
// splitmix64 seeding, xoshiro256** streams and an exactly reproducible normal approximation.
// std::normal_distribution is implementation-defined, so it cannot give the same base weights
// on every standard library; these generators use integer arithmetic and IEEE additions only.
#pragma once

#include <cstdint>
#include <string_view>

namespace tinker::local::model {

/// FNV-1a, 64-bit: seeds the base weights from the model name.
constexpr std::uint64_t fnv1a64(std::string_view text, std::uint64_t hash = 0xcbf29ce484222325ULL) noexcept {
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

/// One splitmix64 output for `state`: a strong 64-bit mixer used to derive seeds.
constexpr std::uint64_t mix64(std::uint64_t state) noexcept {
  std::uint64_t z = state + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// Derives an independent seed for stream `index` of `seed` (e.g. sample i, LoRA part j).
constexpr std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t index) noexcept {
  return mix64(mix64(seed) ^ mix64(index + 0x632be59bd9b4e019ULL));
}

/// xoshiro256**, seeded through splitmix64 as its authors recommend.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) noexcept {
    std::uint64_t state = seed;
    for (auto& word : s_) {
      word = mix64(state);
      state += 0x9e3779b97f4a7c15ULL;
    }
  }

  std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// Uniform in [0, 1) with 53 random bits.
  double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// Approximately standard normal: the Irwin-Hall sum of 12 uniforms minus 6 (mean 0,
  /// variance 1, tails cut at +-6). Exact IEEE additions only, so identical everywhere.
  double normal() noexcept {
    double sum = 0.0;
    for (int i = 0; i < 12; ++i) sum += uniform();
    return sum - 6.0;
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4] = {};
};

}  // namespace tinker::local::model
