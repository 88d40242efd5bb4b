#include "client/sampling/backoff.hpp"

#include <tinker/error.hpp>

#include <openssl/evp.h>

#include <array>
#include <map>
#include <mutex>
#include <string>

namespace tinker::client::sampling {
namespace {

// Only a digest of the credential is kept in the registry, so the process-wide map never holds
// an API key.
std::string registry_key(std::string_view base_url, std::string_view credential) {
  std::string material;
  material.reserve(base_url.size() + credential.size() + 1);
  material.append(base_url);
  material.push_back('\n');  // cannot occur in a URL, so (url, key) pairs never collide by concatenation
  material.append(credential);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(material.data(), material.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1) {
    throw error(errc::invalid_configuration, "could not hash the sampling rate limiter's key (SHA-256 failed)");
  }
  return std::string(reinterpret_cast<const char*>(digest.data()), length);
}

class Registry {
 public:
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<SampleBackoff>> states;
};

Registry& registry() {
  static Registry instance;  // thread-safe initialisation (C++11 magic statics)
  return instance;
}

}  // namespace

void SampleBackoff::extend_to(Clock::time_point until) noexcept {
  const Clock::rep wanted = until.time_since_epoch().count();
  Clock::rep current = until_.load(std::memory_order_relaxed);
  while (current < wanted && !until_.compare_exchange_weak(current, wanted, std::memory_order_acq_rel)) {
  }
}

std::optional<SampleBackoff::Clock::time_point> SampleBackoff::until() const noexcept {
  const Clock::rep value = until_.load(std::memory_order_acquire);
  if (value == never) return std::nullopt;
  return Clock::time_point(Clock::duration(value));
}

bool SampleBackoff::active(Clock::time_point now) const noexcept {
  const auto end = until();
  return end && now < *end;
}

bool SampleBackoff::recent(Clock::time_point now, std::chrono::milliseconds window) const noexcept {
  const auto end = until();
  return end && now - *end < window;
}

std::shared_ptr<SampleBackoff> shared_sample_backoff(std::string_view base_url, std::string_view credential) {
  std::string key = registry_key(base_url, credential);
  Registry& r = registry();
  // Insert-if-absent under the lock: the lookup and the creation are one step, so two threads
  // asking at once can never make two states.
  const std::lock_guard<std::mutex> lock(r.mutex);
  auto [slot, inserted] = r.states.try_emplace(std::move(key));
  if (inserted) slot->second = std::make_shared<SampleBackoff>();
  return slot->second;
}

std::size_t sample_backoff_registry_size() {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  return r.states.size();
}

}  // namespace tinker::client::sampling
