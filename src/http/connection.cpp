// Beast part of the transport: connect (resolve, TCP, CONNECT tunnel, TLS handshake) and one
// HTTP/1.1 exchange on a connection.
#include "http/connection.hpp"

#include <cstring>

#include "http/connection_stream.hpp"
#include "http/proxy.hpp"
#include "http/request_assembly.hpp"
#include "http/tls.hpp"

#include <tinker/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace tinker::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;
// For the reads and writes of every exchange: awaiting a deferred operation starts it straight from
// the awaiting coroutine, where use_awaitable first allocates a coroutine frame for the initiation.
constexpr auto as_tuple_deferred = asio::as_tuple(asio::deferred);

boost::system::error_code transport_error(const boost::system::error_code& ec) {
  if (ec == beast::error::timeout) return make_error_code(errc::timeout);
  if (ec == asio::error::operation_aborted) return make_error_code(errc::cancelled);
  return make_error_code(errc::connection_failed);
}

ConnectResult failed(boost::system::error_code error, std::string reason) {
  ConnectResult result;
  result.error = error;
  result.reason = std::move(reason);
  return result;
}

asio::awaitable<ConnectResult> tls_handshake(beast::tcp_stream stream, Endpoint endpoint,
                                             const ConnectSettings& settings) {
  auto tls = std::make_unique<TlsStream>(std::move(stream), *settings.tls_context);
  prepare_tls_stream(*tls, endpoint.host, settings.verify_peer);
  beast::get_lowest_layer(*tls).expires_after(settings.connect_timeout);
  auto [ec] = co_await tls->async_handshake(asio::ssl::stream_base::client, as_tuple_awaitable);
  if (ec == beast::error::timeout || ec == asio::error::operation_aborted) {
    co_return failed(transport_error(ec), "TLS handshake with " + endpoint.host_header() + " timed out");
  }
  if (ec) {
    co_return failed(make_error_code(errc::tls_error),
                     "TLS handshake with " + endpoint.host_header() + " failed: " + describe_tls_error(ec, *tls));
  }
  beast::get_lowest_layer(*tls).expires_never();
  ConnectResult result;
  result.connection = std::make_unique<Connection>(std::move(tls));
  co_return result;
}

// The request head is written by hand into a buffer the connection keeps: Beast's serializer
// costs about a thousand instructions and an allocation per header field, and the SDK sends
// sixteen. It is written in one pass through a pointer, into room sized beforehand. Head and body
// then go out in one gathered write.
void write_head(std::string& head, const WireRequest& request) {
  // Beside the blocks: method, target separators, " HTTP/1.1", Content-Length and the last CRLF
  // take under 64 bytes.
  constexpr std::size_t fixed_bytes = 96;
  // Exactly this head's room: the connection keeps the buffer, and doubling growth would hold up
  // to twice that per open connection. Resizing zero-fills only what the last head left unused.
  head.resize(fixed_bytes + request.target.size() + request.origin_lines.size() + call_header_lines_size(request.call) +
              request.attempt_lines.size());
  char* out = head.data();
  out = copy_text(out, to_string(request.method));
  *out++ = ' ';
  out = copy_text(out, request.target);
  out = copy_text(out, " HTTP/1.1\r\n");
  out = copy_text(out, request.origin_lines);
  out = write_call_header_lines(out, request.call);
  out = copy_text(out, request.attempt_lines);
  const std::size_t body_size = request.body_size();
  if (request.method != Method::get || body_size != 0) {
    out = copy_text(out, "Content-Length: ");
    out = std::to_chars(out, out + 20, body_size).ptr;
    out = copy_text(out, "\r\n");
  }
  out = copy_text(out, "\r\n");
  head.resize(static_cast<std::size_t>(out - head.data()));
}

// Parses a response straight into http::Response: names lower-cased as they arrive, the body
// appended to one string. Beast's response_parser<string_body> would first build a
// basic_fields (an allocation and an ordered insert per field) that is then copied out, and
// message::keep_alive() would re-scan the Connection header the parser already read.
class ResponseReader final : public bhttp::basic_parser<false> {
 public:
  explicit ResponseReader(Response& response) : response_(response) {}

 private:
  // Room for the names and values of a usual answer, reserved once (more grows the buffer).
  static constexpr std::size_t fields_bytes = 512;

  void on_request_impl(bhttp::verb, beast::string_view, beast::string_view, int, beast::error_code&) override {}

