// A small synchronous HTTP/1.1 client over raw Boost.Beast, for tinker-local's API tests.
//
// It shares nothing with the SDK's transport (src/http): requests are written exactly as the
// test builds them, and responses are handed back as status, headers and body, so the tests see
// the wire itself. One keep-alive connection per client; a connection closed by the server (or
// broken by an injected fault) is reopened by the next request.
#pragma once

#include <boost/json/value.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tinker::local::test {

/// Header name/value pairs. Names compare case-insensitively in `find_header`.
using HeaderList = std::vector<std::pair<std::string, std::string>>;

class HttpResponse {
 public:
  int status = 0;
  HeaderList headers;  ///< as received, in order
  std::string body;
  bool keep_alive = false;

  /// The first header of that name (case-insensitive), if any.
  std::optional<std::string> header(std::string_view name) const;
  /// How many headers of that name were received.
  std::size_t header_count(std::string_view name) const;
  /// The body parsed as JSON; throws std::runtime_error quoting the body when it is not JSON.
  boost::json::value json() const;
  /// status, headers and body on one line each, for failure messages.
  std::string describe() const;
};

/// A failed exchange: what went wrong at the transport level, plus whatever arrived before.
class ExchangeResult {
 public:
  boost::system::error_code error;  ///< empty when a full response arrived
  bool header_received = false;     ///< the status line and headers arrived
  HttpResponse response;            ///< complete when !error; else what was parsed so far
};

/// What a raw write produced: the bytes that came back and how the connection ended.
class RawResult {
 public:
  std::string received;
  boost::system::error_code ended_by;  ///< eof, connection_reset, timeout, ...
  bool closed_by_peer() const;         ///< eof or reset (not our timeout)
};

class HttpClient {
 public:
  /// Connects lazily to `host`:`port`. `timeout` bounds each write and each read.
  HttpClient(std::string host, std::uint16_t port,
             std::chrono::milliseconds timeout = std::chrono::milliseconds(20000));
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  /// One request/response on the keep-alive connection. Sets Host and Content-Length; any other
  /// header is sent only if given. Throws std::runtime_error on a transport failure.
  HttpResponse request(std::string_view method, std::string_view target, const HeaderList& headers = {},
                       std::string body = {});
  /// Same, but reports a transport failure (reset, truncated body, timeout) instead of throwing.
  ExchangeResult exchange(std::string_view method, std::string_view target, const HeaderList& headers = {},
                          std::string body = {});

  /// Writes `bytes` verbatim on a fresh connection and reads until the server closes it or
  /// `timeout` passes. The connection is then closed.
  RawResult send_raw(std::string bytes, std::chrono::milliseconds timeout = std::chrono::milliseconds(3000));

  /// How many TCP connections this client has opened so far (keep-alive checks).
  int connections_opened() const noexcept;
  void close();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tinker::local::test
