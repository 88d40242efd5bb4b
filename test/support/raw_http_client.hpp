// A blocking HTTP/1.1 client over raw Boost.Beast, for tests that must see the wire itself and
// must not depend on the SDK's own transport (src/http): the scripted test server's and the
// proxy's tests (tinker_unit_tests) and tinker-local's API tests (tinker_local_tests).
//
// Requests are written exactly as the test builds them; responses come back as status, headers
// and body. One keep-alive connection per client, opened at first use; a connection closed by
// the server (or broken by a transport failure) is reopened by the next request unless
// reconnecting is turned off. send() and receive() are separate calls, so a test can pipeline.
//
// Header-only, because tinker_local_tests and tinker_thread_tests do not compile
// test/support/*.cpp.
#pragma once

#include "core/ascii.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <boost/system/error_code.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tinker::test {

/// Header name/value pairs, in order.
using HeaderList = std::vector<std::pair<std::string, std::string>>;

class RawResponse {
 public:
  RawResponse() = default;

  int status = 0;
  HeaderList headers;  ///< names as received, in arrival order
  std::string body;
  bool keep_alive = false;

  /// The first header of that name (case-insensitive), if any.
  std::optional<std::string> header(std::string_view name) const;
  /// How many headers of that name were received.
  std::size_t header_count(std::string_view name) const;
  /// The body parsed as JSON; throws std::runtime_error quoting the response when it is not JSON.
  boost::json::value json() const;
  /// Status, headers and body (cut at 2000 bytes), one per line, for failure messages.
  std::string describe() const;
};

/// What a Beast response (or the part of it parsed so far) says, as a RawResponse.
inline RawResponse raw_response_of(const boost::beast::http::response<boost::beast::http::string_body>& message) {
  RawResponse response;
  response.status = static_cast<int>(message.result_int());
  for (const auto& field : message) {
    response.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  response.body = message.body();
  response.keep_alive = message.keep_alive();
  return response;
}

/// One exchange: what went wrong at the transport level, plus whatever arrived before.
class RawExchange {
 public:
  RawExchange() = default;

  boost::system::error_code error;  ///< empty when a full response arrived
  bool header_received = false;     ///< the status line and headers arrived
  RawResponse response;             ///< complete when !error; else what was parsed so far
};

/// What send_raw produced: the bytes that came back and how the connection ended.
class RawResult {
 public:
  RawResult() = default;

  std::string received;
  boost::system::error_code ended_by;  ///< eof, connection_reset, timeout, ...
  bool closed_by_peer() const;         ///< eof or reset (not our timeout)
};

class RawHttpClient {
 public:
  /// A client of `host`:`port` (connected at first use). `timeout` bounds each connect, each
  /// write and each read.
  explicit RawHttpClient(std::uint16_t port, std::chrono::milliseconds timeout = std::chrono::seconds(20));
  RawHttpClient(std::string host, std::uint16_t port, std::chrono::milliseconds timeout = std::chrono::seconds(20));
  RawHttpClient(const RawHttpClient&) = delete;
  RawHttpClient& operator=(const RawHttpClient&) = delete;

  /// send + receive. Throws std::runtime_error on a transport failure.
  RawResponse request(std::string_view method, std::string_view target, const HeaderList& headers = {},
                      std::string body = {});
  /// send + try_receive: reports a transport failure (reset, truncated body, timeout) instead of
  /// throwing.
  RawExchange exchange(std::string_view method, std::string_view target, const HeaderList& headers = {},
                       std::string body = {});

  /// Writes one request on the keep-alive connection (opened if there is none) without reading
  /// the answer. Sets Host ("host:port") and, when there is a body or the method is POST, PUT or
  /// OPTIONS, Content-Length; any other header is sent only if given. Throws std::runtime_error
  /// on a transport failure.
  void send(std::string_view method, std::string_view target, const HeaderList& headers = {}, std::string body = {});
  /// Writes `bytes` verbatim on the keep-alive connection (opened if there is none), e.g. half a
  /// request; read an answer with receive(). Throws std::runtime_error on a transport failure.
  void send_bytes(std::string_view bytes);
  /// Reads the answer to the oldest request not answered yet (body limit 512 MiB; no body after
  /// HEAD). Throws std::runtime_error on a transport failure.
  RawResponse receive();
  /// Same, but reports a transport failure instead of throwing.
  RawExchange try_receive();

  /// Closes the keep-alive connection, writes `bytes` verbatim on a fresh one and reads until the
  /// server closes it or `timeout` passes. That connection is then closed.
  RawResult send_raw(std::string bytes, std::chrono::milliseconds timeout = std::chrono::milliseconds(3000));

  /// Off: the client never reconnects, and keeps its connection after a failure or an answer
  /// with Connection: close, so a later request fails there when the server has closed it (for
  /// tests of that close). On by default.
  void set_reconnect(bool on) noexcept;
  /// How many TCP connections this client has opened so far (keep-alive checks).
  int connections_opened() const noexcept;
  /// Closes the connection (the next request opens a new one).
  void close();

  /// For operations this client has no call for (a proxy tunnel, a TLS handshake): the
  /// keep-alive connection, opened if there is none (throws std::runtime_error when that fails),
  /// and the io_context it runs on (on the calling thread, e.g. with run_until_done).
  boost::beast::tcp_stream& connection();
  boost::asio::io_context& io_context() noexcept;

 private:
  // Big enough for every result the tests ask for; Beast's default (8 MB) must never apply silently.
  static constexpr std::uint64_t body_limit = 512ull << 20;
  static constexpr std::uint32_t header_limit = 64 * 1024;

  boost::system::error_code write_request(std::string_view method, std::string_view target, const HeaderList& headers,
                                          const std::string& body);
  boost::system::error_code write(std::string_view bytes);
  RawExchange read_response();
  boost::system::error_code open();
  boost::system::error_code connect();
  void failed();
  void run();
  [[noreturn]] static void throw_transport_error(std::string_view what, const boost::system::error_code& ec);

  std::string host_;
  std::uint16_t port_;
  std::chrono::milliseconds timeout_;
  bool reconnect_ = true;
  bool keep_alive_opened_ = false;
  int connections_opened_ = 0;
  boost::asio::io_context ioc_{1};
  std::optional<boost::beast::tcp_stream> stream_;
  boost::beast::flat_buffer buffer_;
  std::deque<bool> awaiting_head_;  // per request sent and not answered yet: was it a HEAD
};

// ---- implementation ---------------------------------------------------------------------------

inline std::optional<std::string> RawResponse::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (ascii::iequals(key, name)) return value;
  }
  return std::nullopt;
}

