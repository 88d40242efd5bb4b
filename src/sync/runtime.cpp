#include "sync/runtime.hpp"

#include "sync/blocking.hpp"

#include <tinker/log.hpp>

#include <exception>
#include <string>

namespace tinker::sync::detail {
namespace {

// The io thread. An exception escaping a handler (a user callback that threw, say) is logged and
// the loop goes on: ending the thread would leave every blocked caller waiting forever.
void run_io(std::shared_ptr<boost::asio::io_context> io, std::promise<void> finished, LogSink log) {
  for (;;) {
    try {
      io->run();
      break;
    } catch (const std::exception& e) {
      log(LogLevel::error, std::string("tinker::sync: an exception escaped a handler on the io thread: ") + e.what());
    } catch (...) {
      log(LogLevel::error, "tinker::sync: an exception escaped a handler on the io thread");
    }
  }
  finished.set_value();
  // `io` may be the last reference (runtime destroyed on this thread): the io_context is then
  // destroyed here, after run() returned, which is allowed.
}

}  // namespace

Runtime::Runtime(ServiceClientOptions options)
    : log_(options.log ? options.log : stderr_log_sink(options.client.log_level)),
      io_(std::make_shared<boost::asio::io_context>(1)) {
  // Built before the thread exists: the constructor does no I/O, and a bad option throws here
  // with nothing to clean up.
  service_.emplace(io_->get_executor(), std::move(options));
  start_thread();
}

Runtime::Runtime() : Runtime(ServiceClientOptions(ClientOptions::from_environment())) {}

void Runtime::start_thread() {
  guard_.emplace(io_->get_executor());
  std::promise<void> finished;
  finished_ = finished.get_future();
  thread_ = std::thread(&run_io, io_, std::move(finished), log_);
  io_thread_id_ = thread_.get_id();
}

Runtime::~Runtime() {
  if (on_io_thread()) {
    shut_down_from_io_thread();
  } else {
    shut_down_from_other_thread();
  }
}

void Runtime::shut_down_from_other_thread() noexcept {
  std::promise<void> shut_down;
  auto shut_down_done = shut_down.get_future();
  boost::asio::post(io_->get_executor(), [this, &shut_down]() {
    service_.reset();  // the async client must be destroyed on its thread
    shut_down.set_value();
  });
  shut_down_done.wait();  // the guard keeps the thread running until then
  guard_.reset();
  // Let the operations the shutdown cancelled complete (they release their state on the io
  // thread), then stop whatever still holds the io_context (a timer nobody cancelled).
  if (finished_.wait_for(drain_timeout) != std::future_status::ready) io_->stop();
  thread_.join();
}

// The last sync object was released by a handler on the io thread (a callback that captured it):
// the thread cannot join itself. Shut the client down here, stop the loop and let the thread end
// by itself; it holds the io_context until its run() returned.
void Runtime::shut_down_from_io_thread() noexcept {
  service_.reset();
  guard_.reset();
  io_->stop();
  thread_.detach();
}

const Runtime& checked(const RuntimePtr& runtime, const char* what) {
  if (!runtime) {
    throw error(errc::invalid_argument, std::string("tinker::sync::") + what +
                                            " called on an empty (default-constructed or moved-from) object");
  }
  return *runtime;
}

error called_on_io_thread(const char* what) {
  return error(errc::invalid_argument, std::string("tinker::sync::") + what +
                                           " was called on the client's io thread (from a callback, a continuation "
                                           "or a custom loss function), where waiting would deadlock: use the "
                                           "async API (async_client()) there");
}

error abandoned(const char* what) {
  return error(errc::cancelled,
               std::string("tinker::sync::") + what + " was abandoned: its client shut down before it completed");
}

}  // namespace tinker::sync::detail