  void on_response_impl(int code, beast::string_view, int, beast::error_code&) override {
    response_.status = code;
    response_.headers.reserve(fields_bytes);
  }

  void on_field_impl(bhttp::field, beast::string_view name, beast::string_view value, beast::error_code&) override {
    response_.headers.emplace_back(std::string_view(name.data(), name.size()),
                                   std::string_view(value.data(), value.size()));
  }

  void on_header_impl(beast::error_code&) override {}

  void on_body_init_impl(const boost::optional<std::uint64_t>& content_length, beast::error_code&) override {
    // The parser has already refused a length over body_limit.
    if (content_length) response_.body.reserve(static_cast<std::size_t>(*content_length));
  }

  std::size_t on_body_impl(beast::string_view body, beast::error_code&) override {
    response_.body.append(body.data(), body.size());
    return body.size();
  }

  void on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code&) override {}

  std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view body, beast::error_code&) override {
    response_.body.append(body.data(), body.size());
    return body.size();
  }

  void on_finish_impl(beast::error_code&) override {}

  Response& response_;
};

// The most Beast's HTTP read asks the socket for at once.
constexpr std::size_t large_answer_read = 64 * 1024;

// The most buffers one write_some hands the kernel (Asio's iovec limit).
constexpr std::size_t buffers_per_send = 64;

using RequestBuffers = std::span<const asio::const_buffer>;

// A request's buffers: its head, then its body, in one piece or (borrowed runs) as the spine's
// pieces with the runs between them. Kept in the connection, so that no request allocates for
// them.
RequestBuffers request_buffers(Connection& connection, const WireRequest& request) {
  if (request.borrowed.empty()) {  // every request but a training batch's
    connection.head_and_body = {asio::buffer(connection.head), asio::buffer(request.body)};
    return connection.head_and_body;
  }
  std::vector<asio::const_buffer>& out = connection.gather;
  out.clear();
  out.emplace_back(asio::buffer(connection.head));
  wire::for_each_piece(request.body, request.borrowed,
                       [&out](std::string_view piece) { out.emplace_back(piece.data(), piece.size()); });
  return out;
}

// Non-blocking sends of what the socket takes right now: a request that fits the socket's send
// buffer (nearly all but the training batches) is then sent with no timer, no wait and no
// completion handler to run. A gathered body has more buffers than one send takes: the sends go
// on while the socket takes everything. Returns the bytes sent; would_block is not an error.
std::size_t send_now(tcp::socket& socket, RequestBuffers buffers, boost::system::error_code& ec) {
  if (!socket.non_blocking()) socket.non_blocking(true, ec);  // sync calls return instead of waiting
  if (ec) return 0;
  std::size_t sent = socket.write_some(buffers, ec);
  if (!ec && buffers.size() > buffers_per_send) {
    beast::buffers_suffix<RequestBuffers> rest(buffers);
    rest.consume(sent);
    for (std::size_t left = asio::buffer_size(rest); left != 0 && !ec;) {
      const std::size_t more = socket.write_some(rest, ec);
      rest.consume(more);
      sent += more;
      left -= more;
    }
  }
  if (ec == asio::error::would_block || ec == asio::error::try_again) ec.clear();
  return ec ? 0 : sent;
}

// Where an exchange's bytes go: the socket itself for a plain connection (no basic_stream layer
// in between), the TLS stream for a TLS one.
template <class Stream>
auto& transport_of(Stream& stream, beast::tcp_stream& tcp) {
  if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
    return tcp.socket();
  } else {
    return stream;
  }
}

// Room for the next read, as Beast's HTTP read makes it (at least 512 bytes, at most 64 KiB).
std::optional<asio::mutable_buffer> read_space(beast::flat_buffer& buffer, boost::system::error_code& ec) {
  const std::size_t size = beast::read_size(buffer, large_answer_read);
  if (size != 0) {
    try {
      return buffer.prepare(size);
    } catch (const std::length_error&) {
    }
  }
  ec = bhttp::error::buffer_overflow;
  return std::nullopt;
}

// Feeds the parser what the buffer holds. True while the response needs more bytes.
bool parse_buffered(beast::flat_buffer& buffer, ResponseReader& parser, boost::system::error_code& ec) {
  while (!parser.is_done() && buffer.size() != 0) {
    const std::size_t used = parser.put(buffer.data(), ec);
    buffer.consume(used);
    if (ec == bhttp::error::need_more) {
      ec.clear();
      return true;
    }
    if (ec) return false;
  }
  return !parser.is_done();
}

