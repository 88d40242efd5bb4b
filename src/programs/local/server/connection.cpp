#include "programs/local/server/connection.hpp"

#include "programs/local/server/request_fields.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>

#include <sys/resource.h>

#include <array>
#include <charconv>
#include <memory>

namespace tinker::local::front {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t kFirstReadSize = 4096;    // what a request's first read asks for
constexpr std::size_t kRefusalsInFlight = 32;   // refused connections still being answered
constexpr std::size_t kDrainLimit = 64u << 20;  // unread request bytes discarded after a 413

// How a served request ends for the connection.
enum class Finish { keep_alive, close, reset, truncate, reset_mid_body };

void append_number(std::string& out, std::uint64_t value) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, end);
}

bool is_loopback(const asio::ip::address& address) {
  if (address.is_loopback()) return true;
  return address.is_v6() && address.to_v6().is_v4_mapped() &&
         asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()).is_loopback();
}

// The body a malformed_json fault answers instead of the real one.
constexpr std::string_view kMalformedJson = R"({"type": "malformed_json_fault", "detail": "this is not)";

}  // namespace

class Connection {
 public:
  Connection(HttpServer& server_, tcp::socket socket)
      : server(server_), stream(std::move(socket)), timer(stream.get_executor()) {
    error_code ignored;
    stream.socket().set_option(tcp::no_delay(true), ignored);
    const auto peer = stream.socket().remote_endpoint(ignored);
    from_loopback = !ignored && is_loopback(peer.address());
    server.add(this);
  }
  ~Connection() { server.remove(this); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void close() {
    error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream.close();
    timer.cancel();
  }

  // A TCP reset (SO_LINGER 0) instead of an orderly close.
  void reset() {
    error_code ignored;
    stream.socket().set_option(asio::socket_base::linger(true, 0), ignored);
    stream.close();
  }

  HttpServer& server;
  beast::tcp_stream stream;
  asio::steady_timer timer;
  bool from_loopback = false;
  beast::flat_buffer buffer;
  Reply reply;
  std::string head;
};

void build_response_head(std::string& head, const Reply& reply, std::string_view request_id, bool keep_alive,
                         std::size_t body_size) {
  head.assign("HTTP/1.1 ");
  append_number(head, static_cast<std::uint64_t>(reply.status));
  head += ' ';
  std::string_view reason = bhttp::obsolete_reason(static_cast<bhttp::status>(reply.status));
  if (reason.empty() || reason.front() == '<') reason = "Status";
  head += reason;
  head += "\r\n";
  if (!reply.content_type.empty()) {
    head += "Content-Type: ";
    head += reply.content_type;
    head += "\r\n";
  }
  if (reply.status != 204 && reply.status >= 200) {
    head += "Content-Length: ";
    append_number(head, body_size);
    head += "\r\n";
  }
  head += "x-request-id: ";
  head += request_id;
  head += keep_alive ? "\r\nConnection: keep-alive\r\n" : "\r\nConnection: close\r\n";
  for (const auto& [name, value] : reply.headers) {
    head += name;
    head += ": ";
    head += value;
    head += "\r\n";
  }
  head += "\r\n";
}

void fault_status_reply(const FaultRule& rule, std::chrono::system_clock::time_point now, Reply& reply) {
  reply.reset();
  if (rule.status == 400) {
    // The "proxy-injected" bare 400: no body, Content-Length 0, which clients take for a connection
    // fault (doc/protocol.md#pools-timeouts-and-throttles).
    reply.status = 400;
  } else {
    std::string detail = "injected fault: HTTP " + std::to_string(rule.status);
    reply.error(rule.status, detail);
  }
  append_retry_after(rule.retry_after, rule.retry_after_value, now, reply.headers);
  if (rule.should_retry) reply.headers.emplace_back("x-should-retry", *rule.should_retry ? "true" : "false");
}

namespace {

// Fills the record field a stored request field belongs to (the first occurrence wins, as with find).
void record_field(RequestRecord& record, const HttpRequest::value_type& field) {
  const std::string_view value = field.value();
  auto keep = [value](std::string& slot) {
    if (slot.empty()) slot = value;
  };
  const std::optional<KeptField> kept = kept_request_field(field.name(), field.name_string());
  if (!kept) return;
  switch (*kept) {
    case KeptField::content_type: keep(record.content_type); break;
    case KeptField::content_encoding: keep(record.content_encoding); break;
    case KeptField::accept: keep(record.accept); break;
    case KeptField::range: keep(record.range); break;
    case KeptField::idempotency_key: keep(record.idempotency_key); break;
    case KeptField::retry_count: keep(record.retry_count); break;
    case KeptField::request_iteration: keep(record.request_iteration); break;
    case KeptField::api_key:
    case KeptField::authorization:
    case KeptField::cf_access_client_secret: record.credentials = record.credentials || !value.empty(); break;
    case KeptField::connection:
    case KeptField::expect:
    case KeptField::sampling_backpressure:
    case KeptField::upload_token: break;  // a secret: never recorded
  }
}

// One pass over the few stored fields: a lookup by name per record field cost more than the
// rest of serving a null-model request.
RequestRecord arrival_record(const HttpRequest& request, std::string_view path,
                             std::chrono::system_clock::time_point now) {
  RequestRecord record;
  record.arrived = now;
  record.method = std::string(request.method_string());
  record.path = std::string(path);
  for (const auto& field : request) record_field(record, field);
  return record;
}

void finish_record(Frontend& fe, std::int64_t index, const Exchange& ex, int status) {
  RequestRecord* record = fe.requests.find(index);
  if (record == nullptr) return;
  record->status = status;
  record->seq_id = ex.seq_id;
  record->model_id = ex.model_id;
  record->request_id = ex.request_id;
  record->fault = ex.fault;
}

void log_request(const Frontend& fe, const HttpRequest& request, const Exchange& ex, int status,
                 std::chrono::steady_clock::time_point started) {
  if (!fe.logger.enabled(LogLevel::info)) return;
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count();
  std::string line(request.method_string());
  line += ' ';
  line += ex.path;
  line += ' ';
  line += std::to_string(status);
  line += ' ';
  line += std::to_string(micros / 1000) + "." + std::to_string(micros % 1000 / 100) + " ms";
  if (!ex.fault.empty()) line += " fault=" + ex.fault;
  fe.logger.info(line);
}

// Routes, authenticates and runs the handler; fills ex.reply.
asio::awaitable<void> run_handler(Frontend& fe, Exchange& ex) {
  const Route& route = ex.route;
  if (route.status == Route::Status::not_found) {
    ex.reply.error(404, "Not Found");
    co_return;
  }
  if (route.status == Route::Status::method_not_allowed) {
    ex.reply.error(405, "Method Not Allowed");
    ex.reply.headers.emplace_back("Allow", std::string(route.allow));
    co_return;
  }
  if (requires_api_key(route.endpoint)) {
    // Never echoed or logged: only whether it was accepted.
    auto principal = fe.authenticator.authenticate(ex.header("X-API-Key"), fe.engine.clock().now());
    if (!principal) {
      ex.reply.error(401, "Invalid API key");
      co_return;
    }
    ex.principal = std::move(*principal);
  }
  if (!decode_body(fe, ex)) co_return;
  if (is_admin(route.endpoint)) {
    handle_admin(fe, ex);
  } else if (route.endpoint == Endpoint::download) {
    handle_download(fe, ex);
  } else if (route.endpoint == Endpoint::hub_resolve) {
    handle_hub(fe, ex);
  } else if (route.endpoint == Endpoint::hub_api) {
    handle_hub_api(fe, ex);
  } else if (route.endpoint == Endpoint::hub_lfs) {
    handle_hub_lfs(fe, ex);
  } else if (route.endpoint == Endpoint::external_upload) {
    handle_external_upload(fe, ex);
  } else if (route.endpoint == Endpoint::retrieve_future) {
    co_await handle_retrieve_future(fe, ex);
  } else if (route.endpoint == Endpoint::retrieve_futures) {
    co_await handle_retrieve_futures(fe, ex);
  } else {
    handle_api(fe, ex);
  }
}

// Serves one parsed request: faults, handler, fault effects on the answer. Returns how the
// connection continues; ex.reply holds the answer unless Finish::reset.
asio::awaitable<Finish> serve_request(Connection& conn, HttpRequest& request, Exchange& ex) {
  HttpServer& server = conn.server;
  Frontend& fe = server.frontend();
  const auto started = std::chrono::steady_clock::now();
  const auto [target_path, query] = split_target(request.target());
  ex.query = query;
  ex.from_loopback = conn.from_loopback;
  const std::string& prefix = fe.options.path_prefix;
  std::string_view path = target_path;
  const bool under_prefix = prefix.empty() || (path.substr(0, prefix.size()) == prefix && path.size() > prefix.size() &&
                                               path[prefix.size()] == '/');
  if (under_prefix) path.remove_prefix(prefix.size());
  ex.path = path;
  // HEAD is answered as GET without the body (write_reply).
  const std::string_view method = request.method() == bhttp::verb::head ? "GET" : request.method_string();
  ex.route = under_prefix ? match_route(method, path) : Route();
  const std::int64_t index = fe.requests.append(arrival_record(request, target_path, fe.engine.clock().now()));

  std::optional<FaultRule> fault;
  if (under_prefix && !is_admin(ex.route.endpoint)) fault = fe.faults.on_request(path);
  if (fault) ex.fault = fault_name(*fault);
  if (fault && fault->kind == FaultKind::delay) {
    conn.timer.expires_after(fault->delay);
    co_await conn.timer.async_wait(use_tuple);
    if (server.stopping()) co_return Finish::reset;
  }
  if (fault && fault->kind == FaultKind::reset_before) {
    finish_record(fe, index, ex, 0);
    log_request(fe, request, ex, 0, started);
    co_return Finish::reset;
  }
  if (fault && fault->kind == FaultKind::status) {
    fault_status_reply(*fault, fe.engine.clock().now(), ex.reply);
  } else {
    co_await run_handler(fe, ex);
  }

  Finish finish = Finish::keep_alive;
  int logged_status = ex.reply.status;
  if (fault && fault->kind == FaultKind::malformed_json) {
    ex.reply.status = 200;
    ex.reply.content_type.assign(kJson);
    ex.reply.shared_body.reset();
    ex.reply.body.assign(kMalformedJson);
    logged_status = 200;
  } else if (fault && fault->kind == FaultKind::truncated_body) {
    finish = Finish::truncate;
  } else if (fault && fault->kind == FaultKind::reset_mid_body) {
    finish = Finish::reset_mid_body;
  }
  finish_record(fe, index, ex, logged_status);
  log_request(fe, request, ex, logged_status, started);
  co_return finish;
}

// Writes the head and `body` (all of it, or half for the damaging faults).
asio::awaitable<bool> write_reply(Connection& conn, std::string_view request_id, bool keep_alive, Finish finish,
                                  bool head_only = false) {
  const std::string_view body = conn.reply.body_view();
  build_response_head(conn.head, conn.reply, request_id, keep_alive, body.size());
  const bool partial = finish == Finish::truncate || finish == Finish::reset_mid_body;
  const std::size_t sent = head_only ? 0 : partial ? body.size() / 2 : body.size();
  std::array<asio::const_buffer, 2> buffers{asio::buffer(conn.head), asio::buffer(body.data(), sent)};
  conn.stream.expires_after(conn.server.frontend().options.idle_timeout);
  auto [ec, n] = co_await asio::async_write(conn.stream, buffers, use_tuple);
  conn.stream.expires_never();
  co_return !ec;
}

// After an error answer that closes the connection: stop sending, read and discard what the
// client is still sending (so it sees our answer rather than a reset), then close.
asio::awaitable<void> drain_and_close(Connection& conn) {
  error_code ignored;
  conn.stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  conn.stream.expires_after(std::chrono::seconds(2));
  std::array<char, 16 * 1024> sink;
  std::size_t drained = 0;
  while (drained < kDrainLimit) {
    auto [ec, n] = co_await conn.stream.async_read_some(asio::buffer(sink), use_tuple);
    if (ec) break;
    drained += n;
  }
  conn.close();
}

// A request that could not be parsed or is too large: answer it, then close.
asio::awaitable<void> reject(Connection& conn, RequestParser& parser, int status, std::string detail) {
  Frontend& fe = conn.server.frontend();
  const HttpRequest& request = parser.get();
  const auto [path, query] = split_target(request.target());
  Exchange ex(parser.get(), conn.reply);
  ex.path = path;
  conn.reply.reset();
  conn.reply.error(status, detail);
  const std::int64_t index = fe.requests.append(arrival_record(request, path, fe.engine.clock().now()));
  finish_record(fe, index, ex, status);
  log_request(fe, request, ex, status, std::chrono::steady_clock::now());
  const std::string& request_id = fe.next_request_id();  // copied into the head before any suspension
  if (co_await write_reply(conn, request_id, false, Finish::close)) co_await drain_and_close(conn);
}

int status_for_read_error(const error_code& ec, std::string& detail, const ServerOptions& options) {
  if (ec == bhttp::error::body_limit) {
    detail = "request body exceeds the limit of " + std::to_string(options.max_request_body) + " bytes";
    return 413;
  }
  if (ec == bhttp::error::header_limit) {
    detail = "request header exceeds the limit of " + std::to_string(options.max_header_bytes) + " bytes";
    return 431;
  }
  if (ec == asio::error::operation_aborted) {
    detail = "request head not complete within " + std::to_string(options.header_timeout.count()) + " ms";
    return 408;
  }
  if (ec.category() == make_error_code(bhttp::error::bad_method).category() && ec != bhttp::error::end_of_stream &&
      ec != bhttp::error::partial_message) {
    detail = "malformed HTTP request: " + ec.message();
    return 400;
  }
  return 0;  // connection closed, reset or timed out: nothing to answer
}

// Cancels a socket's pending operations (without closing it) when a deadline passes. The timer's
// handler can still be queued when the watchdog is gone (cancel() does not recall a handler that
// is already due), so it reaches the socket through a shared block the destructor disarms.
class HeadWatchdog {
 public:
  HeadWatchdog(asio::steady_timer& timer, tcp::socket& socket, std::chrono::milliseconds timeout)
      : timer_(timer), state_(std::make_shared<State>(&socket)) {
    timer_.expires_after(timeout);
    timer_.async_wait(Expiry{state_});
  }
  ~HeadWatchdog() {
    state_->socket = nullptr;
    timer_.cancel();
  }
  HeadWatchdog(const HeadWatchdog&) = delete;
  HeadWatchdog& operator=(const HeadWatchdog&) = delete;

