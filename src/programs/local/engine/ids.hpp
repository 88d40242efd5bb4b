// The ids the engine hands out (request, session and model UUIDs, download tokens) and the one it
// derives: the principal user id of an API key.
#pragma once

#include <cstdint>
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

/// The principal user id of an API key, as the front end derives it (engine.hpp, Principal):
/// "tml:organization_user:" + the first 16 hex digits of SHA-256(key). Used for
/// load_weights' weights_access_token, which names the account that can read a checkpoint.
std::string user_id_for_key(std::string_view key);

}  // namespace tinker::local::engine_detail
