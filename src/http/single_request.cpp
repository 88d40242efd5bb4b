// Beast side of send_single (single_request.hpp): connect, write the head and the body (a string
// or a file slice in 64 KiB chunks, so an LFS part of any size costs constant memory), read the
// whole answer into a string_body with an explicit limit, close.
#include "http/single_request.hpp"

#include "http/connection.hpp"
#include "http/connection_stream.hpp"
#include "http/tls.hpp"
#include "http/url.hpp"

#include <tinker/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace tinker::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;

constexpr std::size_t chunk_size = 64 * 1024;
constexpr std::uint32_t header_limit = 64 * 1024;

SingleResponse failed(boost::system::error_code ec, std::string reason) {
  SingleResponse response;
  response.error = ec;
  response.reason = std::move(reason);
  return response;
}

std::uint64_t body_size(const SingleRequest& request) {
  return request.file_body ? request.file_body->length : request.body.size();
}

std::string request_head(const SingleRequest& request, const AbsoluteUrl& target, const DownloadTransport& transport) {
  std::string head = request.method + " " + target.path + " HTTP/1.1\r\n";
  append_header_line(head, "Host", target.endpoint.host_header());
  append_header_line(head, "User-Agent", transport.user_agent);
  for (const auto& [name, value] : request.headers) {
    if (!is_safe_header(name, value)) throw error(errc::invalid_argument, "unsafe header " + name);
    append_header_line(head, name, value);
  }
  if (!request.authorization.empty()) append_header_line(head, "Authorization", request.authorization.reveal());
  if (request.method != "GET" || body_size(request) != 0) {
    append_header_line(head, "Content-Length", std::to_string(body_size(request)));
  }
  append_header_line(head, "Connection", "close");
  head += "\r\n";
  return head;
}

// A file slice read chunk by chunk; throws invalid_argument naming the file when it cannot be read.
class SliceReader {
 public:
  explicit SliceReader(const FileSlice& slice) : slice_(slice), file_(std::fopen(slice.path.c_str(), "rb")) {
    if (file_ == nullptr || std::fseek(file_, static_cast<long>(slice.offset), SEEK_SET) != 0) fail();
  }
  ~SliceReader() {
    if (file_ != nullptr) std::fclose(file_);
  }
  SliceReader(const SliceReader&) = delete;
  SliceReader& operator=(const SliceReader&) = delete;

  /// The next chunk (empty at the end of the slice).
  std::size_t next(std::vector<char>& buffer) {
    const std::uint64_t left = slice_.length - done_;
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(left, buffer.size()));
    if (want == 0) return 0;
    if (std::fread(buffer.data(), 1, want, file_) != want) fail();
    done_ += want;
    return want;
  }

 private:
  [[noreturn]] void fail() const {
    throw error(errc::invalid_argument, "cannot read " + slice_.path.string() + ": " + std::strerror(errno));
  }
  const FileSlice& slice_;
  std::FILE* file_;
  std::uint64_t done_ = 0;
};

template <class Stream>
asio::awaitable<boost::system::error_code> write_body(Stream& stream, beast::tcp_stream& tcp,
                                                      const SingleRequest& request, std::chrono::milliseconds timeout) {
  if (!request.file_body) {
    tcp.expires_after(timeout);
    auto [ec, written] = co_await asio::async_write(stream, asio::buffer(request.body), as_tuple_awaitable);
    (void)written;
    co_return ec;
  }
  SliceReader reader(*request.file_body);
  std::vector<char> chunk(chunk_size);
  for (std::size_t got = reader.next(chunk); got != 0; got = reader.next(chunk)) {
    tcp.expires_after(timeout);
    auto [ec, written] = co_await asio::async_write(stream, asio::buffer(chunk.data(), got), as_tuple_awaitable);
    (void)written;
    if (ec) co_return ec;
  }
  co_return boost::system::error_code();
}

template <class Stream>
asio::awaitable<SingleResponse> exchange_on(Stream& stream, Connection& connection, const SingleRequest& request,
                                            const AbsoluteUrl& target, const DownloadTransport& transport) {
  beast::tcp_stream& tcp = connection.tcp();
  const std::string host = target.endpoint.host_header();
  tcp.expires_after(transport.read_timeout);
  auto [head_error, head_written] =
      co_await asio::async_write(stream, asio::buffer(connection.head), as_tuple_awaitable);
  (void)head_written;
  if (head_error)
    co_return failed(make_error_code(errc::connection_failed), "sending the request to " + host + " failed");
  if (auto ec = co_await write_body(stream, tcp, request, transport.read_timeout)) {
    // The server may answer before reading the whole body (an early 4xx): read it all the same.
    if (ec != asio::error::broken_pipe && ec != asio::error::connection_reset) {
      co_return failed(make_error_code(errc::connection_failed), "sending the body to " + host + " failed");
    }
  }
  bhttp::response_parser<bhttp::string_body> parser;
  parser.header_limit(header_limit);
  parser.body_limit(request.max_response);
  tcp.expires_after(transport.read_timeout);
  auto [read_error, read] = co_await bhttp::async_read(stream, connection.buffer, parser, as_tuple_awaitable);
  (void)read;
  tcp.expires_never();
  if (read_error == bhttp::error::body_limit || read_error == bhttp::error::header_limit) {
    co_return failed(make_error_code(errc::response_too_large), "the answer of " + host + " is over the limit");
  }
  if (read_error == beast::error::timeout) {
    co_return failed(make_error_code(errc::timeout), "no answer from " + host + " in time");
  }
  if (read_error)
    co_return failed(make_error_code(errc::connection_failed), "reading the answer of " + host + " failed");
  SingleResponse response;
  auto& message = parser.get();
  response.status = static_cast<int>(message.result_int());
  for (const auto& field : message) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    response.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  response.body = std::move(message.body());
  co_return response;
}

}  // namespace

asio::awaitable<SingleResponse> send_single(DownloadTransport& transport, SingleRequest request) {
  const AbsoluteUrl target = parse_absolute_url(request.url, "the request URL");
  const auto executor = co_await asio::this_coro::executor;
  const ConnectSettings settings = connect_settings_for(transport, target.endpoint.tls);
  ConnectResult connected = co_await connect(executor, target.endpoint, settings);
  if (connected.error) co_return failed(connected.error, connected.reason);

  auto& connection = static_cast<Connection&>(*connected.connection);
  connection.head = request_head(request, target, transport);
  SingleResponse response;
  if (TlsStream* tls = connection.tls()) {
    response = co_await exchange_on(*tls, connection, request, target, transport);
  } else {
    response = co_await exchange_on(*connection.plain(), connection, request, target, transport);
  }
  connection.close();
  co_return response;
}

}  // namespace tinker::http
