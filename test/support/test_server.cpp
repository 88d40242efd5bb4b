#include "support/test_server.hpp"

#include "support/loopback_service.hpp"

#include "core/ascii.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <set>
#include <thread>

namespace tinker::test {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), ascii::to_lower);
  return out;
}

// One accepted connection. Owned by its coroutine and by the server's set (for shutdown).
class Connection {
 public:
  Connection(tcp::socket socket, ssl::context* tls, std::size_t index_) : timer(socket.get_executor()), index(index_) {
    if (tls != nullptr) {
      tls_stream.emplace(std::move(socket), *tls);
    } else {
      plain.emplace(std::move(socket));
    }
  }

  beast::tcp_stream& lowest() { return tls_stream ? beast::get_lowest_layer(*tls_stream) : *plain; }

  // An abrupt close: no TLS close_notify, so truncation and stale connections look real.
  void close() {
    error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().close();
    timer.cancel();
  }

  std::optional<beast::tcp_stream> plain;
  std::optional<ssl::stream<beast::tcp_stream>> tls_stream;
  asio::steady_timer timer;
  std::size_t index;
};

using Request = bhttp::request<bhttp::string_body>;
using Response = bhttp::response<bhttp::string_body>;

RecordedRequest record(const Request& request, std::size_t connection) {
  RecordedRequest out;
  out.method = std::string(request.method_string());
  out.target = std::string(request.target());
  for (const auto& field : request) out.headers.emplace_back(lower(field.name_string()), std::string(field.value()));
  out.body = request.body();
  out.connection = connection;
  return out;
}

Response make_message(const ScriptedResponse& script, bool keep_alive, unsigned version) {
  Response message;
  message.version(version);
  message.result(static_cast<unsigned>(script.status));
  message.set(bhttp::field::server, "tinker-test-server");
  if (!script.content_type.empty()) message.set(bhttp::field::content_type, script.content_type);
  message.body() = script.body;
  message.prepare_payload();
  message.keep_alive(keep_alive);
  for (const auto& [name, value] : script.headers) message.set(name, value);
  return message;
}

}  // namespace

class ScriptedServer::Impl : public LoopbackService {
 public:
  explicit Impl(ScriptedServerOptions options_);

  void start();
  void stop();
  std::size_t on_accepted();
  void on_closed(const std::shared_ptr<Connection>& connection);
  ScriptedResponse answer(RecordedRequest request);

  const ScriptedServerOptions options;
  TestCertificates certificates;
  std::optional<TempFile> ca_file;

  // Shared with the test thread: guarded by `mutex`.
  mutable std::mutex mutex;
  mutable std::condition_variable changed;
  std::deque<ScriptedResponse> script;
  Handler handler;
  ScriptedResponse default_response;
  std::vector<RecordedRequest> requests;
  std::size_t accepted = 0;
  std::size_t open = 0;

  // Server thread only (after start()).
  std::optional<ssl::context> tls;
  std::set<std::shared_ptr<Connection>> connections;
  bool stopping = false;
};

