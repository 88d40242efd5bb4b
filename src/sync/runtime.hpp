// The runtime behind the blocking facade: one io_context, a work guard, one thread running it, and
// the async ServiceClient living on that thread.
//
// Ownership: every sync object (ServiceClient, TrainingClient, SamplingClient, RestClient) holds a
// shared_ptr to the runtime, so the io thread runs while any of them exists; a TrainingClient that
// outlives the ServiceClient that made it keeps working. The last one to go destroys the runtime:
// the async ServiceClient is destroyed ON the io thread (stopping heartbeat, telemetry and every
// poll), then the work guard goes, the thread drains what the shutdown cancelled (bounded by
// `drain_timeout`), the io_context is stopped and the thread joined. Nothing is left running.
//
// Async handles (TrainingClient, SamplingClient, RestClient) are released on the io thread too
// (`release`), because the state behind them belongs to that thread.
#pragma once

#include <tinker/service_client.hpp>
#include <tinker/sync/result.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

namespace tinker::sync::detail {

class Runtime {
 public:
  /// How long the destructor lets cancelled operations finish before it stops the io_context.
  static constexpr std::chrono::seconds drain_timeout{5};

  /// Constructs the async ServiceClient (no I/O; throws tinker::error on bad options, before any
  /// thread exists), then starts the io thread.
  explicit Runtime(ServiceClientOptions options);
  /// The same with the options of the environment (TINKER_API_KEY, TINKER_BASE_URL, ...).
  Runtime();
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const tinker::ServiceClient& service() const noexcept { return *service_; }
  boost::asio::any_io_executor executor() const noexcept { return io_->get_executor(); }

  bool on_io_thread() const noexcept { return std::this_thread::get_id() == io_thread_id_; }

  /// Destroys `handle` on the io thread (posted; returns at once).
  template <class Handle>
  void release(Handle handle) const {
    boost::asio::post(io_->get_executor(), [released = std::move(handle)]() {});
  }

 private:
  using WorkGuard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;

  void start_thread();
  void shut_down_from_io_thread() noexcept;
  void shut_down_from_other_thread() noexcept;

  LogSink log_;                                  // for exceptions escaping a handler on the io thread
  std::shared_ptr<boost::asio::io_context> io_;  // shared with the thread, which may outlive us (see .cpp)
  std::optional<WorkGuard> guard_;
  std::optional<tinker::ServiceClient> service_;
  std::future<void> finished_;  // ready when the thread's run loop returned
  std::thread thread_;
  std::thread::id io_thread_id_;
};

/// Throws tinker::error (invalid_argument) naming `what` when `runtime` is null (an empty or
/// moved-from sync object).
const Runtime& checked(const RuntimePtr& runtime, const char* what);

}  // namespace tinker::sync::detail
