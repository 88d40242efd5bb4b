// The Beast side of a connection made by http::connect(): its streams, for the few src/http
// translation units that drive Beast themselves (connection.cpp, download.cpp). Beast and
// OpenSSL: include only from src/http/*.cpp.
#pragma once

#include "http/exchange_deadline.hpp"
#include "http/pool.hpp"
#include "http/tls.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tinker::http {

/// The token the Beast-driving coroutines await with: the error code comes back as a value, never
/// as an exception.
inline constexpr auto as_tuple_awaitable = boost::asio::as_tuple(boost::asio::use_awaitable);

/// What connect() makes: a plain or TLS stream (already tunnelled through a proxy when one
/// applies, TLS handshake done).
class Connection final : public PooledConnection {
 public:
  explicit Connection(boost::beast::tcp_stream&& plain) : deadline(plain.get_executor()), plain_(std::move(plain)) {}
  explicit Connection(std::unique_ptr<TlsStream> tls) : deadline(tls->get_executor()), tls_(std::move(tls)) {}

  void close() noexcept override {
    boost::system::error_code ignored;
    tcp().socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
    tcp().socket().close(ignored);
  }

  boost::beast::tcp_stream& tcp() { return tls_ ? boost::beast::get_lowest_layer(*tls_) : *plain_; }
  TlsStream* tls() { return tls_.get(); }
  boost::beast::tcp_stream* plain() { return plain_ ? &*plain_ : nullptr; }

  /// The time limit of the exchange in progress (exchange_on; connect uses the stream's own).
  ExchangeDeadline deadline;
  boost::beast::flat_buffer buffer;
  std::string head;  ///< request line and headers of the current exchange, reused
  /// The buffers of the current exchange: head and body, or head and a gathered body's pieces.
  std::array<boost::asio::const_buffer, 2> head_and_body;
  std::vector<boost::asio::const_buffer> gather;
  /// Set once an answer on this connection was large (a training result): its reads then get a
  /// larger buffer (connection.cpp, exchange_on).
  bool carries_large_answers = false;

 private:
  std::optional<boost::beast::tcp_stream> plain_;
  std::unique_ptr<TlsStream> tls_;
};

}  // namespace tinker::http
