// The shared state behind a ServiceClient and every client it made (doc/protocol.md#bootstrap-and-lifecycle: the
// "holder").
//
// Lives on the client's io thread; every member function must be called there. Owns the HTTP
// client (pools), the server's configuration, the session and its heartbeat, the session's
// counters, the credential (API key or JWT with its refresh), telemetry, the log, and a registry
// of background tasks (future polls) that `shutdown()` cancels, so nothing outlives the
// ServiceClient.
#pragma once

#include "api/execute_with_retries.hpp"
#include "client/async/byte_budget.hpp"
#include "client/sampling/dispatch.hpp"
#include "http/client.hpp"

#include <tinker/log.hpp>
#include <tinker/service_client.hpp>
#include <tinker/types/session.hpp>
#include <tinker/types/telemetry.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace tinker::detail {

/// A background task that ServiceClient shutdown cancels. While registered it is linked into its
/// holder's list, so registering allocates nothing (a sampler registers a task per sample).
class RegisteredTask {
 public:
  RegisteredTask() = default;
  RegisteredTask(const RegisteredTask&) = delete;
  RegisteredTask& operator=(const RegisteredTask&) = delete;

  /// Asks the task to stop: called by shutdown(), and for a task registered after it, on the io
  /// thread's next turn if the task is still registered then.
  virtual void cancel_task() = 0;

 protected:
  ~RegisteredTask() = default;

 private:
  friend class ClientHolder;
  RegisteredTask* previous_ = nullptr;
  RegisteredTask* next_ = nullptr;
  bool registered_ = false;
};

