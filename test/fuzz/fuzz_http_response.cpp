// The SDK's HTTP response path, through its real reading code and limits: a loopback server in this
// process answers every connection with the fuzz input (after reading the request head), then closes.
// The first byte chooses the client:
//   0  HttpClient (the API client: ResponseReader over Beast's parser, the 64 KiB body and 8 KiB header
//      limits set below, keep-alive, error mapping with the body's detail and Retry-After);
//   1  the streaming download of signed URLs and archives (download_to_file: status, Content-Length,
//      Content-Range, chunked bodies into a file, resumption, redirects) through a CONNECT proxy that is
//      the same server, so a redirect to any host comes back here and nothing leaves the machine.
// Both clients see the same bytes on every connection of an input (resumptions, redirects).
#include "fuzz_support.hpp"

#include "http/client.hpp"
#include "http/clock.hpp"
#include "http/download.hpp"
#include "http/proxy.hpp"

#include <tinker/config.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>

namespace tinker::fuzz {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

class Responder {
 public:
  asio::io_context io;
  tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  std::string answer;  // what every connection gets
  int serving = 0;     // connections not yet answered and closed

  std::uint16_t port() const { return acceptor.local_endpoint().port(); }
};

Responder& responder() {
  static Responder* instance = new Responder();  // never destroyed: outlives every input
  return *instance;
}

asio::awaitable<void> serve(tcp::socket socket) {
  Responder& r = responder();
  boost::system::error_code ec;
  std::string received;
  auto token = asio::redirect_error(asio::use_awaitable, ec);
  co_await asio::async_read_until(socket, asio::dynamic_buffer(received), "\r\n\r\n", token);
  if (!ec && received.starts_with("CONNECT ")) {
    // A proxy that lets every tunnel through to itself; then one read of what comes first (the GET, or
    // a TLS ClientHello that the answer below will not satisfy).
    constexpr std::string_view established = "HTTP/1.1 200 Connection established\r\n\r\n";
    co_await asio::async_write(socket, asio::buffer(established), token);
    char discard[4096];
    if (!ec) co_await socket.async_read_some(asio::buffer(discard), token);
  }
  if (!ec) co_await asio::async_write(socket, asio::buffer(r.answer), token);
  socket.shutdown(tcp::socket::shutdown_send, ec);
  socket.close(ec);
  --r.serving;
}

asio::awaitable<void> accept_loop() {
  Responder& r = responder();
  for (;;) {
    tcp::socket socket = co_await r.acceptor.async_accept(asio::use_awaitable);
    ++r.serving;
    asio::co_spawn(r.io, serve(std::move(socket)), asio::detached);
  }
}

// Runs the io context until the client is done and every connection has been answered and closed.
void run_until(const bool& done) {
  Responder& r = responder();
  while (!done || r.serving > 0) r.io.run_one();
}

void api_request() {
  Responder& r = responder();
  ClientOptions options("http://127.0.0.1:" + std::to_string(r.port()), Secret("tml-fuzz-secret-key"));
  options.retry.max_retries = 0;
  options.limits.max_response_body = 64 * 1024;
  options.limits.max_response_header = 8 * 1024;
  options.timeouts.request = 5s;
  bool done = false;
  {
    http::HttpClient client(r.io.get_executor(), options);
    http::Request request(http::Method::get, "/api/v1/healthz");
    diagnostics diag;
    client.async_send(std::move(request), &diag,
                      http::HttpClient::Handler([&done](boost::system::error_code, http::Response) { done = true; }));
    run_until(done);
  }
  r.io.poll();  // whatever the client's shutdown posted
}

asio::awaitable<void> download(http::DownloadTransport& transport, http::Clock& clock, http::DownloadRequest request,
                               bool& done) {
  http::DownloadState state;
  (void)co_await http::download_to_file(transport, clock, request, state);
  done = true;
}

// One transport for every input: its TLS context (the system's CA store, loaded at the first https URL)
// is made once, as in a real download of many files.
http::DownloadTransport& transport() {
  static http::DownloadTransport* instance = [] {
    auto* t = new http::DownloadTransport();
    const std::string proxy = "http://127.0.0.1:" + std::to_string(responder().port());
    t->proxy = std::make_shared<const http::ProxySettings>(proxy, proxy, std::nullopt);
    t->connect_timeout = 2s;
    t->read_timeout = 2s;
    return t;
  }();
  return *instance;
}

// A download reports failures in its outcome, but throws tinker::error for some (an unparsable redirect
// Location, a file it cannot write), which the SDK's operations turn into their error. Anything else
// escaping it is a finding.
void download_finished(bool& done, std::exception_ptr failure) {
  done = true;
  if (!failure) return;
  try {
    std::rethrow_exception(failure);
  } catch (const error&) {
  }
}

void signed_url_download() {
  Responder& r = responder();
  const TempDir dir;
  http::DownloadRequest request("http://storage.example/ckpt/archive.tar?X-Signature=abc", dir.path() / "archive");
  request.max_resumes = 2;
  request.max_status_retries = 0;
  request.max_redirects = 2;
  request.keep_headers = {"x-request-id", "etag"};
  const std::shared_ptr<http::Clock> clock = http::make_system_clock(r.io.get_executor());
  bool done = false;
  asio::co_spawn(r.io, download(transport(), *clock, std::move(request), done),
                 [&done](std::exception_ptr failure) { download_finished(done, failure); });
  run_until(done);
}

}  // namespace
}  // namespace tinker::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The clients must connect to the responder, never to a proxy of the environment.
  for (const char* name : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY"}) {
    unsetenv(name);
  }
  auto& r = tinker::fuzz::responder();
  boost::asio::co_spawn(r.io, tinker::fuzz::accept_loop(), boost::asio::detached);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tinker::fuzz;
  const Selected input(data, size, 2);
  responder().answer.assign(input.rest());
  if (input.choice() == 0) {
    api_request();
  } else {
    signed_url_download();
  }
  return 0;
}
