// A blocking raw HTTP/1.1 client for the front end's smoke tests: hand-written requests over one
// keep-alive connection, responses read by Beast with an explicit body limit.
#pragma once

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tinker::local::test {

using RawResponse = boost::beast::http::response<boost::beast::http::string_body>;

class RawClient {
 public:
  explicit RawClient(std::uint16_t port) : socket_(io_) {
    const boost::asio::ip::tcp::endpoint endpoint(boost::asio::ip::make_address("127.0.0.1"), port);
    socket_.connect(endpoint);
  }

  /// Sends one request; `headers` are "Name: value" lines.
  void send(const std::string& method, const std::string& target, const std::string& body = "",
            const std::vector<std::string>& headers = {}) {
    std::string text = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    for (const std::string& header : headers) text += header + "\r\n";
    if (!body.empty() || method == "POST" || method == "PUT") {
      text += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    }
    text += "\r\n" + body;
    boost::asio::write(socket_, boost::asio::buffer(text));
  }

  /// Reads one response; throws boost::system::system_error when the connection fails.
  RawResponse receive() {
    boost::beast::http::response_parser<boost::beast::http::string_body> parser;
    parser.body_limit(64u << 20);
    boost::beast::http::read(socket_, buffer_, parser);
    return parser.release();
  }

  /// Reads one response; on failure returns the error instead.
  boost::system::error_code try_receive(RawResponse& response) {
    boost::beast::http::response_parser<boost::beast::http::string_body> parser;
    parser.body_limit(64u << 20);
    boost::system::error_code ec;
    boost::beast::http::read(socket_, buffer_, parser, ec);
    if (!ec) response = parser.release();
    return ec;
  }

  RawResponse request(const std::string& method, const std::string& target, const std::string& body = "",
                      std::vector<std::string> headers = {"X-API-Key: tml-smoke-test",
                                                          "Content-Type: application/json"}) {
    send(method, target, body, headers);
    return receive();
  }

  boost::asio::ip::tcp::socket& socket() { return socket_; }

 private:
  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
};

/// The response body as JSON (throws when it is not).
inline boost::json::value body_json(const RawResponse& response) {
  return boost::json::parse(response.body());
}

/// The "detail" of an error body ({"detail": "..."}).
inline std::string detail_of(const RawResponse& response) {
  return std::string(body_json(response).as_object().at("detail").as_string());
}

}  // namespace tinker::local::test
