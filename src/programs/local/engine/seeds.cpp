#include "programs/local/engine/seeds.hpp"

namespace tinker::local::engine_detail {
namespace {

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

std::uint64_t stable_hash(std::string_view text) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return splitmix(h);
}

std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b) {
  return splitmix(a ^ splitmix(b));
}

}  // namespace tinker::local::engine_detail
