#include "support/test_proxy.hpp"

#include "support/loopback_service.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>

#include <array>
#include <condition_variable>
#include <exception>
#include <future>
#include <mutex>
#include <set>
#include <thread>

namespace tinker::test {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

class Tunnel {
 public:
  explicit Tunnel(tcp::socket client_) : client(std::move(client_)), target(client.get_executor()) {}

  void close() {
    error_code ignored;
    client.shutdown(tcp::socket::shutdown_both, ignored);
    client.close(ignored);
    target.shutdown(tcp::socket::shutdown_both, ignored);
    target.close(ignored);
  }

  tcp::socket client;
  tcp::socket target;
  int directions = 2;  ///< relays still running
};

std::string status_line(int status) {
  switch (status) {
    case 200: return "HTTP/1.1 200 Connection established\r\n\r\n";
    case 400: return "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    case 405: return "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    case 407:
      return "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"tinker-test\"\r\n"
             "Content-Length: 0\r\nConnection: close\r\n\r\n";
    default: return "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  }
}

// "host:port" or "[v6]:port" -> host without brackets and port; nothing if malformed.
std::optional<std::pair<std::string, std::string>> split_target(const std::string& target) {
  const auto colon = target.rfind(':');
  if (colon == std::string::npos || colon + 1 == target.size()) return std::nullopt;
  std::string host = target.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) return std::nullopt;
  return std::make_pair(host, target.substr(colon + 1));
}

}  // namespace

class ConnectProxy::Impl : public LoopbackService {
 public:
  explicit Impl(std::optional<std::string> required_) : required(std::move(required_)) {}

  void start();
  void stop();
  void finish(const std::shared_ptr<Tunnel>& tunnel, bool was_established);
  void record(ConnectRecord record);

  const std::optional<std::string> required;

  // Shared with the test thread: guarded by `mutex`.
  mutable std::mutex mutex;
  std::vector<ConnectRecord> records;
  std::size_t established = 0;
  std::size_t open = 0;

  // Server thread only (after start()).
  std::set<std::shared_ptr<Tunnel>> tunnels;
  bool stopping = false;
};

