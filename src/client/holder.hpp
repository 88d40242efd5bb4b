// The shared state behind a ServiceClient and every client it made (spec 10: the "holder").
//
// Lives on the client's io thread; every member function must be called there. Owns the HTTP
// client (pools), the server's configuration, the session and its heartbeat, the session's
// counters, the credential (API key or JWT with its refresh), telemetry, the log, and a registry
// of background tasks (future polls) that `shutdown()` cancels, so nothing outlives the
// ServiceClient.
#pragma once

#include "api/execute_with_retries.hpp"
#include "http/client.hpp"

#include <tinker/log.hpp>
#include <tinker/service_client.hpp>
#include <tinker/types/session.hpp>
#include <tinker/types/telemetry.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace tinker::detail {

class ClientHolder : public std::enable_shared_from_this<ClientHolder> {
 public:
  /// Validates the options (throws tinker::error, invalid_configuration); does no I/O.
  static std::shared_ptr<ClientHolder> create(boost::asio::any_io_executor executor, ServiceClientOptions options);
  ~ClientHolder();
  ClientHolder(const ClientHolder&) = delete;
  ClientHolder& operator=(const ClientHolder&) = delete;

  boost::asio::any_io_executor executor() const noexcept;
  http::HttpClient& http() noexcept;
  const ServiceClientOptions& options() const noexcept;
  void log(LogLevel level, std::string_view message) const;

  /// Session-less bootstrap (spec 10.2): client/config, then auth/token when the server enables
  /// JWTs (and its refresh loop), then dynamic_config. Single flight: concurrent callers share
  /// one bootstrap; a failed bootstrap is retried by the next caller.
  boost::asio::awaitable<boost::system::error_code> ensure_config(diagnostics& diag);
  /// The server's client/config (valid after ensure_config succeeded).
  const ClientConfigResponse& config() const noexcept;

  /// Session-ful bootstrap (spec 10.1): ensure_config, then create_session (tags, user
  /// metadata, sdk_version, project id; the server's info/warning/error messages are logged),
  /// then the heartbeat (every 10 s; a warning once failures have lasted 120 s) and telemetry.
  boost::asio::awaitable<boost::system::error_code> ensure_session(diagnostics& diag);
  /// Empty before ensure_session succeeded. Safe to read from any thread.
  std::string session_id() const;

  /// The session's counters (spec 13.2).
  std::int64_t next_model_seq_id() noexcept;
  std::int64_t next_sampling_seq_id() noexcept;

  /// Layer-2 settings with this holder's billing-pause state (spec 5.2, 5.5).
  api::LayerTwoSettings layer_two() noexcept;
  api::BillingPause& billing() noexcept;

  /// Background tasks (future polls): `cancel` is called once by shutdown(). Returns an id for
  /// unregister_task (call it when the task ends by itself).
  std::uint64_t register_task(std::function<void()> cancel);
  void unregister_task(std::uint64_t id) noexcept;
  bool shutting_down() const noexcept;

  /// Queues one telemetry event (spec 15); a no-op when telemetry is off.
  void telemetry(TelemetryEvent event);

  /// Stops the heartbeat, the JWT refresh and the telemetry loop (flushing what it can without
  /// waiting), cancels every registered task, and shuts the HTTP client down. Idempotent.
  void shutdown();

 private:
  class Impl;
  explicit ClientHolder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tinker::detail