namespace {

template <class Stream>
asio::awaitable<void> send_truncated(Stream& stream, ScriptedResponse script, unsigned version) {
  if (script.body.size() < 2) script.body = std::string(64, 'x');
  Response message = make_message(script, true, version);
  bhttp::response_serializer<bhttp::string_body> serializer(message);
  auto [ec, n] = co_await bhttp::async_write_header(stream, serializer, use_tuple);
  if (ec) co_return;
  const std::size_t half = script.body.size() / 2;
  co_await asio::async_write(stream, asio::buffer(message.body().data(), half), use_tuple);
}

// Holds the connection open, discarding anything the client sends, until the client closes it
// or the server stops.
template <class Stream>
asio::awaitable<void> hang(Stream& stream) {
  std::array<char, 4096> sink;
  for (;;) {
    auto [ec, n] = co_await stream.async_read_some(asio::buffer(sink), use_tuple);
    if (ec) co_return;
  }
}

// Serves requests until the connection should close. Returns when it should.
template <class Stream>
asio::awaitable<void> serve(ScriptedServer::Impl& server, Connection& connection, Stream& stream) {
  beast::flat_buffer buffer;
  for (;;) {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.header_limit(64 * 1024);
    parser.body_limit(server.options.max_request_body);
    auto [ec, n] = co_await bhttp::async_read(stream, buffer, parser, use_tuple);
    if (ec == bhttp::error::body_limit) {
      ScriptedResponse too_large(413, "{\"error\":\"request body too large\"}");
      Response message = make_message(too_large, false, 11);
      co_await bhttp::async_write(stream, message, use_tuple);
    }
    if (ec) co_return;
    const unsigned version = parser.get().version();
    const bool client_keep_alive = parser.get().keep_alive();
    ScriptedResponse script = server.answer(record(parser.get(), connection.index));
    if (script.delay.count() > 0) {
      connection.timer.expires_after(script.delay);
      co_await connection.timer.async_wait(use_tuple);
      if (server.stopping) co_return;
    }
    if (script.close_without_response) co_return;
    if (script.no_response) {
      co_await hang(stream);
      co_return;
    }
    if (script.raw) {
      auto [write_ec, written] = co_await asio::async_write(stream, asio::buffer(*script.raw), use_tuple);
      if (write_ec || script.close) co_return;
      continue;
    }
    if (script.truncate) {
      co_await send_truncated(stream, std::move(script), version);
      co_return;
    }
    const bool keep_alive = server.options.keep_alive && client_keep_alive && !script.close;
    Response message = make_message(script, keep_alive, version);
    auto [write_ec, written] = co_await bhttp::async_write(stream, message, use_tuple);
    if (write_ec || !keep_alive || server.options.idle_close) co_return;
  }
}

asio::awaitable<void> run_connection(ScriptedServer::Impl* server, std::shared_ptr<Connection> connection) {
  if (connection->tls_stream) {
    auto [ec] = co_await connection->tls_stream->async_handshake(ssl::stream_base::server, use_tuple);
    if (!ec) co_await serve(*server, *connection, *connection->tls_stream);
  } else {
    co_await serve(*server, *connection, *connection->plain);
  }
  connection->close();
  server->on_closed(connection);
}

asio::awaitable<void> accept_connections(ScriptedServer::Impl* server) {
  for (;;) {
    auto [ec, socket] = co_await server->acceptor.async_accept(use_tuple);
    if (ec || server->stopping) co_return;
    socket.set_option(tcp::no_delay(true), ec);
    ssl::context* tls = server->tls ? &*server->tls : nullptr;
    auto connection = std::make_shared<Connection>(std::move(socket), tls, server->on_accepted());
    server->connections.insert(connection);
    asio::co_spawn(server->ioc, run_connection(server, connection), rethrow);
  }
}

}  // namespace

ScriptedServer::Impl::Impl(ScriptedServerOptions options_)
    : options(std::move(options_)), default_response(options.default_response) {
  if (!options.tls) return;
  certificates = make_test_certificates(options.cert_dns_names, options.cert_ip_addresses);
  ca_file.emplace(certificates.ca_cert_pem, ".pem");
  tls.emplace(ssl::context::tls_server);
  tls->use_certificate_chain(asio::buffer(certificates.leaf_cert_pem));
  tls->use_private_key(asio::buffer(certificates.leaf_key_pem), ssl::context::pem);
}

void ScriptedServer::Impl::start() {
  start_listening(accept_connections(this));
}

// Runs on the server thread: every coroutine then ends on its own and run() returns.
void ScriptedServer::Impl::stop() {
  stopping = true;
  error_code ignored;
  acceptor.close(ignored);
  for (const auto& connection : connections) connection->close();
}

std::size_t ScriptedServer::Impl::on_accepted() {
  std::lock_guard lock(mutex);
  ++open;
  changed.notify_all();
  return accepted++;
}

void ScriptedServer::Impl::on_closed(const std::shared_ptr<Connection>& connection) {
  connections.erase(connection);
  std::lock_guard lock(mutex);
  --open;
  changed.notify_all();
}

ScriptedResponse ScriptedServer::Impl::answer(RecordedRequest request) {
  Handler dynamic;
  {
    std::lock_guard lock(mutex);
    requests.push_back(request);
    changed.notify_all();
    if (!script.empty()) {
      ScriptedResponse next = std::move(script.front());
      script.pop_front();
      return next;
    }
    if (!handler) return default_response;
    dynamic = handler;
  }
  // Outside the lock: the handler may inspect the server.
  return dynamic(request);
}