class ClientHolder : public std::enable_shared_from_this<ClientHolder> {
 public:
  /// Intervals of the background loops; the defaults are the protocol's. Internal knob: tests
  /// shorten them with set_timing() before the first ensure_config/ensure_session.
  class Timing {
   public:
    Timing() = default;
    std::chrono::milliseconds heartbeat_interval{10'000};        ///< doc/protocol.md#endpoints
    std::chrono::milliseconds heartbeat_warning_after{120'000};  ///< failing this long: warn
    std::chrono::milliseconds jwt_refresh_lead{300'000};         ///< refresh this long before exp
    std::chrono::milliseconds jwt_retry{60'000};                 ///< after a failed refresh / no exp
    std::chrono::milliseconds jwt_on_demand_threshold{60'000};   ///< ensure_config refreshes below this
    std::chrono::milliseconds telemetry_flush_interval{10'000};  ///< doc/protocol.md#telemetry
    std::chrono::milliseconds telemetry_retry_interval{1'000};   ///< a failed batch is resent after this
    std::chrono::milliseconds dynamic_config_min_interval{
        10'000};  ///< doc/protocol.md#endpoints: max(refresh_interval_sec, 10 s)
    std::chrono::milliseconds archive_build_wait{
        30'000};                     ///< doc/rest.md#checkpoint-downloads: sleep after a 503 "building"
    int archive_build_attempts = 6;  ///< doc/rest.md#checkpoint-downloads: requests of that inner loop
    std::chrono::milliseconds trace_export_poll_interval{5'000};  ///< doc/rest.md#calls
  };

  /// Validates the options (throws tinker::error, invalid_configuration); does no I/O.
  static std::shared_ptr<ClientHolder> create(boost::asio::any_io_executor executor, ServiceClientOptions options);
  ~ClientHolder();
  ClientHolder(const ClientHolder&) = delete;
  ClientHolder& operator=(const ClientHolder&) = delete;

  boost::asio::any_io_executor executor() const noexcept;
  http::HttpClient& http() noexcept;
  const ServiceClientOptions& options() const noexcept;
  /// Writes a line to ServiceClientOptions::log, else to stderr; lines above
  /// client.log_level are dropped either way.
  void log(LogLevel level, std::string_view message) const;
  bool log_enabled(LogLevel level) const noexcept;
  /// The log and ServiceClientOptions::on_event, for the retry loops that report events.
  http::Observer& observer() const noexcept;

  void set_timing(Timing timing);
  const Timing& timing() const noexcept;

  /// Session-less bootstrap (doc/protocol.md#bootstrap-and-lifecycle): client/config, then auth/token when the server
  /// enables JWTs (and its refresh loop), then dynamic_config. Single flight: concurrent callers share one bootstrap; a
  /// failed bootstrap is retried by the next caller. Once bootstrapped it is cheap, and refreshes a JWT with <= 60 s
  /// left on demand (doc/protocol.md#authentication step 3; a failed refresh keeps the old token): call it (or
  /// ensure_session) before each request.
  boost::asio::awaitable<boost::system::error_code> ensure_config(diagnostics& diag);
  /// The server's client/config (valid after ensure_config succeeded).
  const ClientConfigResponse& config() const noexcept;

  /// Session-ful bootstrap (doc/protocol.md#bootstrap-and-lifecycle): ensure_config, then create_session (tags, user
  /// metadata, sdk_version, project id; the server's info/warning/error messages are logged),
  /// then the heartbeat (every 10 s; a warning once failures have lasted 120 s) and telemetry.
  boost::asio::awaitable<boost::system::error_code> ensure_session(diagnostics& diag);
  /// Empty before ensure_session succeeded. Safe to read from any thread.
  std::string session_id() const;

  /// The session's counters (doc/service.md).
  std::int64_t next_model_seq_id() noexcept;
  std::int64_t next_sampling_seq_id() noexcept;

  /// Call-retry settings with this holder's billing-pause state (doc/protocol.md#call-retries,
  /// doc/protocol.md#billing-pause-402).
  api::CallRetrySettings retry_call() noexcept;
  api::BillingPause& billing() noexcept;

  /// The byte budgets of doc/protocol.md#pools-timeouts-and-throttles, shared by every client of this holder and sized
  /// by the server's client/config (defaults before it is known): the bytes of forward/backward requests being
  /// submitted, and of large results announced by complete_metadata.
  client::async::ByteBudget& fwdbwd_budget();
  client::async::ByteBudget& response_budget();

  /// The sampling submit's throttles (doc/protocol.md#pools-timeouts-and-throttles, doc/sampling.md#sampling), shared
  /// by every SamplingClient of this holder, with the backoff state shared by every holder with the same base URL and
  /// API key. Made at first use from client/config and sample_tuning().
  client::sampling::SampleDispatch& sample_dispatch();
  /// Internal knob (tests): the limits and waits of sampling; set before the first sample.
  void set_sample_tuning(client::sampling::SampleTuning tuning);
  const client::sampling::SampleTuning& sample_tuning() const noexcept;

  /// Background tasks (future polls, sample operations): shutdown() calls each one's
  /// cancel_task() once. unregister_task when the task ends by itself (io thread, both).
  void register_task(RegisteredTask& task);
  void unregister_task(RegisteredTask& task) noexcept;
  bool shutting_down() const noexcept;
  /// True if ensure_config() would complete at once with success (config there, no bootstrap
  /// in flight, no JWT to refresh): a hot path skips its coroutine frame then.
  bool config_current() const noexcept;

  /// Queues one telemetry event (doc/protocol.md#telemetry); a no-op when telemetry is off or
  /// the holder is shutting down. Events of severity error and above are flushed at once.
  void telemetry(TelemetryEvent event);
  /// Wakes the telemetry loop to send what is queued now.
  void flush_telemetry();

  /// Stops the heartbeat, the JWT refresh and the telemetry loop (flushing what it can without
  /// waiting), cancels every registered task, and shuts the HTTP client down. Idempotent.
  void shutdown();

  /// The state behind the holder (src/client/holder_impl.hpp), for the holder's own files.
  class Impl;
  Impl& impl() noexcept { return *impl_; }
  const Impl& impl() const noexcept { return *impl_; }

 private:
  explicit ClientHolder(std::unique_ptr<Impl> impl);
  /// Unlinks and cancels every registered task.
  void cancel_registered_tasks() noexcept;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tinker::detail