// An operation the deadline cancelled failed by timing out (as with basic_stream's timer).
boost::system::error_code timed(const boost::system::error_code& ec, const ExchangeDeadline& deadline) {
  if (ec == asio::error::operation_aborted && deadline.expired()) return beast::error::timeout;
  return ec;
}

// What one read brought: parses it, or turns the end of the stream into the end of the response
// (a response without a length ends with the connection) or into an error.
bool take_read(beast::flat_buffer& buffer, ResponseReader& parser, std::size_t bytes, boost::system::error_code& ec,
               const ExchangeDeadline& deadline) {
  buffer.commit(bytes);
  if (ec == asio::error::eof) {
    ec.clear();
    if (!parser.got_some())
      ec = bhttp::error::end_of_stream;
    else
      parser.put_eof(ec);
    return false;
  }
  ec = timed(ec, deadline);
  if (ec) return false;
  return parse_buffered(buffer, parser, ec);
}

void fail_read(ExchangeResult& result, const ResponseReader& parser, const boost::system::error_code& read_error,
               ExchangeLimits limits) {
  result.nothing_received = !parser.got_some();
  result.response = Response();  // status 0: no (complete) response
  if (read_error == bhttp::error::body_limit || read_error == bhttp::error::header_limit ||
      read_error == bhttp::error::buffer_overflow) {
    result.error = make_error_code(errc::response_too_large);
    result.reason = "the response is larger than the limit (" + std::to_string(limits.max_body) + " bytes of body, " +
                    std::to_string(limits.max_header) + " of headers)";
  } else if (read_error == bhttp::error::partial_message || (!result.nothing_received && !parser.is_done())) {
    result.error = make_error_code(errc::connection_failed);
    result.reason = "the connection closed in the middle of the response (truncated)";
  } else {
    result.error = transport_error(read_error);
    result.reason = "reading the response failed: " + read_error.message();
  }
}

// One exchange. The response is read with the stream's own reads and Beast's parser, not with
// http::async_read: its three layers of composed operations move the executor and a work guard
// through every read (a fifth of the client's instructions per sample). The time limit is the
// connection's lazily armed deadline (exchange_deadline.hpp), not basic_stream's per-operation
// timer.
template <class Stream>
asio::awaitable<void> exchange_on(Stream& stream, Connection& connection, const WireRequest& request,
                                  ExchangeLimits limits, ExchangeResult& result) {
  result = ExchangeResult();
  write_head(connection.head, request);
  const RequestBuffers buffers = request_buffers(connection, request);

  beast::tcp_stream& tcp = connection.tcp();
  auto& transport = transport_of(stream, tcp);
  ExchangeDeadline& deadline = connection.deadline;
  boost::system::error_code write_error;
  std::size_t sent = 0;
  if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
    sent = send_now(tcp.socket(), buffers, write_error);  // TLS records go through the TLS stream
  }
  if (!write_error && sent < asio::buffer_size(buffers)) {
    deadline.start(tcp.socket(), limits.timeout);
    beast::buffers_suffix<RequestBuffers> unsent(buffers);
    unsent.consume(sent);
    auto [async_error, written] = co_await asio::async_write(transport, unsent, as_tuple_deferred);
    (void)written;
    write_error = timed(async_error, deadline);
  }
  if (write_error) {
    deadline.stop();
    result.error = transport_error(write_error);
    result.reason = "sending the request failed: " + write_error.message();
    result.nothing_received = true;
    co_return;
  }

  // Beast's reads ask for as much as the buffer has room for (at least 512 bytes, at most
  // 64 KiB), and the body does not stay in the buffer, so a small buffer reads a megabyte of
  // training result in thousands of reads, each with its handler. A connection that has
  // carried a large answer keeps room for the largest reads; the others stay small (one buffer
  // per connection, and a sampler may hold hundreds).
  if (connection.carries_large_answers) connection.buffer.reserve(large_answer_read);
  ResponseReader parser(result.response);
  parser.eager(true);
  parser.body_limit(limits.max_body);
  parser.header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(limits.max_header, UINT32_MAX)));
  deadline.start(tcp.socket(), limits.timeout);
  boost::system::error_code read_error;
  for (bool more = parse_buffered(connection.buffer, parser, read_error); more;) {
    const std::optional<asio::mutable_buffer> space = read_space(connection.buffer, read_error);
    if (!space) break;
    if (deadline.expired()) {  // it passed while the last read's completion waited to run
      read_error = beast::error::timeout;
      break;
    }
    auto [ec, bytes] = co_await transport.async_read_some(*space, as_tuple_deferred);
    read_error = ec;
    more = take_read(connection.buffer, parser, bytes, read_error, deadline);
  }
  deadline.stop();
  if (read_error) {
    fail_read(result, parser, read_error, limits);
    co_return;
  }
  result.reusable = parser.keep_alive();
  if (result.response.body.size() >= large_answer_read) connection.carries_large_answers = true;
}

}  // namespace

