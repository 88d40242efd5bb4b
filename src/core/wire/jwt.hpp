// Reading a JWT (compact form "header.payload.signature", each part base64url): the one reader
// shared by the SDK, which looks at the claims of the token the server gave it (expiry, subject)
// without checking its signature, and tinker-local, which checks the signature of the tokens it
// minted before trusting their claims.
#pragma once

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace tinker::wire {

/// The parts of a compact JWT, as views into the token.
struct JwtParts {
  std::string_view header;       ///< base64url
  std::string_view payload;      ///< base64url
  std::string_view signature;    ///< base64url
  std::string_view signed_part;  ///< "header.payload": what the signature covers
};

/// The three parts of `token`; nullopt unless it has exactly two dots.
std::optional<JwtParts> split_jwt(std::string_view token) noexcept;

/// A payload part decoded and parsed; nullopt unless it is base64url of a JSON object.
std::optional<boost::json::object> decode_jwt_payload(std::string_view encoded_payload);

/// The claims of `token` (split_jwt, then decode_jwt_payload), signature NOT checked.
std::optional<boost::json::object> jwt_claims(std::string_view token);

/// The claim `name` when it is a string, else nullopt.
std::optional<std::string> string_claim(const boost::json::object& claims, std::string_view name);

}  // namespace tinker::wire