  bool fired() const noexcept { return state_->fired; }

 private:
  class State {
   public:
    explicit State(tcp::socket* socket_) : socket(socket_) {}
    tcp::socket* socket;
    bool fired = false;
  };
  class Expiry {
   public:
    std::shared_ptr<State> state;
    void operator()(error_code ec) const {
      if (ec || state->socket == nullptr) return;
      state->fired = true;
      error_code ignored;
      state->socket->cancel(ignored);
    }
  };

  asio::steady_timer& timer_;
  std::shared_ptr<State> state_;
};

// Reads a request head. An idle connection may wait idle_timeout for the request's first byte;
// from then on the whole head must arrive within header_timeout. A head that came in one piece
// (nearly all) is parsed at once; only a partial one arms the watchdog, whose expiry cancels the
// read (rather than closing the socket, as the stream's own timeout would) so that the client
// still gets its 408 (completes with operation_aborted then).
asio::awaitable<error_code> read_request_head(Connection& conn, RequestParser& parser, const ServerOptions& options) {
  if (conn.buffer.size() == 0) {
    conn.stream.expires_after(options.idle_timeout);
    auto [ec, n] = co_await conn.stream.async_read_some(conn.buffer.prepare(kFirstReadSize), use_tuple);
    conn.stream.expires_never();
    if (ec) co_return ec;
    conn.buffer.commit(n);
  }
  error_code ec;
  conn.buffer.consume(parser.put(conn.buffer.data(), ec));
  if (ec != bhttp::error::need_more) co_return ec;
  HeadWatchdog watchdog(conn.timer, conn.stream.socket(), options.header_timeout);
  auto [read_ec, n] = co_await bhttp::async_read_header(conn.stream, conn.buffer, parser, use_tuple);
  if (read_ec && watchdog.fired()) co_return asio::error::operation_aborted;
  co_return read_ec == asio::error::operation_aborted ? error_code(asio::error::connection_aborted) : read_ec;
}

asio::awaitable<void> serve_connection(HttpServer& server, tcp::socket socket) {
  Connection conn(server, std::move(socket));
  Frontend& fe = server.frontend();
  const ServerOptions& options = fe.options;
  try {
    while (!server.stopping()) {
      RequestParser parser;
      parser.header_limit(static_cast<std::uint32_t>(options.max_header_bytes));
      parser.body_limit(options.max_request_body);
      error_code ec = co_await read_request_head(conn, parser, options);
      conn.stream.expires_after(options.idle_timeout);
      if (!ec && !parser.is_done()) {
        if (iequals(parser.get()[bhttp::field::expect], "100-continue")) {
          std::string_view interim = "HTTP/1.1 100 Continue\r\n\r\n";
          auto [wec, wn] = co_await asio::async_write(conn.stream, asio::buffer(interim), use_tuple);
          ec = wec;
        }
        if (!ec) {
          auto [bec, bn] = co_await bhttp::async_read(conn.stream, conn.buffer, parser, use_tuple);
          ec = bec;
        }
      }
      conn.stream.expires_never();
      if (ec) {
        std::string detail;
        const int status = status_for_read_error(ec, detail, options);
        if (status != 0 && parser.got_some()) co_await reject(conn, parser, status, std::move(detail));
        break;
      }

      HttpRequest& request = parser.get();
      const bool keep_alive = parser.keep_alive();  // from the parser's framing state, not the stored fields
      conn.reply.reset();
      Exchange ex(request, conn.reply);
      const Finish finish = co_await serve_request(conn, request, ex);
      if (finish == Finish::reset) {
        conn.reset();
        break;
      }
      const bool keep = keep_alive && finish == Finish::keep_alive && !server.stopping();
      const std::string& request_id = fe.next_request_id();  // copied into the head before any suspension
      const bool head_only = request.method() == bhttp::verb::head;
      const bool written = co_await write_reply(conn, request_id, keep, finish, head_only);
      if (finish == Finish::reset_mid_body) {
        conn.reset();
        break;
      }
      if (!written || !keep) {
        conn.close();
        break;
      }
    }
  } catch (const std::exception& e) {
    fe.logger.error(std::string("connection failed: ") + e.what());
    conn.close();
  }
}

// A connection over the limit: told so with a 503 (the SDKs retry it after Retry-After), the
// little it may have sent read and dropped (so it sees the answer rather than a reset), closed.
asio::awaitable<void> refuse_connection(HttpServer& server, tcp::socket socket) {
  server.refusal_started();
  beast::tcp_stream stream(std::move(socket));
  const std::string body = R"({"detail": "tinker-local: too many connections (limit )" +
                           std::to_string(server.connection_limit()) + R"(); retry later"})";
  std::string head = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: ";
  append_number(head, body.size());
  head += "\r\nRetry-After: 1\r\nConnection: close\r\n\r\n";
  stream.expires_after(std::chrono::seconds(1));
  std::array<asio::const_buffer, 2> buffers{asio::buffer(head), asio::buffer(body)};
  auto [ec, n] = co_await asio::async_write(stream, buffers, use_tuple);
  if (!ec) {
    error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    std::array<char, 4096> sink;
    for (std::size_t drained = 0; drained < sink.size() * 16;) {
      auto [read_ec, read] = co_await stream.async_read_some(asio::buffer(sink), use_tuple);
      if (read_ec) break;
      drained += read;
    }
  }
  stream.close();
  server.refusal_ended();
}

