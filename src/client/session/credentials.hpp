// Credentials of a client holder (doc/protocol.md#authentication): the claims of a JWT (decoded without verification)
// and the credential command.
#pragma once

#include <tinker/config.hpp>
#include <tinker/error.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tinker::client::session {

/// The claims the SDK reads from a JWT (doc/protocol.md#authentication step 4).
class JwtClaims {
 public:
  JwtClaims() = default;

  std::optional<std::int64_t> exp;  ///< Unix seconds; absent when missing or not a number
  std::optional<std::string> sub;
  std::optional<std::string> email;  ///< empty text counts as none
  std::optional<std::string> iss;
};

/// Decodes the payload (second part) of a compact JWT without verifying its signature. nullopt
/// when the token is not three dot-separated parts or the payload is not a JSON object.
std::optional<JwtClaims> decode_jwt_claims(std::string_view jwt);

/// True for a credential that is a JWT passed as a key (doc/protocol.md#authentication: starts with "eyJ").
bool looks_like_jwt(std::string_view credential) noexcept;

/// Runs `command` through /bin/sh and returns its trimmed standard output (doc/protocol.md#authentication). Blocks.
/// Errors (errc::authentication_failed): the command could not be started, exited non-zero,
/// or printed nothing. `diag.message` says which, never quoting the output (it is the secret).
boost::system::error_code run_credential_command(const std::string& command, Secret& out, diagnostics& diag);

/// The same on a helper thread, completing on `executor`, so the io thread never blocks on
/// the command.
boost::asio::awaitable<boost::system::error_code> async_run_credential_command(std::string command, Secret& out,
                                                                               diagnostics& diag);

}  // namespace tinker::client::session
