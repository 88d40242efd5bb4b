// Request assembly, the first step of every HttpClient call: the request target and the header
// lines, formatted before any connection is taken. The header lines come in three blocks that
// change at different rates (per origin, per call, per attempt), so each is formatted only as
// often as it changes. Plain functions: nothing here suspends or touches a socket.
#pragma once

#include "http/connection.hpp"
#include "http/message.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::http {

/// The origin-form target of a request path under the base URL's path: the base path gets a
/// trailing '/' and the request path loses its leading '/', so "https://host/prefix" and
/// "/api/v1/x" give "/prefix/api/v1/x" (doc/protocol.md#transport).
std::string join_path(std::string_view base_path, std::string_view request_path);

/// True for an absolute http(s) URL, which a request gives as its path only for storage
/// downloads (signed URLs, sent without credentials).
bool is_absolute_url(std::string_view path) noexcept;

/// Whole seconds ("60"), or seconds with three decimals ("2.500"): the value of
/// x-stainless-read-timeout. A negative duration reads "0".
std::string seconds_text(std::chrono::milliseconds duration);

/// The most characters seconds_text writes.
inline constexpr std::size_t seconds_text_max = 24;

/// Writes seconds_text(duration) at `out` (room for seconds_text_max); returns the end.
char* write_seconds_text(char* out, std::chrono::milliseconds duration) noexcept;

/// Copies `text` to `out`; returns the end. For writers that sized their buffer beforehand.
inline char* copy_text(char* out, std::string_view text) noexcept {
  if (!text.empty()) std::memcpy(out, text.data(), text.size());
  return out + text.size();
}

/// The lines every request to one origin starts with: Host, the standard headers, and X-API-Key
/// when `credential` is not empty. Formatted once per origin (and again when the credential
/// changes). Throws tinker::error (invalid_configuration) when a name or value holds a line break.
std::string origin_header_lines(const Endpoint& endpoint, const std::vector<Header>& standard_headers,
                                std::string_view credential);

/// Throws tinker::error (invalid_argument) when the call's idempotency key or one of its extra
/// headers holds a line break (header injection): run before a connection is taken, so that
/// nothing is sent.
void check_call_headers(const CallHeaders& call);

/// Appends the lines that stay the same for every attempt of one call: Accept, Content-Type,
/// Content-Encoding, X-Idempotency-Key (not on GET), x-stainless-read-timeout and the request's
/// extra headers. Nothing for a CallHeaders without a request. Checks nothing (check_call_headers
/// did): it runs for every attempt, writing into the connection's head buffer.
void append_call_header_lines(std::string& out, const CallHeaders& call);

/// The same lines written at `out`, which has room for call_header_lines_size(call) bytes;
/// returns the end (the request head is written in one pass, connection.cpp).
char* write_call_header_lines(char* out, const CallHeaders& call) noexcept;

/// At least the size of what append_call_header_lines appends (to reserve it in one piece).
std::size_t call_header_lines_size(const CallHeaders& call) noexcept;

/// check_call_headers, then the lines of append_call_header_lines in a string of their own.
std::string call_header_lines(const Request& request, std::string_view idempotency_key,
                              std::chrono::milliseconds timeout);

/// "x-stainless-retry-count: <n>\r\n", the only line that changes between attempts, formatted on
/// the stack (a string would allocate once per attempt). Defined here: it runs for every attempt,
/// and inlined it costs a dozen instructions.
class RetryCountLine {
 public:
  explicit RetryCountLine(int attempt_index) noexcept {
    char* end = std::copy(name_.begin(), name_.end(), buffer_.data());
    end = std::to_chars(end, buffer_.data() + buffer_.size() - 2, attempt_index).ptr;
    *end++ = '\r';
    *end++ = '\n';
    size_ = static_cast<std::size_t>(end - buffer_.data());
  }
  RetryCountLine(const RetryCountLine&) = delete;  ///< text() points into this object
  RetryCountLine& operator=(const RetryCountLine&) = delete;

  std::string_view text() const noexcept { return std::string_view(buffer_.data(), size_); }

 private:
  static constexpr std::string_view name_ = "x-stainless-retry-count: ";
  std::array<char, name_.size() + 16> buffer_;
  std::size_t size_ = 0;
};

}  // namespace tinker::http
