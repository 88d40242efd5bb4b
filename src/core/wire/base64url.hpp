// base64url (RFC 4648 section 5) without padding on output; padding optional on input. Shared by
// the SDK (JWT payloads, doc/protocol.md#authentication) and tinker-local (the JWTs it mints).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tinker::wire {

std::string base64url_encode(std::string_view data);
/// nullopt for characters outside the URL alphabet or an impossible length.
std::optional<std::string> base64url_decode(std::string_view text);

}  // namespace tinker::wire