inline std::size_t RawResponse::header_count(std::string_view name) const {
  return static_cast<std::size_t>(
      std::count_if(headers.begin(), headers.end(), [&](const auto& h) { return ascii::iequals(h.first, name); }));
}

inline boost::json::value RawResponse::json() const {
  boost::system::error_code ec;
  boost::json::value value = boost::json::parse(body, ec);
  if (ec) throw std::runtime_error("response body is not JSON (" + ec.message() + "): " + describe());
  return value;
}

inline std::string RawResponse::describe() const {
  std::ostringstream out;
  out << "HTTP " << status << "\n";
  for (const auto& [key, value] : headers) out << key << ": " << value << "\n";
  constexpr std::size_t shown = 2000;
  out << (body.size() > shown ? body.substr(0, shown) + "...(" + std::to_string(body.size()) + " bytes)" : body);
  return out.str();
}

inline bool RawResult::closed_by_peer() const {
  return ended_by == boost::asio::error::eof || ended_by == boost::asio::error::connection_reset ||
         ended_by == boost::beast::http::error::end_of_stream || ended_by == boost::beast::http::error::partial_message;
}

inline RawHttpClient::RawHttpClient(std::uint16_t port, std::chrono::milliseconds timeout)
    : RawHttpClient("127.0.0.1", port, timeout) {}

inline RawHttpClient::RawHttpClient(std::string host, std::uint16_t port, std::chrono::milliseconds timeout)
    : host_(std::move(host)), port_(port), timeout_(timeout) {}

inline RawResponse RawHttpClient::request(std::string_view method, std::string_view target, const HeaderList& headers,
                                          std::string body) {
  RawExchange result = exchange(method, target, headers, std::move(body));
  if (result.error) throw_transport_error(std::string(method) + " " + std::string(target), result.error);
  return std::move(result.response);
}

inline RawExchange RawHttpClient::exchange(std::string_view method, std::string_view target, const HeaderList& headers,
                                           std::string body) {
  const boost::system::error_code ec = write_request(method, target, headers, body);
  if (ec) {
    RawExchange result;
    result.error = ec;
    return result;
  }
  return read_response();
}

inline void RawHttpClient::send(std::string_view method, std::string_view target, const HeaderList& headers,
                                std::string body) {
  const boost::system::error_code ec = write_request(method, target, headers, body);
  if (ec) throw_transport_error(std::string(method) + " " + std::string(target), ec);
}

inline void RawHttpClient::send_bytes(std::string_view bytes) {
  const boost::system::error_code ec = write(bytes);
  if (ec) throw_transport_error("send_bytes", ec);
}

inline RawResponse RawHttpClient::receive() {
  RawExchange result = read_response();
  if (result.error) throw_transport_error("receive", result.error);
  return std::move(result.response);
}

inline RawExchange RawHttpClient::try_receive() {
  return read_response();
}