namespace {

// Copies one direction; a clean end (EOF) is passed on as a half-close so the other direction
// can still finish, anything else tears the tunnel down.
asio::awaitable<void> relay(ConnectProxy::Impl* proxy, std::shared_ptr<Tunnel> tunnel, bool upstream) {
  tcp::socket& from = upstream ? tunnel->client : tunnel->target;
  tcp::socket& to = upstream ? tunnel->target : tunnel->client;
  std::array<char, 16 * 1024> data;
  error_code failure;
  for (;;) {
    auto [read_ec, n] = co_await from.async_read_some(asio::buffer(data), use_tuple);
    if (read_ec) {
      failure = read_ec;
      break;
    }
    auto [write_ec, written] = co_await asio::async_write(to, asio::buffer(data.data(), n), use_tuple);
    if (write_ec) {
      failure = write_ec;
      break;
    }
  }
  error_code ignored;
  if (failure == asio::error::eof) {
    to.shutdown(tcp::socket::shutdown_send, ignored);
  } else {
    tunnel->close();
  }
  if (--tunnel->directions == 0) proxy->finish(tunnel, true);
}

// Connects the tunnel's target socket; the status to answer with.
asio::awaitable<int> connect_target(Tunnel& tunnel, std::string target) {
  const auto parts = split_target(target);
  if (!parts) co_return 400;
  tcp::resolver resolver(tunnel.target.get_executor());
  auto [resolve_ec, results] = co_await resolver.async_resolve(parts->first, parts->second, use_tuple);
  if (resolve_ec) co_return 502;
  auto [connect_ec, endpoint] = co_await asio::async_connect(tunnel.target, results, use_tuple);
  if (connect_ec) co_return 502;
  tunnel.target.set_option(tcp::no_delay(true), connect_ec);
  co_return 200;
}

asio::awaitable<void> run_tunnel(ConnectProxy::Impl* proxy, std::shared_ptr<Tunnel> tunnel) {
  beast::flat_buffer buffer;
  bhttp::request_parser<bhttp::empty_body> parser;
  parser.header_limit(16 * 1024);
  parser.body_limit(0);
  auto [read_ec, n] = co_await bhttp::async_read(tunnel->client, buffer, parser, use_tuple);
  if (read_ec) {
    proxy->finish(tunnel, false);
    co_return;
  }
  const auto& request = parser.get();
  ConnectRecord record;
  record.method = std::string(request.method_string());
  record.target = std::string(request.target());
  if (auto it = request.find(bhttp::field::proxy_authorization); it != request.end()) {
    record.authorization = std::string(it->value());
  }
  if (request.method() != bhttp::verb::connect) {
    record.status = 405;
  } else if (proxy->required && record.authorization != proxy->required) {
    record.status = 407;
  } else {
    record.status = co_await connect_target(*tunnel, record.target);
  }
  const int status = record.status;
  proxy->record(std::move(record));

  const std::string answer = status_line(status);
  auto [write_ec, written] = co_await asio::async_write(tunnel->client, asio::buffer(answer), use_tuple);
  // Bytes the client sent right behind its CONNECT belong to the target.
  if (!write_ec && status == 200 && buffer.size() != 0) {
    auto [forward_ec, forwarded] = co_await asio::async_write(tunnel->target, buffer.data(), use_tuple);
    write_ec = forward_ec;
  }
  if (write_ec || status != 200 || proxy->stopping) {
    proxy->finish(tunnel, status == 200);
    co_return;
  }
  asio::co_spawn(proxy->ioc, relay(proxy, tunnel, true), rethrow);
  asio::co_spawn(proxy->ioc, relay(proxy, tunnel, false), rethrow);
}

asio::awaitable<void> accept_clients(ConnectProxy::Impl* proxy) {
  for (;;) {
    auto [ec, socket] = co_await proxy->acceptor.async_accept(use_tuple);
    if (ec || proxy->stopping) co_return;
    socket.set_option(tcp::no_delay(true), ec);
    auto tunnel = std::make_shared<Tunnel>(std::move(socket));
    proxy->tunnels.insert(tunnel);
    asio::co_spawn(proxy->ioc, run_tunnel(proxy, tunnel), rethrow);
  }
}

}  // namespace

void ConnectProxy::Impl::start() {
  start_listening(accept_clients(this));
}

void ConnectProxy::Impl::stop() {
  stopping = true;
  error_code ignored;
  acceptor.close(ignored);
  for (const auto& tunnel : tunnels) tunnel->close();
}

void ConnectProxy::Impl::finish(const std::shared_ptr<Tunnel>& tunnel, bool was_established) {
  tunnel->close();
  tunnels.erase(tunnel);
  if (!was_established) return;
  std::lock_guard lock(mutex);
  --open;
}

void ConnectProxy::Impl::record(ConnectRecord record) {
  std::lock_guard lock(mutex);
  if (record.status == 200) {
    ++established;
    ++open;
  }
  records.push_back(std::move(record));
}

ConnectProxy::ConnectProxy(std::optional<std::string> required_authorization)
    : impl_(std::make_unique<Impl>(std::move(required_authorization))) {
  impl_->start();
}

ConnectProxy::~ConnectProxy() {
  Impl& impl = *impl_;
  impl.stop_and_join([&impl] { impl.stop(); });
}

std::uint16_t ConnectProxy::port() const noexcept {
  return impl_->port;
}

std::string ConnectProxy::url() const {
  return "http://127.0.0.1:" + std::to_string(impl_->port);
}

std::size_t ConnectProxy::tunnels_established() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->established;
}

std::size_t ConnectProxy::tunnels_open() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->open;
}

std::vector<std::string> ConnectProxy::connect_targets() const {
  std::lock_guard lock(impl_->mutex);
  std::vector<std::string> out;
  for (const auto& record : impl_->records) {
    if (record.method == "CONNECT") out.push_back(record.target);
  }
  return out;
}

std::vector<ConnectRecord> ConnectProxy::records() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->records;
}

}  // namespace tinker::test
