// The sampling backoff state of doc/sampling.md#sampling ("backoff_until"), one per (base URL, API key) in a
// process-wide registry, so every SamplingClient with the same key paces itself after a 429 and
// clients with another key never do (doc/architecture.md#threading-and-ordering).
//
// Clients on different io_contexts (threads) share one state: it is a single atomic time point,
// read and extended lock-free; each client sleeps on its own timer on its own executor.
#pragma once

#include <tinker/config.hpp>

#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>

namespace tinker::client::sampling {

class SampleBackoff {
 public:
  using Clock = std::chrono::steady_clock;

  SampleBackoff() = default;
  SampleBackoff(const SampleBackoff&) = delete;
  SampleBackoff& operator=(const SampleBackoff&) = delete;

  /// Backs off until `until`. Choice: never shortens a backoff already in force (a small
  /// prompt's 1 s does not cut a large prompt's 5 s short); doc/sampling.md#sampling simply assigns.
  void extend_to(Clock::time_point until) noexcept;

  /// The end of the latest backoff; nullopt if there never was one.
  std::optional<Clock::time_point> until() const noexcept;

  /// True while a backoff is in force.
  bool active(Clock::time_point now) const noexcept;

  /// doc/sampling.md#sampling "backoff recent": a backoff was set and `now - until < window` (during the
  /// backoff and `window` after it).
  bool recent(Clock::time_point now, std::chrono::milliseconds window) const noexcept;

 private:
  static constexpr Clock::rep never = std::numeric_limits<Clock::rep>::min();
  std::atomic<Clock::rep> until_{never};
};

/// The backoff state of (`base_url`, credential): created exactly once per pair even when many
/// threads ask at the same moment, and kept for the life of the process (a 429 outlives the
/// client that saw it). `credential` is the API key, else the credential command; only a
/// SHA-256 digest of it is kept.
std::shared_ptr<SampleBackoff> shared_sample_backoff(std::string_view base_url, std::string_view credential);

/// How many distinct (base URL, credential) pairs the registry holds (for tests).
std::size_t sample_backoff_registry_size();

}  // namespace tinker::client::sampling
