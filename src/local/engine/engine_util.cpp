#include "local/engine/engine_util.hpp"

#include <tinker/error.hpp>

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

std::string exception_message(const std::exception& e) {
  if (const auto* te = dynamic_cast<const tinker::error*>(&e); te != nullptr && !te->diag().message.empty()) {
    return te->diag().message;
  }
  return e.what();
}

std::string escape_path_component(std::string_view id) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(id.size() + 8);
  for (unsigned char c : id) {
    bool plain =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (plain) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 0xF]);
    }
  }
  if (out == "." || out == "..") out = out == "." ? "%2E" : "%2E%2E";
  return out;
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

bool valid_checkpoint_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || name == "." || name == "..") return false;
  for (unsigned char c : name) {
    bool ok =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace tinker::local::engine_detail
