// Request headers the SDK sends on every request (doc/protocol.md#headers) and the idempotency key
// (doc/protocol.md#transport).
#pragma once

#include "http/message.hpp"

#include <tinker/config.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace tinker::http {

/// A random (version 4, RFC 9562) UUID in lowercase text: "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx".
std::string uuid4();

/// "tinker-cpp-retry-<uuid4>": one per logical call, reused by its transport retries; higher retry
/// layers call again and get a new key.
std::string new_idempotency_key();
/// The length of a generated idempotency key.
inline constexpr std::size_t idempotency_key_size = 17 + 36;
/// Writes a new idempotency key (as new_idempotency_key()) into `out`, without allocating.
void write_idempotency_key(char* out);

/// The headers sent on every request that do not change per request: User-Agent (tinker-cpp/<sdk
/// version>), X-Stainless-Lang/-Package-Version (the protocol version the server compares)/
/// -OS/-Arch/-Runtime/-Runtime-Version/-Async, CF-Access-Client-Id/-Secret when set, then
/// `o.default_headers` (a default header replaces a standard one of the same name, compared
/// case-insensitively, so that no header is sent twice). Not included: X-API-Key (added at send
/// time, so credentials can change), Accept, Content-Type, the retry count, read timeout and
/// idempotency key.
std::vector<Header> standard_headers(const ClientOptions& o);

}  // namespace tinker::http
