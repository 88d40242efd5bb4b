#include "programs/local/engine/ids.hpp"

#include <openssl/evp.h>

#include <array>
#include <cstdio>

namespace tinker::local::engine_detail {

UuidGenerator::UuidGenerator() {
  std::random_device device;
  std::seed_seq seed{device(), device(), device(), device(), device(), device(), device(), device()};
  rng_.seed(seed);
}

std::string UuidGenerator::next() {
  std::uint64_t high = rng_();
  std::uint64_t low = rng_();
  high = (high & 0xFFFFFFFFFFFF0FFFull) | 0x0000000000004000ull;  // version 4
  low = (low & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;    // variant 10
  std::array<char, 37> text{};
  std::snprintf(text.data(), text.size(), "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(high >> 32),
                static_cast<unsigned>((high >> 16) & 0xFFFF), static_cast<unsigned>(high & 0xFFFF),
                static_cast<unsigned>(low >> 48), static_cast<unsigned long long>(low & 0xFFFFFFFFFFFFull));
  return std::string(text.data(), 36);
}

std::string UuidGenerator::token() {
  std::array<char, 33> text{};
  std::snprintf(text.data(), text.size(), "%016llx%016llx", static_cast<unsigned long long>(rng_()),
                static_cast<unsigned long long>(rng_()));
  return std::string(text.data(), 32);
}

std::string user_id_for_key(std::string_view key) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_Digest(key.data(), key.size(), digest.data(), &length, EVP_sha256(), nullptr);
  static constexpr char hex[] = "0123456789abcdef";
  std::string id = "tml:organization_user:";
  for (int i = 0; i < 8; ++i) {
    id.push_back(hex[digest[static_cast<std::size_t>(i)] >> 4]);
    id.push_back(hex[digest[static_cast<std::size_t>(i)] & 0xF]);
  }
  return id;
}

}  // namespace tinker::local::engine_detail