ScriptedServer::ScriptedServer(ScriptedServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  impl_->start();
}

ScriptedServer::~ScriptedServer() {
  Impl& impl = *impl_;
  impl.stop_and_join([&impl] { impl.stop(); });
}

std::uint16_t ScriptedServer::port() const noexcept {
  return impl_->port;
}

std::string ScriptedServer::base_url() const {
  return url_with_host("127.0.0.1");
}

std::string ScriptedServer::url_with_host(std::string_view host) const {
  return std::string(impl_->options.tls ? "https://" : "http://") + std::string(host) + ":" +
         std::to_string(impl_->port);
}

const TestCertificates& ScriptedServer::certificates() const noexcept {
  return impl_->certificates;
}

std::string ScriptedServer::ca_file() const {
  if (!impl_->ca_file) throw std::logic_error("ScriptedServer::ca_file: the server does not use TLS");
  return impl_->ca_file->path().string();
}

void ScriptedServer::push(ScriptedResponse response) {
  std::lock_guard lock(impl_->mutex);
  impl_->script.push_back(std::move(response));
}

void ScriptedServer::set_handler(Handler handler) {
  std::lock_guard lock(impl_->mutex);
  impl_->handler = std::move(handler);
}

void ScriptedServer::set_default_response(ScriptedResponse response) {
  std::lock_guard lock(impl_->mutex);
  impl_->default_response = std::move(response);
}

std::size_t ScriptedServer::script_remaining() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->script.size();
}

std::vector<RecordedRequest> ScriptedServer::requests() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->requests;
}

std::size_t ScriptedServer::request_count() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->requests.size();
}

std::size_t ScriptedServer::connections_accepted() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->accepted;
}

std::size_t ScriptedServer::connections_open() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->open;
}

bool ScriptedServer::wait_for_requests(std::size_t count, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(impl_->mutex);
  return impl_->changed.wait_for(lock, timeout, [&] { return impl_->requests.size() >= count; });
}

bool ScriptedServer::wait_for_open_connections(std::size_t count, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(impl_->mutex);
  return impl_->changed.wait_for(lock, timeout, [&] { return impl_->open == count; });
}

std::optional<std::string> RecordedRequest::header(std::string_view name) const {
  const std::string wanted = lower(name);
  for (const auto& [key, value] : headers) {
    if (key == wanted) return value;
  }
  return std::nullopt;
}

// ---- raw Beast client ------------------------------------------------------------------------

asio::awaitable<error_code> raw_connect(beast::tcp_stream& stream, std::uint16_t port,
                                        std::chrono::milliseconds timeout) {
  const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), port);
  stream.expires_after(timeout);
  auto [ec] = co_await stream.async_connect(endpoint, use_tuple);
  stream.expires_never();
  co_return ec;
}

namespace {

template <class Stream>
asio::awaitable<error_code> exchange(Stream& stream, RawRequest request, RawResponse& response,
                                     std::chrono::milliseconds timeout) {
  Request message;
  message.method_string(request.method);
  message.target(request.target);
  message.version(11);
  message.set(bhttp::field::host, request.host);
  for (const auto& [name, value] : request.headers) message.set(name, value);
  message.body() = std::move(request.body);
  message.prepare_payload();
  message.keep_alive(request.keep_alive);

  beast::get_lowest_layer(stream).expires_after(timeout);
  auto [write_ec, written] = co_await bhttp::async_write(stream, message, use_tuple);
  if (write_ec) co_return write_ec;
  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.header_limit(64 * 1024);
  parser.body_limit(64 * 1024 * 1024);
  auto [read_ec, read] = co_await bhttp::async_read(stream, buffer, parser, use_tuple);
  beast::get_lowest_layer(stream).expires_never();
  if (read_ec) co_return read_ec;

  response = raw_response_of(parser.get());
  co_return error_code();
}

}  // namespace

asio::awaitable<error_code> raw_exchange(beast::tcp_stream& stream, RawRequest request, RawResponse& response,
                                         std::chrono::milliseconds timeout) {
  return exchange(stream, std::move(request), response, timeout);
}

asio::awaitable<error_code> raw_exchange(TlsClientStream& stream, RawRequest request, RawResponse& response,
                                         std::chrono::milliseconds timeout) {
  return exchange(stream, std::move(request), response, timeout);
}

}  // namespace tinker::test
