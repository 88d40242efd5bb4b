// Authentication of tinker-local (doc/protocol.md#authentication): X-API-Key holds either an API key
// (any "tml-" key, or only the configured ones) or a JWT this server minted at auth/token.
//
// JWTs are HS256 with a random secret drawn per server start (so tokens do not survive a
// restart; the SDK then gets 401 and must re-authenticate). Claims: sub (user URN), email, org,
// iss = "passport-local", iat, exp (seconds). A JWT authenticates as the principal of the key
// that minted it. Keys are never stored in clear beyond the verification cache, never logged.
#pragma once

#include "programs/local/engine/engine.hpp"

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tinker::local::front {

/// "tml:organization_user:" + the first 16 hex digits of SHA-256(key), its email
/// "<16 hex>@tinker-local.invalid" and the one organisation of a local server.
Principal principal_for_key(std::string_view api_key);

/// Lowercase hex of SHA-256(data).
std::string sha256_hex(std::string_view data);

/// HS256 JWT over `principal` with the given times (Unix seconds).
std::string mint_jwt(const Principal& principal, std::int64_t issued_at, std::int64_t expires_at,
                     std::string_view secret);

/// A verified JWT: whom it names and until when (Unix seconds) it is valid.
class JwtIdentity {
 public:
  Principal principal;
  std::int64_t expires_at = 0;
};

/// The identity of a JWT minted with `secret`, if its signature is valid, its issuer is
/// "passport-local" and `now` (Unix seconds) is before its exp.
std::optional<JwtIdentity> verify_jwt(std::string_view token, std::string_view secret, std::int64_t now);

class Authenticator {
 public:
  /// `api_keys` empty: any key starting with "tml-" is accepted.
  Authenticator(std::vector<std::string> api_keys, std::chrono::seconds jwt_lifetime);

  /// The caller's principal, or nullopt for a missing or invalid credential.
  std::optional<Principal> authenticate(std::string_view credential, std::chrono::system_clock::time_point now);

  /// A JWT for `principal`, valid for the configured lifetime from `now`.
  std::string mint(const Principal& principal, std::chrono::system_clock::time_point now) const;

 private:
  bool key_allowed(std::string_view key) const;

  std::vector<std::string> api_keys_;
  std::chrono::seconds jwt_lifetime_;
  std::string secret_;
  // Verified credentials, so a request costs one hash lookup instead of a SHA-256 or HMAC.
  std::optional<Principal> remember(std::string_view credential, const Principal& principal, std::int64_t expires_at);

  // The last credential seen, answered without allocating (a client sends the same one each time).
  std::string last_credential_;
  Principal last_principal_;
  std::int64_t last_expires_at_ = 0;
  std::unordered_map<std::string, Principal> keys_;
  std::unordered_map<std::string, JwtIdentity> jwts_;
  static constexpr std::size_t kCacheLimit = 4096;
};

}  // namespace tinker::local::front
