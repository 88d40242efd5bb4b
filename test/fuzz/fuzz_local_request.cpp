// tinker-local's request handling, fed raw bytes: one long-lived in-process server (started once per
// fuzzing process), and per input one loopback connection that sends the input, half-closes, and reads
// whatever comes back until the server closes. That covers the request head (Beast's parser with the
// server's limits, headers, auth), routing and query parameters, JSON bodies (every request decoder of
// the protocol), protobuf and zstd bodies, chunked bodies, pipelined requests, and the admin paths.
// Besides the sanitizers: the server keeps serving others, whatever a client sent: a health check on a
// fresh connection after every input must answer 200 within 5 s. (The input's own connection may
// legitimately stay open longer: an input can install a delay fault through /_admin/faults.)
#include "fuzz_support.hpp"

#include <tinker/local/server.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tinker::fuzz {
namespace {

using namespace std::chrono_literals;

class LocalServer {
 public:
  LocalServer() {
    local::ServerOptions options;
    // Kept across fuzzing processes: the server trains its tokenizers only when the cache lacks them
    // (installs are atomic renames, so parallel processes are safe), which saves every run but the first
    // the training time.
    options.hf_hub_cache = std::filesystem::temp_directory_path() / "tinker-fuzz-hub-cache";
    options.log_level = LogLevel::off;
    options.null_model = true;  // the requests are the point, not the model's arithmetic
    options.worker_threads = 1;
    options.long_poll_hold = 10ms;
    options.idle_timeout = 3s;
    options.header_timeout = 3000ms;
    options.max_request_body = 1u << 20;
    options.max_header_bytes = 16u << 10;
    options.request_log_limit = 1000;
    server_ = std::make_unique<local::Server>(std::move(options));
    server_->start();
  }
  local::Server& server() { return *server_; }

 private:
  std::unique_ptr<local::Server> server_;
};

// Stopped at exit, which also removes its data directory (one per fuzzing process).
LocalServer& local_server() {
  static LocalServer instance;
  return instance;
}

// A blocking loopback connection with 5 s send and receive timeouts (a hang fails the input through
// libFuzzer's -timeout instead of blocking forever). libFuzzer's timeout check is a SIGALRM every
// -timeout/2 + 1 s, and a socket call with SO_RCVTIMEO/SO_SNDTIMEO fails with EINTR when a signal
// arrives, whatever SA_RESTART says: every call here retries on EINTR. (Without it, a health check
// that read nothing failed the run within a minute or two of fuzzing.)
class Connection {
 public:
  explicit Connection(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    if (fd_ < 0) std::abort();
    timeval timeout{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 &&
        !(errno == EINTR && finish_interrupted_connect())) {
      property_failed("cannot connect to tinker-local");
    }
  }
  ~Connection() { ::close(fd_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends everything (the server may close early, e.g. after a 413: then the rest is dropped).
  void send_all(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t sent = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (sent < 0 && errno == EINTR) continue;
      if (sent <= 0) return;
      bytes.remove_prefix(static_cast<std::size_t>(sent));
    }
  }
  void finish_sending() { ::shutdown(fd_, SHUT_WR); }

  // Everything until the server closes; false when it did not within the receive timeout.
  bool read_to_end(std::string& out) {
    char buffer[16384];
    for (;;) {
      const ssize_t got = ::recv(fd_, buffer, sizeof buffer, 0);
      if (got < 0 && errno == EINTR) continue;
      if (got == 0) return true;
      if (got < 0) return errno == ECONNRESET;
      out.append(buffer, static_cast<std::size_t>(got));
    }
  }

 private:
  // A connect interrupted by a signal goes on in the background: wait for it like a non-blocking one.
  bool finish_interrupted_connect() {
    pollfd waiting{fd_, POLLOUT, 0};
    int ready = 0;
    do {
      ready = ::poll(&waiting, 1, 5000);
    } while (ready < 0 && errno == EINTR);
    int error = 0;
    socklen_t length = sizeof error;
    return ready == 1 && ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0;
  }

  int fd_;
};

void check_still_serving(std::uint16_t port) {
  Connection connection(port);
  connection.send_all("GET /api/v1/healthz HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n\r\n");
  std::string answer;
  if (!connection.read_to_end(answer) || !answer.starts_with("HTTP/1.1 200 ")) {
    property_failed("tinker-local stopped answering a health check after an input");
  }
}

}  // namespace
}  // namespace tinker::fuzz

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  // The server keeps state across inputs on its own threads (sessions, futures, the arrival log), so
  // libFuzzer's per-input leak check (run whenever an input's allocations and frees differ) would scan
  // the heap after almost every input, for nothing: off by default, before the user's flags so that
  // -detect_leaks=1 still wins. Leaks are still checked at exit.
  static std::vector<char*> arguments(*argv, *argv + *argc);
  static char no_leak_check[] = "-detect_leaks=0";
  arguments.insert(arguments.begin() + 1, no_leak_check);
  arguments.push_back(nullptr);
  *argc += 1;
  *argv = arguments.data();
  (void)tinker::fuzz::local_server();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tinker::fuzz;
  tinker::local::Server& server = local_server().server();
  const std::uint16_t port = server.port();
  {
    Connection connection(port);
    connection.send_all(as_text(data, size));
    connection.finish_sending();
    std::string answer;
    (void)connection.read_to_end(answer);
  }
  // An input may install fault rules through /_admin/faults; the next input starts without them.
  server.set_faults({});
  check_still_serving(port);
  return 0;
}