// After a failed accept (out of file descriptors, typically), waits a little instead of spinning.
asio::awaitable<void> pause_accepting(HttpServer& server, const error_code& ec) {
  server.frontend().logger.warning("accept failed: " + ec.message() + "; pausing new connections for 100 ms");
  asio::steady_timer pause(server.acceptor().get_executor(), std::chrono::milliseconds(100));
  co_await pause.async_wait(use_tuple);
}

asio::awaitable<void> accept_loop(HttpServer& server) {
  for (;;) {
    auto [ec, socket] = co_await server.acceptor().async_accept(use_tuple);
    if (server.stopping() || !server.acceptor().is_open()) co_return;
    if (ec) {
      co_await pause_accepting(server, ec);
      continue;
    }
    const auto executor = server.acceptor().get_executor();
    if (server.connection_count() < server.connection_limit()) {
      asio::co_spawn(executor, serve_connection(server, std::move(socket)), asio::detached);
    } else if (server.refusals_in_flight() < kRefusalsInFlight) {
      asio::co_spawn(executor, refuse_connection(server, std::move(socket)), asio::detached);
    }  // else: the socket closes here, unanswered
  }
}

// The connection limit in effect: the option, or what the open-file limit leaves room for.
std::size_t effective_connection_limit(std::size_t option) {
  if (option != 0) return option;
  constexpr std::size_t kReservedDescriptors = 64;  // files, the acceptor, refusals, the model's threads
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur == RLIM_INFINITY) return 65536;
  const auto soft = static_cast<std::size_t>(files.rlim_cur);
  return soft > 2 * kReservedDescriptors ? soft - kReservedDescriptors : soft / 2;
}

}  // namespace