std::string Endpoint::host_header() const {
  const bool default_port = (tls && port == 443) || (!tls && port == 80);
  const bool ipv6 = host.find(':') != std::string::npos;
  std::string out = ipv6 ? "[" + host + "]" : host;
  if (!default_port) out += ":" + std::to_string(port);
  return out;
}

asio::awaitable<ConnectResult> connect(asio::any_io_executor executor, Endpoint endpoint,
                                       const ConnectSettings& settings) {
  std::optional<ProxyEndpoint> proxy;
  if (settings.proxy != nullptr)
    proxy = settings.proxy->proxy_for(endpoint.tls ? "https" : "http", endpoint.host, endpoint.port);
  std::string dial_host = endpoint.host;
  std::uint16_t dial_port = endpoint.port;
  if (proxy) {
    dial_host = proxy->host;
    dial_port = proxy->port;
  }
  const std::string dial_name = Endpoint(dial_host, dial_port, false).host_header();

  tcp::resolver resolver(executor);
  const std::string service = std::to_string(dial_port);
  auto [resolve_error, addresses] = co_await resolver.async_resolve(dial_host, service, as_tuple_awaitable);
  if (resolve_error) {
    co_return failed(transport_error(resolve_error), "cannot resolve " + dial_host + ": " + resolve_error.message());
  }
  beast::tcp_stream stream(executor);
  stream.expires_after(settings.connect_timeout);
  auto [connect_error, connected] = co_await stream.async_connect(addresses, as_tuple_awaitable);
  (void)connected;
  if (connect_error) {
    co_return failed(
        transport_error(connect_error),
        "connecting to " + dial_name + " failed: " +
            (connect_error == beast::error::timeout ? std::string("connect timeout") : connect_error.message()));
  }
  stream.socket().set_option(tcp::no_delay(true));
  if (proxy) {
    std::string reason;
    const auto tunnel_error =
        co_await establish_tunnel(stream, *proxy, endpoint.host, endpoint.port, settings.connect_timeout, &reason);
    if (tunnel_error) co_return failed(tunnel_error, reason);
  }
  if (endpoint.tls) co_return co_await tls_handshake(std::move(stream), std::move(endpoint), settings);
  stream.expires_never();
  ConnectResult result;
  result.connection = std::make_unique<Connection>(std::move(stream));
  co_return result;
}

asio::awaitable<void> exchange(PooledConnection& pooled, const WireRequest& request, ExchangeLimits limits,
                               ExchangeResult& result) {
  auto& connection = static_cast<Connection&>(pooled);
  if (TlsStream* tls = connection.tls()) return exchange_on(*tls, connection, request, limits, result);
  return exchange_on(*connection.plain(), connection, request, limits, result);
}

void append_header_line(std::string& out, std::string_view name, std::string_view value) {
  const std::size_t at = out.size();
  out.resize(at + name.size() + value.size() + 4);
  write_header_line(out.data() + at, name, value);
}

char* write_header_line(char* out, std::string_view name, std::string_view value) noexcept {
  out = copy_text(out, name);
  *out++ = ':';
  *out++ = ' ';
  out = copy_text(out, value);
  *out++ = '\r';
  *out++ = '\n';
  return out;
}

// memchr per forbidden character (vectorised) rather than a loop over every character: this
// runs for every header of every call.
bool is_safe_header_value(std::string_view value) noexcept {
  if (value.empty()) return true;  // (memchr must not see the null data of an empty view)
  return std::memchr(value.data(), '\r', value.size()) == nullptr &&
         std::memchr(value.data(), '\n', value.size()) == nullptr;
}

bool is_safe_header(std::string_view name, std::string_view value) noexcept {
  return is_safe_header_name(name) && is_safe_header_value(value);
}

}  // namespace tinker::http
