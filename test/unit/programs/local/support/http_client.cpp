#include "unit/programs/local/support/http_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <sstream>
#include <stdexcept>

namespace tinker::local::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using boost::system::error_code;

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// Big enough for every result the tests ask for; Beast's default (8 MB) must never apply silently.
constexpr std::uint64_t response_body_limit = 512ull << 20;

}  // namespace

std::optional<std::string> HttpResponse::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (iequals(key, name)) return value;
  }
  return std::nullopt;
}

std::size_t HttpResponse::header_count(std::string_view name) const {
  return static_cast<std::size_t>(
      std::count_if(headers.begin(), headers.end(), [&](const auto& h) { return iequals(h.first, name); }));
}

boost::json::value HttpResponse::json() const {
  error_code ec;
  boost::json::value value = boost::json::parse(body, ec);
  if (ec) throw std::runtime_error("response body is not JSON (" + ec.message() + "): " + describe());
  return value;
}

std::string HttpResponse::describe() const {
  std::ostringstream out;
  out << "HTTP " << status << "\n";
  for (const auto& [key, value] : headers) out << key << ": " << value << "\n";
  constexpr std::size_t shown = 2000;
  out << (body.size() > shown ? body.substr(0, shown) + "...(" + std::to_string(body.size()) + " bytes)" : body);
  return out.str();
}

bool RawResult::closed_by_peer() const {
  return ended_by == asio::error::eof || ended_by == asio::error::connection_reset ||
         ended_by == http::error::end_of_stream || ended_by == http::error::partial_message;
}

class HttpClient::Impl {
 public:
  Impl(std::string host, std::uint16_t port, std::chrono::milliseconds timeout)
      : host_(std::move(host)), port_(port), timeout_(timeout) {}

  ExchangeResult exchange(std::string_view method, std::string_view target, const HeaderList& headers,
                          std::string body) {
    ExchangeResult result;
    if (!stream_) {
      result.error = connect();
      if (result.error) return result;
    }
    http::request<http::string_body> request;
    request.method_string(method);
    request.target(target);
    request.version(11);
    request.set(http::field::host, host_ + ":" + std::to_string(port_));
    for (const auto& [key, value] : headers) request.insert(key, value);
    request.body() = std::move(body);
    // A GET/DELETE without a body gets no Content-Length at all (what clients do); anything else
    // declares its length.
    if (!request.body().empty() || (method != "GET" && method != "DELETE")) request.prepare_payload();

    stream_->expires_after(timeout_);
    error_code ec;
    http::async_write(*stream_, request, [&](error_code e, std::size_t) { ec = e; });
    run();
    if (ec) {
      result.error = ec;
      close();
      return result;
    }
    http::response_parser<http::string_body> parser;
    parser.body_limit(response_body_limit);
    stream_->expires_after(timeout_);
    http::async_read(*stream_, buffer_, parser, [&](error_code e, std::size_t) { ec = e; });
    run();
    result.header_received = parser.is_header_done();
    fill(parser.get(), result.response);
    if (ec) {
      result.error = ec;
      close();
      return result;
    }
    if (!result.response.keep_alive) close();
    return result;
  }

  RawResult send_raw(std::string bytes, std::chrono::milliseconds timeout) {
    close();
    RawResult result;
    result.ended_by = connect();
    if (result.ended_by) return result;
    stream_->expires_after(timeout);
    error_code ec;
    asio::async_write(*stream_, asio::buffer(bytes), [&](error_code e, std::size_t) { ec = e; });
    run();
    std::array<char, 16384> chunk{};
    while (!ec) {
      std::size_t got = 0;
      stream_->async_read_some(asio::buffer(chunk), [&](error_code e, std::size_t n) {
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

  void close() {
    if (stream_) {
      error_code ignored;
      stream_->socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
      stream_->socket().close(ignored);
      stream_.reset();
    }
    buffer_.clear();
  }

  int connections_opened = 0;

 private:
  error_code connect() {
    stream_.emplace(ioc_);
    asio::ip::tcp::resolver resolver(ioc_);
    error_code ec;
    auto endpoints = resolver.resolve(host_, std::to_string(port_), ec);
    if (ec) return ec;
    stream_->expires_after(timeout_);
    stream_->async_connect(endpoints, [&](error_code e, const asio::ip::tcp::endpoint&) { ec = e; });
    run();
    if (ec) {
      stream_.reset();
      return ec;
    }
    ++connections_opened;
    stream_->socket().set_option(asio::ip::tcp::no_delay(true), ec);
    return {};
  }

  void run() {
    ioc_.restart();
    ioc_.run();
  }

  static void fill(const http::response<http::string_body>& message, HttpResponse& out) {
    out.status = static_cast<int>(message.result_int());
    out.headers.clear();
    for (const auto& field : message)
      out.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    out.body = message.body();
    out.keep_alive = message.keep_alive();
  }

  std::string host_;
  std::uint16_t port_;
  std::chrono::milliseconds timeout_;
  asio::io_context ioc_{1};
  std::optional<beast::tcp_stream> stream_;
  beast::flat_buffer buffer_;
};

HttpClient::HttpClient(std::string host, std::uint16_t port, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>(std::move(host), port, timeout)) {}

HttpClient::~HttpClient() = default;

HttpResponse HttpClient::request(std::string_view method, std::string_view target, const HeaderList& headers,
                                 std::string body) {
  ExchangeResult result = impl_->exchange(method, target, headers, std::move(body));
  if (result.error) {
    throw std::runtime_error(std::string(method) + " " + std::string(target) +
                             ": transport error: " + result.error.message());
  }
  return std::move(result.response);
}

ExchangeResult HttpClient::exchange(std::string_view method, std::string_view target, const HeaderList& headers,
                                    std::string body) {
  return impl_->exchange(method, target, headers, std::move(body));
}

RawResult HttpClient::send_raw(std::string bytes, std::chrono::milliseconds timeout) {
  return impl_->send_raw(std::move(bytes), timeout);
}

int HttpClient::connections_opened() const noexcept {
  return impl_->connections_opened;
}

void HttpClient::close() {
  impl_->close();
}

}  // namespace tinker::local::test
