// The lifecycle shared by the test servers: a listener on 127.0.0.1 (ephemeral port) whose
// io_context runs on a thread of its own, so tests drive the client on their own io_context.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <thread>

namespace tinker::test {

/// The token the loopback servers' coroutines await with: the error code comes back as a value.
inline constexpr auto use_tuple = boost::asio::as_tuple(boost::asio::use_awaitable);

// Coroutines of the test servers must not fail silently: an exception ends the server thread
// loudly (std::terminate) instead of leaving a test waiting for an answer that never comes.
inline constexpr auto rethrow = [](const std::exception_ptr& e) {
  if (e) std::rethrow_exception(e);
};

class LoopbackService {
 public:
  LoopbackService() = default;
  LoopbackService(const LoopbackService&) = delete;
  LoopbackService& operator=(const LoopbackService&) = delete;

  /// Listens on 127.0.0.1 with an ephemeral port, spawns `accept_loop` and starts the thread.
  void start_listening(boost::asio::awaitable<void> accept_loop) {
    const boost::asio::ip::tcp::endpoint endpoint(boost::asio::ip::make_address("127.0.0.1"), 0);
    acceptor.open(endpoint.protocol());
    acceptor.set_option(boost::asio::ip::tcp::acceptor::reuse_address(true));
    acceptor.bind(endpoint);
    acceptor.listen();
    port = acceptor.local_endpoint().port();
    boost::asio::co_spawn(ioc, std::move(accept_loop), rethrow);
    thread_ = std::thread([this] {
      ioc.run();
      finished_.set_value();
    });
  }

  /// Runs `stop` on the service thread (it must make every coroutine end, so run() returns),
  /// then joins. A graceful stop takes milliseconds; after 10 s the io_context is stopped hard,
  /// so a hung test cannot hang the suite.
  void stop_and_join(std::function<void()> stop) {
    boost::asio::post(ioc, std::move(stop));
    if (finished_.get_future().wait_for(std::chrono::seconds(10)) != std::future_status::ready) ioc.stop();
    thread_.join();
  }

  // Service thread only (after start_listening()).
  boost::asio::io_context ioc{1};
  boost::asio::ip::tcp::acceptor acceptor{ioc};
  std::uint16_t port = 0;

 private:
  std::thread thread_;
  std::promise<void> finished_;
};

}  // namespace tinker::test
