// One HTTP/1.1 connection (plain or TLS, possibly through a CONNECT proxy) and one exchange on
// it. The interface is Beast-free; connection.cpp is one of the few translation units that
// instantiate Beast.
#pragma once

#include "http/message.hpp"
#include "http/pool.hpp"

#include <tinker/config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace boost::asio::ssl {
class context;
}

namespace tinker::http {

class ProxySettings;

/// Where a connection goes.
class Endpoint {
 public:
  Endpoint() = default;
  Endpoint(std::string host_, std::uint16_t port_, bool tls_) : host(std::move(host_)), port(port_), tls(tls_) {}
  std::string host;
  std::uint16_t port = 0;
  bool tls = false;
  /// "host" or "host:port" for the Host header (port omitted when it is the scheme default).
  std::string host_header() const;
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

class ConnectSettings {
 public:
  ConnectSettings() = default;
  std::chrono::milliseconds connect_timeout{5000};
  std::shared_ptr<boost::asio::ssl::context> tls_context;  ///< required for TLS endpoints
  bool verify_peer = true;
  const ProxySettings* proxy = nullptr;  ///< may be null: no proxy
};

/// The result of connect(): a connection, or an error class plus a readable reason.
class ConnectResult {
 public:
  ConnectResult() = default;
  std::unique_ptr<PooledConnection> connection;
  boost::system::error_code error;
  std::string reason;
};

boost::asio::awaitable<ConnectResult> connect(boost::asio::any_io_executor executor, Endpoint endpoint,
                                              const ConnectSettings& settings);

/// The header lines of one logical call, the same for every attempt (request_assembly.hpp
/// checks and formats them): they are written straight into the connection's head buffer, so a
/// call needs no string of its own for them.
class CallHeaders {
 public:
  CallHeaders() = default;
  const Request* request = nullptr;  ///< media types, compression, extra headers; null: none
  std::string_view idempotency_key;  ///< not sent on GET
  std::chrono::milliseconds read_timeout{0};
};

/// What goes on the wire for one attempt. The header lines come in blocks that change at
/// different rates: per origin (Host, standard headers, credential: already formatted as
/// "Name: value\r\n"), per logical call, per attempt (formatted). Everything viewed here must
/// outlive the exchange.
class WireRequest {
 public:
  WireRequest() = default;
  Method method = Method::get;
  std::string_view target;  ///< origin-form: "/prefix/api/v1/..."
  std::string_view origin_lines;
  CallHeaders call;
  std::string_view attempt_lines;
  std::string_view body;                        ///< the body, or its spine when `borrowed` is not empty
  std::span<const wire::BorrowedRun> borrowed;  ///< sent between the spine's bytes (plain TCP only)

  std::size_t body_size() const noexcept { return wire::gathered_size(body, borrowed); }
};

/// Appends "Name: value\r\n". Callers check is_safe_header first.
void append_header_line(std::string& out, std::string_view name, std::string_view value);

/// Writes "Name: value\r\n" at `out` (room for name, value and 4 more); returns the end.
char* write_header_line(char* out, std::string_view name, std::string_view value) noexcept;

/// False if the header could inject lines: a name with CR, LF, ':' or nothing in it, or a value
/// with CR or LF.
bool is_safe_header(std::string_view name, std::string_view value) noexcept;
/// False for a value with CR or LF (the half of is_safe_header a request's extra headers need:
/// their names are checked when compiled, HeaderName).
bool is_safe_header_value(std::string_view value) noexcept;

class ExchangeLimits {
 public:
  ExchangeLimits() = default;
  std::chrono::milliseconds timeout{60000};  ///< per write and per read
  std::size_t max_body = 0;
  std::size_t max_header = 0;
};

class ExchangeResult {
 public:
  ExchangeResult() = default;
  boost::system::error_code error;  ///< empty on success
  std::string reason;               ///< readable detail for errors
  Response response;
  /// The connection can carry another request (complete exchange, keep-alive).
  bool reusable = false;
  /// The exchange failed before a single byte of response arrived: on a reused keep-alive
  /// connection this means the server had closed it, and a fresh connection may retry.
  bool nothing_received = false;
};

/// Sends `request` and reads the response into `result` (which must outlive the awaitable; it
/// is the caller's so that neither frame holds a second one). Cancellation (the coroutine's slot)
/// aborts the exchange; a connection that saw an error or a cancellation is never reusable. Not a
/// coroutine itself: it returns the awaitable of the stream-specific exchange (one frame less).
boost::asio::awaitable<void> exchange(PooledConnection& connection, const WireRequest& request, ExchangeLimits limits,
                                      ExchangeResult& result);

}  // namespace tinker::http
