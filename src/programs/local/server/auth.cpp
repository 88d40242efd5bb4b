#include "programs/local/server/auth.hpp"

#include "core/wire/json_writer.hpp"
#include "programs/local/engine/ids.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <array>
#include "core/wire/base64url.hpp"
#include "core/wire/jwt.hpp"

#include <limits>
#include <stdexcept>

namespace tinker::local::front {
namespace {

constexpr std::string_view kIssuer = "passport-local";
constexpr std::string_view kOrganization = "tml:organization:tinker-local";

std::string hmac_sha256(std::string_view key, std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
           data.size(), mac.data(), &length) == nullptr) {
    throw std::runtime_error("HMAC-SHA256 failed");
  }
  return std::string(reinterpret_cast<const char*>(mac.data()), length);
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  return hex;
}

Principal principal_for_key(std::string_view api_key) {
  // One derivation of the user id for the front end and the engine (weights_access_token).
  Principal principal;
  principal.user_id = engine_detail::user_id_for_key(api_key);
  const std::string_view user_hash = std::string_view(principal.user_id).substr(principal.user_id.rfind(':') + 1);
  principal.email = std::string(user_hash) + "@tinker-local.invalid";
  // Choice: every key of one local server belongs to the same organisation.
  principal.organization_id = std::string(kOrganization);
  return principal;
}

std::string mint_jwt(const Principal& principal, std::int64_t issued_at, std::int64_t expires_at,
                     std::string_view secret) {
  std::string claims = "{\"sub\":";
  wire::append_json_string(claims, principal.user_id);
  claims += ",\"email\":";
  wire::append_json_string(claims, principal.email);
  claims += ",\"org\":";
  wire::append_json_string(claims, principal.organization_id);
  claims += ",\"iss\":";
  wire::append_json_string(claims, kIssuer);
  claims += ",\"iat\":" + std::to_string(issued_at) + ",\"exp\":" + std::to_string(expires_at) + "}";
  std::string token = wire::base64url_encode(R"({"alg":"HS256","typ":"JWT"})");
  token += '.';
  token += wire::base64url_encode(claims);
  const std::string signature = hmac_sha256(secret, token);
  token += '.';
  token += wire::base64url_encode(signature);
  return token;
}

std::optional<JwtIdentity> verify_jwt(std::string_view token, std::string_view secret, std::int64_t now) {
  const std::optional<wire::JwtParts> parts = wire::split_jwt(token);
  if (!parts) return std::nullopt;
  const auto signature = wire::base64url_decode(parts->signature);
  const std::string expected = hmac_sha256(secret, parts->signed_part);
  if (!signature || signature->size() != expected.size() ||
      CRYPTO_memcmp(signature->data(), expected.data(), expected.size()) != 0) {
    return std::nullopt;
  }
  const std::optional<boost::json::object> claims = wire::decode_jwt_payload(parts->payload);
  if (!claims) return std::nullopt;
  const boost::json::object& object = *claims;
  const boost::json::value* exp = object.if_contains("exp");
  if (exp == nullptr || !exp->is_int64() || now >= exp->get_int64()) return std::nullopt;
  if (wire::string_claim(object, "iss") != kIssuer) return std::nullopt;
  auto sub = wire::string_claim(object, "sub");
  if (!sub) return std::nullopt;
  JwtIdentity identity;
  identity.principal.user_id = std::move(*sub);
  identity.principal.email = wire::string_claim(object, "email").value_or("");
  identity.principal.organization_id = wire::string_claim(object, "org").value_or(std::string(kOrganization));
  identity.expires_at = exp->get_int64();
  return identity;
}

Authenticator::Authenticator(std::vector<std::string> api_keys, std::chrono::seconds jwt_lifetime)
    : api_keys_(std::move(api_keys)), jwt_lifetime_(jwt_lifetime), secret_(32, '\0') {
  if (RAND_bytes(reinterpret_cast<unsigned char*>(secret_.data()), static_cast<int>(secret_.size())) != 1) {
    throw std::runtime_error("cannot draw a random JWT secret (OpenSSL RAND_bytes failed)");
  }
}

bool Authenticator::key_allowed(std::string_view key) const {
  if (api_keys_.empty()) return key.size() > 4 && key.substr(0, 4) == "tml-";
  for (const std::string& allowed : api_keys_) {
    if (allowed.size() == key.size() && CRYPTO_memcmp(allowed.data(), key.data(), key.size()) == 0) return true;
  }
  return false;
}

std::optional<Principal> Authenticator::remember(std::string_view credential, const Principal& principal,
                                                 std::int64_t expires_at) {
  last_credential_.assign(credential);
  last_principal_ = principal;
  last_expires_at_ = expires_at;
  return principal;
}

std::optional<Principal> Authenticator::authenticate(std::string_view credential,
                                                     std::chrono::system_clock::time_point now) {
  if (credential.empty()) return std::nullopt;
  const std::int64_t now_seconds = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  if (credential == last_credential_ && now_seconds < last_expires_at_) return last_principal_;

  constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
  const std::string key(credential);
  if (const auto cached = jwts_.find(key); cached != jwts_.end()) {
    if (now_seconds < cached->second.expires_at) {
      return remember(credential, cached->second.principal, cached->second.expires_at);
    }
    jwts_.erase(cached);
    return std::nullopt;
  }
  if (const auto cached = keys_.find(key); cached != keys_.end()) return remember(credential, cached->second, kNever);

  if (key_allowed(credential)) {
    if (keys_.size() >= kCacheLimit) keys_.clear();
    const Principal& principal = keys_.emplace(key, principal_for_key(credential)).first->second;
    return remember(credential, principal, kNever);
  }
  // Not an accepted key: perhaps one of our JWTs (compact form, three base64url parts).
  if (credential.find('.') == std::string_view::npos) return std::nullopt;
  auto identity = verify_jwt(credential, secret_, now_seconds);
  if (!identity) return std::nullopt;
  if (jwts_.size() >= kCacheLimit) jwts_.clear();
  const JwtIdentity& stored = jwts_.emplace(key, std::move(*identity)).first->second;
  return remember(credential, stored.principal, stored.expires_at);
}

std::string Authenticator::mint(const Principal& principal, std::chrono::system_clock::time_point now) const {
  const std::int64_t now_seconds = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  return mint_jwt(principal, now_seconds, now_seconds + jwt_lifetime_.count(), secret_);
}

}  // namespace tinker::local::front
