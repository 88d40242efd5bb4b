// The HTTP/1.1 listener and connections of tinker-local: Beast parsing with explicit limits,
// keep-alive, TCP_NODELAY, idle and request-head timeouts, a connection limit, fault effects on
// the transport (resets, truncation) and one hand-written response head per answer. Io thread
// only.
#pragma once

#include "programs/local/server/frontend.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <cstdint>
#include <string>
#include <unordered_set>

namespace tinker::local::front {

class Connection;

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& io, Frontend& frontend);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Binds and listens (before the io thread runs). Returns the bound port. Throws
  /// tinker::error (invalid_configuration) naming host:port when that fails.
  std::uint16_t listen(const std::string& host, std::uint16_t port);
  /// Spawns the accept loop on the io context.
  void start();
  /// Io thread: stops accepting and closes every connection (pending reads and delays end).
  void close();

  Frontend& frontend() noexcept { return frontend_; }
  bool stopping() const noexcept { return stopping_; }
  boost::asio::ip::tcp::acceptor& acceptor() noexcept { return acceptor_; }
  void add(Connection* connection) { connections_.insert(connection); }
  void remove(Connection* connection) { connections_.erase(connection); }
  std::size_t connection_count() const noexcept { return connections_.size(); }
  /// ServerOptions::max_connections, or the open-file limit's share when that is 0.
  std::size_t connection_limit() const noexcept { return connection_limit_; }
  /// Connections refused over the limit that are still being answered 503.
  std::size_t refusals_in_flight() const noexcept { return refusals_; }
  void refusal_started() noexcept { ++refusals_; }
  void refusal_ended() noexcept { --refusals_; }

 private:
  boost::asio::io_context& io_;
  Frontend& frontend_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::unordered_set<Connection*> connections_;
  std::size_t connection_limit_;
  std::size_t refusals_ = 0;
  bool stopping_ = false;
};

/// The response head tinker-local writes for `reply` (status line, Content-Type,
/// Content-Length unless 204, x-request-id, Connection, the reply's own headers).
void build_response_head(std::string& head, const Reply& reply, std::string_view request_id, bool keep_alive,
                         std::size_t body_size);

/// The reply of a status fault: {"detail": ...} (a bare 400 has an empty body, which clients take
/// for a proxy-injected connection fault),
/// its Retry-After form and x-should-retry.
void fault_status_reply(const FaultRule& rule, std::chrono::system_clock::time_point now, Reply& reply);

}  // namespace tinker::local::front
