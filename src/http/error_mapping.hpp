// From a failed HTTP response to the error code and diagnostics the user sees (doc/protocol.md#errors).
// Everything taken from the response is redacted: a server (or proxy) that echoes the
// credential in its body or headers must not leak it into logs and exception messages.
#pragma once

#include "http/message.hpp"

#include <tinker/error.hpp>

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace tinker::http {

/// Replaces every occurrence of `secret` in `text` by "<redacted>". Secrets shorter than 4
/// characters are ignored (redacting them would shred ordinary text and protects nothing).
std::string redact(std::string text, std::string_view secret);

/// The start of `text`, at most `max_bytes` bytes, cut at a UTF-8 character boundary and made
/// printable: invalid UTF-8 bytes and control characters (C0 other than '\n' and '\t', DEL,
/// C1) become '?'. Occurrences of `secret` (if redact() would replace it) become "<redacted>"
/// while scanning, so a long text is never copied whole and no cut can leave part of a secret.
std::string printable_prefix(std::string_view text, std::size_t max_bytes, std::string_view secret = {});

/// Replaces all of `d` by what `r` tells about the failure: http_status; request_id (first of
/// x-request-id, request-id, x-amzn-requestid); message from a JSON body's "detail" (text, or
/// compact JSON when it is a list or object), else "error" (which also sets category:
/// user/server/unknown), else "message", else the compact JSON of the whole body; a non-JSON
/// body gives its first line (trimmed, at most 200 bytes); retry_after = server_retry_hint;
/// body_excerpt = printable_prefix(body, 512). Every text goes through redact(). Never throws
/// on any body.
void fill_diagnostics(const Response& r, diagnostics& d, std::string_view secret,
                      std::chrono::system_clock::time_point now, std::chrono::milliseconds max_hint);

/// make_error_code(errc_from_http_status(status)).
boost::system::error_code error_for_status(int status) noexcept;

/// The outcome of one attempt as an error code, empty for success: the transport's error when
/// there is one, else nothing for a status below 300 (or a 3xx when the request accepts
/// redirects, which are never followed), else error_for_status(status).
boost::system::error_code attempt_error(const boost::system::error_code& transport_error, int status,
                                        bool accept_redirect) noexcept;
/// As above for a whole response, where a bare 400 (no body: Content-Length 0 or absent) is what a
/// proxy injects rather than the server's verdict: errc::connection_failed, retried like a dropped
/// connection (as the Python SDK's pool does, doc/protocol.md#choices-where-the-protocol-was-open).
boost::system::error_code attempt_error(const boost::system::error_code& transport_error, const Response& response,
                                        bool accept_redirect) noexcept;

}  // namespace tinker::http
