#include "client/async/off_io_thread.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>

namespace tinker::client::async {
namespace {

namespace asio = boost::asio;

// One small pool for the blocking work of clients, so the io thread never waits on it.
asio::thread_pool& blocking_pool() {
  static asio::thread_pool pool(1);
  return pool;
}

}  // namespace

// use_awaitable rethrows a non-null exception_ptr.
asio::awaitable<void> off_io_thread(std::function<void()> work) {
  const asio::any_io_executor io = co_await asio::this_coro::executor;
  auto initiation = [io](auto handler, std::function<void()> job) {
    auto tracked = asio::prefer(io, asio::execution::outstanding_work.tracked);
    asio::post(blocking_pool(),
               [handler = std::move(handler), job = std::move(job), tracked = std::move(tracked), io]() mutable {
                 std::exception_ptr failure;
                 try {
                   job();
                 } catch (...) {
                   failure = std::current_exception();
                 }
                 // The work guard travels with the completion and is released on the io thread:
                 // were it released here, after the post, the io_context could already be gone.
                 // The failure is moved too, so the last reference to the exception is dropped on
                 // the io thread, after the caller has read it (a copy left here could free the
                 // exception concurrently with that read, as TSan reported).
                 asio::post(io, [handler = std::move(handler), failure = std::move(failure),
                                 work = std::move(tracked)]() mutable { std::move(handler)(failure); });
               });
  };
  co_await asio::async_initiate<const asio::use_awaitable_t<>, void(std::exception_ptr)>(
      initiation, asio::use_awaitable, std::move(work));
}

}  // namespace tinker::client::async
