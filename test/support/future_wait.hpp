// Drives an io_context on the calling thread until a std::future made with asio::use_future is
// ready: for tests whose clients run on an io_context nobody else runs.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/system/system_error.hpp>

#include <chrono>
#include <future>
#include <stdexcept>

namespace tinker::test {

/// The value of `future`, running `io` until it is ready; throws std::runtime_error after `limit`.
template <class T>
T run_until_ready(boost::asio::io_context& io, std::future<T>& future,
                  std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("timed out");
    io.run_one_for(std::chrono::milliseconds(50));
  }
  return future.get();
}

/// The error code `future` fails with once ready (success when it holds a value).
template <class T>
boost::system::error_code failure_when_ready(boost::asio::io_context& io, std::future<T>& future) {
  try {
    run_until_ready(io, future);
  } catch (const boost::system::system_error& e) {
    return e.code();
  }
  return {};
}

}  // namespace tinker::test