inline RawResult RawHttpClient::send_raw(std::string bytes, std::chrono::milliseconds timeout) {
  close();
  RawResult result;
  result.ended_by = connect();
  if (result.ended_by) return result;
  stream_->expires_after(timeout);
  boost::system::error_code ec;
  boost::asio::async_write(*stream_, boost::asio::buffer(bytes),
                           [&](boost::system::error_code e, std::size_t) { ec = e; });
  run();
  std::array<char, 16384> chunk{};
  while (!ec) {
    std::size_t got = 0;
    stream_->async_read_some(boost::asio::buffer(chunk), [&](boost::system::error_code e, std::size_t n) {
      ec = e;
      got = n;
    });
    run();
    result.received.append(chunk.data(), got);
  }
  result.ended_by = ec;
  close();
  return result;
}

inline void RawHttpClient::set_reconnect(bool on) noexcept {
  reconnect_ = on;
}

inline int RawHttpClient::connections_opened() const noexcept {
  return connections_opened_;
}

inline void RawHttpClient::close() {
  if (stream_) {
    boost::system::error_code ignored;
    stream_->socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
    stream_->socket().close(ignored);
    stream_.reset();
  }
  buffer_.clear();
  awaiting_head_.clear();
}

inline boost::beast::tcp_stream& RawHttpClient::connection() {
  const boost::system::error_code ec = open();
  if (ec) throw_transport_error("connect", ec);
  return *stream_;
}

inline boost::asio::io_context& RawHttpClient::io_context() noexcept {
  return ioc_;
}

inline boost::system::error_code RawHttpClient::write_request(std::string_view method, std::string_view target,
                                                              const HeaderList& headers, const std::string& body) {
  std::string text;
  text.append(method).append(" ").append(target).append(" HTTP/1.1\r\n");
  text.append("Host: ").append(host_).append(":").append(std::to_string(port_)).append("\r\n");
  for (const auto& [key, value] : headers) text.append(key).append(": ").append(value).append("\r\n");
  // A GET, HEAD or DELETE without a body gets no Content-Length at all (what clients do).
  if (!body.empty() || method == "POST" || method == "PUT" || method == "OPTIONS") {
    text.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  }
  text.append("\r\n").append(body);
  const boost::system::error_code ec = write(text);
  if (!ec) awaiting_head_.push_back(method == "HEAD");
  return ec;
}

inline boost::system::error_code RawHttpClient::write(std::string_view bytes) {
  boost::system::error_code ec = open();
  if (ec) return ec;
  stream_->expires_after(timeout_);
  boost::asio::async_write(*stream_, boost::asio::buffer(bytes.data(), bytes.size()),
                           [&](boost::system::error_code e, std::size_t) { ec = e; });
  run();
  if (ec) failed();
  return ec;
}

inline RawExchange RawHttpClient::read_response() {
  RawExchange result;
  if (!stream_) {
    result.error = boost::asio::error::not_connected;
    return result;
  }
  bool head = false;
  if (!awaiting_head_.empty()) {
    head = awaiting_head_.front();
    awaiting_head_.pop_front();
  }
  boost::beast::http::response_parser<boost::beast::http::string_body> parser;
  parser.header_limit(header_limit);
  parser.body_limit(body_limit);
  parser.skip(head);
  boost::system::error_code ec;
  stream_->expires_after(timeout_);
  boost::beast::http::async_read(*stream_, buffer_, parser, [&](boost::system::error_code e, std::size_t) { ec = e; });
  run();
  result.header_received = parser.is_header_done();
  result.response = raw_response_of(parser.get());
  if (ec) {
    result.error = ec;
    failed();
  } else if (!result.response.keep_alive && reconnect_) {
    close();
  }
  return result;
}

// Opens the keep-alive connection if there is none (only the first time when reconnecting is off).
inline boost::system::error_code RawHttpClient::open() {
  if (stream_) return {};
  if (!reconnect_ && keep_alive_opened_) return boost::asio::error::not_connected;
  const boost::system::error_code ec = connect();
  if (!ec) keep_alive_opened_ = true;
  return ec;
}

inline boost::system::error_code RawHttpClient::connect() {
  stream_.emplace(ioc_);
  boost::asio::ip::tcp::resolver resolver(ioc_);
  boost::system::error_code ec;
  auto endpoints = resolver.resolve(host_, std::to_string(port_), ec);
  if (ec) {
    stream_.reset();
    return ec;
  }
  stream_->expires_after(timeout_);
  stream_->async_connect(endpoints,
                         [&](boost::system::error_code e, const boost::asio::ip::tcp::endpoint&) { ec = e; });
  run();
  if (ec) {
    stream_.reset();
    return ec;
  }
  stream_->expires_never();
  ++connections_opened_;
  stream_->socket().set_option(boost::asio::ip::tcp::no_delay(true), ec);
  return {};
}

// A transport failure: the connection is done for, unless the test wants to see it fail again.
inline void RawHttpClient::failed() {
  if (reconnect_) close();
}

inline void RawHttpClient::run() {
  ioc_.restart();
  ioc_.run();
}

inline void RawHttpClient::throw_transport_error(std::string_view what, const boost::system::error_code& ec) {
  throw std::runtime_error(std::string(what) + ": transport error: " + ec.message());
}

}  // namespace tinker::test
