// Small helpers of the engine: ids, hashes, timestamps and error messages.
#pragma once

#include <tinker/types/common.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <random>
#include <string>
#include <string_view>

namespace tinker::local::engine_detail {

/// Random UUID v4 text ("xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx"). Not cryptographic: ids only need
/// to be unique, and the generator is seeded once from std::random_device.
class UuidGenerator {
 public:
  UuidGenerator();
  std::string next();
  /// 32 random hex digits (download tokens).
  std::string token();

 private:
  std::mt19937_64 rng_;
};

/// FNV-1a 64 of `text`, then a SplitMix64 finaliser: stable across runs and platforms, used to
/// derive deterministic seeds from ids.
std::uint64_t stable_hash(std::string_view text);
std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b);

inline Timestamp to_timestamp(std::chrono::system_clock::time_point t) {
  return std::chrono::floor<std::chrono::microseconds>(t);
}

/// The message of a caught exception for a failed future: tinker::error's diagnostics message
/// when it has one (without the error-code prefix), else what().
std::string exception_message(const std::exception& e);

/// "<data>/..." path component for an id: every byte outside [A-Za-z0-9._-] as %XX.
std::string escape_path_component(std::string_view id);

/// The principal user id of an API key, as the front end derives it (engine.hpp, Principal):
/// "tml:organization_user:" + the first 16 hex digits of SHA-256(key). Used for
/// load_weights' weights_access_token, which names the account that can read a checkpoint.
std::string user_id_for_key(std::string_view key);

/// [A-Za-z0-9._-]{1,128}, and not "." or ".." (names become directory names).
bool valid_checkpoint_name(std::string_view name);

}  // namespace tinker::local::engine_detail