HttpServer::HttpServer(asio::io_context& io, Frontend& frontend)
    : io_(io),
      frontend_(frontend),
      acceptor_(io),
      connection_limit_(effective_connection_limit(frontend.options.max_connections)) {}

HttpServer::~HttpServer() = default;

std::uint16_t HttpServer::listen(const std::string& host, std::uint16_t port) {
  const std::string where = host + ":" + std::to_string(port);
  error_code ec;
  tcp::endpoint endpoint;
  const auto address = asio::ip::make_address(host, ec);
  if (!ec) {
    endpoint = tcp::endpoint(address, port);
  } else {
    tcp::resolver resolver(io_);
    const auto results = resolver.resolve(host, std::to_string(port), ec);
    if (ec || results.empty()) {
      throw error(errc::invalid_configuration, "cannot resolve listen address " + where + ": " + ec.message());
    }
    endpoint = results.begin()->endpoint();
  }
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    error_code ignored;
    acceptor_.close(ignored);
    throw error(errc::invalid_configuration, "cannot listen on " + where + ": " + ec.message());
  }
  return acceptor_.local_endpoint().port();
}

void HttpServer::start() {
  asio::co_spawn(io_, accept_loop(*this), asio::detached);
}

void HttpServer::close() {
  stopping_ = true;
  error_code ignored;
  acceptor_.close(ignored);
  // close() removes nothing from the set: each coroutine unregisters itself as it ends.
  for (Connection* connection : connections_) connection->close();
}

}  // namespace tinker::local::front
