/// \file
/// Error codes, diagnostics and the exception type of tinker-cpp.
///
/// Every asynchronous operation completes with a `boost::system::error_code` whose category is
/// `tinker::error_category()`. The details a user needs to act on a failure (HTTP status, the
/// server's request id and message, a field path for decode errors, ...) travel separately in a
/// `tinker::diagnostics`, and together with the code in the exception `tinker::error`.
/// `doc/architecture.md#errors-and-diagnostics` explains the design, `doc/protocol.md#errors`
/// how server answers map to codes.
///
/// Nothing in this file ever holds the API key: messages are built from server responses and
/// field names, never from credentials.
#pragma once

#include <boost/system/error_code.hpp>
#include <boost/system/system_error.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <type_traits>

namespace tinker {

/// Failure classes of the SDK. Values are stable (they are reported in logs and telemetry).
///
/// A `tinker::errc` converts to a `boost::system::error_code` of `error_category()`, so a code
/// can be tested with `code == tinker::errc::timeout`.
enum class errc {
  // Transport: no usable HTTP response.
  connection_failed = 1,  ///< connect, reset, DNS, TLS handshake or proxy failure
  timeout = 2,            ///< connect, read or whole-operation deadline passed
  cancelled = 3,          ///< the caller cancelled the operation
  tls_error = 4,          ///< certificate verification or TLS protocol failure

  // HTTP status classes (doc/protocol.md#errors). The status itself is in
  // diagnostics::http_status.
  bad_request = 10,            ///< 400
  authentication_failed = 11,  ///< 401
  payment_required = 12,       ///< 402: billing hold, after the pause window (`doc/protocol.md#billing-pause-402`)
  permission_denied = 13,      ///< 403
  not_found = 14,              ///< 404
  request_timeout = 15,        ///< 408
  conflict = 16,               ///< 409
  gone = 17,                   ///< 410: the server no longer has the promised result
  unprocessable_entity = 18,   ///< 422
  rate_limited = 19,           ///< 429
  http_error = 20,             ///< any other 3xx/4xx status
  server_error = 21,           ///< 5xx

  // The server answered, but not with what the protocol says.
  protocol_error = 30,      ///< unexpected content type, violated protocol rule
  decode_error = 31,        ///< malformed JSON/protobuf, wrong field type, missing field (field path in diagnostics)
  response_too_large = 32,  ///< a response above ClientOptions::limits

  // An asynchronous request completed with {"error", "category"} (doc/protocol.md#errors).
  request_failed = 40,  ///< the category (user/server/unknown) is in diagnostics::category

  // Client-side problems detected before anything is sent.
  invalid_argument = 50,       ///< a value the caller passed is not valid (field path in diagnostics)
  invalid_configuration = 51,  ///< an option or environment variable is not valid (names the variable)

  // Local files (weights export, `doc/export.md`).
  invalid_file = 60,  ///< a file's content is not what it claims (the message names the file and the item)
  io_error = 61,      ///< reading or writing a local file failed (the message names the file and the reason)
};

/// Who caused an asynchronous request failure (`doc/protocol.md#errors`); lowercase on the wire.
enum class RequestErrorCategory {
  unknown,  ///< not said (or a value this SDK does not know)
  server,   ///< the service failed
  user,     ///< the request was wrong (bad data, wrong lengths, ...)
};

/// The wire name: "unknown", "server" or "user".
const char* to_string(RequestErrorCategory category) noexcept;

/// The category of `tinker::errc` codes ("tinker").
const boost::system::error_category& error_category() noexcept;

/// The error_code of `e` (also found by argument-dependent lookup, which makes errc convertible).
inline boost::system::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), error_category()};
}

/// Maps an HTTP status (>= 300) to its error class: 400 bad_request, ..., 429 rate_limited, any
/// 5xx server_error, any other status http_error.
errc errc_from_http_status(int status) noexcept;

/// Everything known about a failure besides its code. Empty fields mean "not known".
///
/// Every `async_x` has an overload taking a `diagnostics&` that is filled when the operation
/// fails; `tinker::error::diag()` carries the same. Never holds a credential.
class diagnostics {
 public:
  /// Nothing known.
  diagnostics() = default;

  int http_status = 0;                           ///< HTTP status of the failed response, 0 if none
  std::string request_id;                        ///< the server's request id (future id or x-request-id), if any
  std::string message;                           ///< human-readable detail: server message, field path error, ...
  std::optional<RequestErrorCategory> category;  ///< set for errc::request_failed
  std::optional<std::chrono::milliseconds> retry_after;  ///< server retry hint, if any
  std::string body_excerpt;                              ///< the first bytes of an unexpected response body

  /// Resets every field to "not known".
  void clear();
  /// True when no field is set.
  bool empty() const noexcept;

  /// Equal when every field is equal.
  friend bool operator==(const diagnostics&, const diagnostics&) = default;
};

/// The exception thrown by the blocking API and by `tinker::use_awaitable`: an error code plus
/// its diagnostics. `what()` combines the code's message with the diagnostics.
///
///     try {
///       auto out = co_await future.async_get(tinker::use_awaitable);
///     } catch (const tinker::error& e) {
///       if (e.code() == tinker::errc::request_failed) std::cerr << e.diag().message << '\n';
///     }
class error : public boost::system::system_error {
 public:
  /// The failure `code` with what is known about it.
  explicit error(boost::system::error_code code, diagnostics diag = {});
  /// The failure `code` explained by `message` (diagnostics::message).
  error(errc code, std::string message);

  /// What is known about the failure besides its code.
  const diagnostics& diag() const noexcept { return diag_; }
  /// "<code message> (HTTP <status>) [category: <category>]: <diagnostics message> (request id
  /// <id>)", each part only when known.
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  diagnostics diag_;
  std::string what_;
};

/// Throws `tinker::error` carrying `code` and `diag` if `code` is a failure; does nothing otherwise.
void throw_on_error(boost::system::error_code code, const diagnostics& diag);

}  // namespace tinker

/// \cond
// Makes tinker::errc convertible to boost::system::error_code (documented at tinker::errc; hidden
// from Doxygen, which cannot place a specialisation in a namespace it has not seen).
template <>
struct boost::system::is_error_code_enum<tinker::errc> : std::true_type {};
/// \endcond
