// A scripted HTTP/1.1 server on loopback for transport tests, plus raw Beast coroutines
// (raw_connect, raw_exchange) for tests that drive a stream themselves, such as over TLS. The
// blocking raw client is RawHttpClient (support/raw_http_client.hpp).
//
// The server runs on its own io_context and thread, so a test drives the client on the test's
// io_context. The server thread and the test thread share only mutex-protected state (script,
// handler, recorded requests, counters); everything else lives on the server thread.
#pragma once

#include "support/raw_http_client.hpp"
#include "support/test_certs.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tinker::test {

/// One scripted answer. Flags are checked in this order: close_without_response, no_response,
/// raw, truncate, then a normal response.
class ScriptedResponse {
 public:
  ScriptedResponse() = default;
  explicit ScriptedResponse(int status_, std::string body_ = {}) : status(status_), body(std::move(body_)) {}

  int status = 200;
  std::string body;
  std::string content_type = "application/json";  ///< empty: no Content-Type header
  HeaderList headers;                             ///< set after the standard headers (may override them)
  std::chrono::milliseconds delay{0};             ///< wait this long (after reading the request) before acting
  bool close = false;                             ///< answer with Connection: close, then close
  bool truncate = false;                ///< full Content-Length, half the body (at least 1 byte short), then close
  bool no_response = false;             ///< read the request, then send nothing until the client closes
  bool close_without_response = false;  ///< read the request, then close the connection
  std::optional<std::string> raw;       ///< send these bytes verbatim instead of a response
};

/// A request as the server saw it.
class RecordedRequest {
 public:
  RecordedRequest() = default;

  std::string method;
  std::string target;
  HeaderList headers;  ///< names lower-cased, in arrival order
  std::string body;
  std::size_t connection = 0;  ///< index of the connection (accept order, from 0)

  /// The first value of header `name` (case-insensitive), or nothing.
  std::optional<std::string> header(std::string_view name) const;
};

class ScriptedServerOptions {
 public:
  ScriptedServerOptions() = default;

  bool tls = false;
  std::vector<std::string> cert_dns_names{"localhost"};     ///< SubjectAltName of the TLS certificate
  std::vector<std::string> cert_ip_addresses{"127.0.0.1"};  ///< (the CA is made per server)
  bool keep_alive = true;                                   ///< false: every answer carries Connection: close
  /// Close every connection right after a response that announced keep-alive, without telling
  /// the client: its next request on that connection fails (a stale pooled connection).
  bool idle_close = false;
  std::size_t max_request_body = 64 * 1024 * 1024;  ///< larger bodies get 413 and a close
  /// The answer when the script is empty and there is no handler.
  ScriptedResponse default_response{200, "{\"ok\":true}"};
};

class ScriptedServer {
 public:
  using Handler = std::function<ScriptedResponse(const RecordedRequest&)>;

  /// Starts listening on 127.0.0.1 (ephemeral port) before returning.
  explicit ScriptedServer(ScriptedServerOptions options = {});
  /// Stops accepting, closes every connection and joins the server thread.
  ~ScriptedServer();
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  std::uint16_t port() const noexcept;
  /// "http://127.0.0.1:<port>" or "https://127.0.0.1:<port>".
  std::string base_url() const;
  /// The same with another host, e.g. "localhost" for host-name tests.
  std::string url_with_host(std::string_view host) const;
  /// TLS only: the generated certificates, and the CA in a temporary PEM file (for TlsOptions::ca_file).
  const TestCertificates& certificates() const noexcept;
  std::string ca_file() const;

  /// Answers are taken from the script first (FIFO), then from the handler, then the default.
  void push(ScriptedResponse response);
  void set_handler(Handler handler);
  void set_default_response(ScriptedResponse response);
  std::size_t script_remaining() const;

  std::vector<RecordedRequest> requests() const;
  std::size_t request_count() const;
  std::size_t connections_accepted() const;
  std::size_t connections_open() const;

  /// Wait until at least `count` requests arrived / exactly `count` connections are open.
  bool wait_for_requests(std::size_t count, std::chrono::milliseconds timeout = std::chrono::seconds(5)) const;
  bool wait_for_open_connections(std::size_t count, std::chrono::milliseconds timeout = std::chrono::seconds(5)) const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// ---- raw Beast coroutines ---------------------------------------------------------------------

using TlsClientStream = boost::asio::ssl::stream<boost::beast::tcp_stream>;

class RawRequest {
 public:
  RawRequest() = default;
  RawRequest(std::string method_, std::string target_, std::string body_ = {})
      : method(std::move(method_)), target(std::move(target_)), body(std::move(body_)) {}

  std::string method = "GET";
  std::string target = "/";
  std::string body;
  HeaderList headers;
  std::string host = "127.0.0.1";
  bool keep_alive = true;
};

/// Connects `stream` to 127.0.0.1:`port`.
boost::asio::awaitable<boost::system::error_code> raw_connect(
    boost::beast::tcp_stream& stream, std::uint16_t port, std::chrono::milliseconds timeout = std::chrono::seconds(5));

/// Writes `request` and reads one response (body limit 64 MiB) within `timeout` into `response`
/// (header names as received).
boost::asio::awaitable<boost::system::error_code> raw_exchange(
    boost::beast::tcp_stream& stream, RawRequest request, RawResponse& response,
    std::chrono::milliseconds timeout = std::chrono::seconds(5));
boost::asio::awaitable<boost::system::error_code> raw_exchange(
    TlsClientStream& stream, RawRequest request, RawResponse& response,
    std::chrono::milliseconds timeout = std::chrono::seconds(5));

/// Runs `op` on `ioc` (on the calling thread) until it finishes; throws std::runtime_error if it
/// has not finished within `limit`.
template <class T>
T run_until_done(boost::asio::io_context& ioc, boost::asio::awaitable<T> op,
                 std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  auto future = boost::asio::co_spawn(ioc, std::move(op), boost::asio::use_future);
  ioc.restart();
  ioc.run_for(limit);
  if (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    throw std::runtime_error("run_until_done: the operation did not finish in time");
  }
  return future.get();
}

}  // namespace tinker::test
