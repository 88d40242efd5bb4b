// ClientHolder's state, shared by holder.cpp (lifecycle, counters, tasks, log, shutdown),
// bootstrap.cpp (config, credentials, JWT, session) and loops.cpp (heartbeat, JWT
// refresh, telemetry). Everything here lives on the io thread, except `session_id` (mutex).
#pragma once

#include "client/handles.hpp"
#include "client/session/credentials.hpp"
#include "client/session/holder.hpp"
#include "client/session/lifetime.hpp"
#include "client/session/telemetry_queue.hpp"
#include "http/observer.hpp"

#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <optional>

namespace tinker::client::session {

/// One in-progress bootstrap step that concurrent callers share (single flight). The leader
/// calls finish(); waiters wake from `done_timer` and read the outcome.
class Flight {
 public:
  explicit Flight(boost::asio::any_io_executor executor)
      : done_timer(std::move(executor), boost::asio::steady_timer::time_point::max()) {}

  void finish(boost::system::error_code code, const diagnostics& details) {
    done = true;
    ec = code;
    diag = details;
    done_timer.cancel();
  }

  bool done = false;
  boost::system::error_code ec;
  diagnostics diag;
  boost::asio::steady_timer done_timer;
};

/// Waits for `flight` to finish; its outcome, or cancelled if this waiter was cancelled first.
boost::asio::awaitable<boost::system::error_code> join_flight(std::shared_ptr<Flight> flight, diagnostics& diag);

/// The telemetry queue, the timer its loop sleeps on (cancelled to flush at once), and what the final flush at
/// shutdown needs to take over from the loop without losing or repeating a batch.
class TelemetryState {
 public:
  explicit TelemetryState(boost::asio::any_io_executor executor)
      : wake(std::make_shared<boost::asio::steady_timer>(executor)),
        idle(std::make_shared<boost::asio::steady_timer>(executor, boost::asio::steady_timer::time_point::max())),
        sends(std::make_shared<Lifetime>(executor)) {}

  TelemetryQueue queue;
  std::shared_ptr<boost::asio::steady_timer> wake;
  /// Cancelled when the loop's batch in flight is done, for the final flush waiting on it.
  std::shared_ptr<boost::asio::steady_timer> idle;
  /// Sends are stopped by this, not by the holder's lifetime: a batch in flight at shutdown is
  /// finished (bounded by the final flush's deadline), so its events are neither lost nor sent twice.
  std::shared_ptr<Lifetime> sends;
  bool sending = false;          ///< the loop has a batch in flight
  bool flush_requested = false;  ///< an error event arrived while the loop was busy
  bool loop_running = false;
  bool overflow_warned = false;
  std::int64_t next_index = 0;
  std::string
      sessionless_id;  ///< "sessionless-<uuid4>" until a session exists (doc/protocol.md#bootstrap-and-lifecycle)
  /// When SESSION_START was queued; SESSION_END reports the time since.
  std::optional<std::chrono::system_clock::time_point> session_started;
};

}  // namespace tinker::client::session

namespace tinker::detail {

class ClientHolder::Impl {
 public:
  Impl(boost::asio::any_io_executor executor_, ServiceClientOptions options_);

  boost::asio::any_io_executor executor;
  ServiceClientOptions options;
  /// Log lines (options.log, else stderr) and events (options.on_event), shared with the HTTP
  /// clients and the retry loops (doc/observability.md).
  std::shared_ptr<http::Observer> observer;
  Timing timing;
  /// Every request goes through `http`; client/config and auth/token go through `auth_http`
  /// (doc/protocol.md#pools-timeouts-and-throttles: their own transport) with the raw credential, so a JWT refresh
  /// never needs the credential of `http` changed twice.
  std::unique_ptr<http::HttpClient> http;
  std::unique_ptr<http::HttpClient> auth_http;
  std::shared_ptr<client::session::Lifetime> lifetime;
  api::BillingPause billing;
  std::unique_ptr<client::async::ByteBudget> fwdbwd_budget;    ///< made at first use
  std::unique_ptr<client::async::ByteBudget> response_budget;  ///< made at first use
  client::sampling::SampleTuning sample_tuning;
  std::unique_ptr<client::sampling::SampleDispatch> sample_dispatch;  ///< made at first use
  bool shutting_down = false;

  // Bootstrap (bootstrap.cpp).
  std::optional<ClientConfigResponse> config;
  DynamicConfigResponse dynamic;
  std::shared_ptr<client::session::Flight> config_flight;
  bool jwt_auth = false;
  std::optional<client::session::JwtClaims> jwt_claims;
  bool jwt_refresh_failed = false;
  bool jwt_loop_started = false;
  std::shared_ptr<client::session::Flight> refresh_flight;
  std::shared_ptr<client::session::Flight> session_flight;

  // Session.
  mutable std::mutex session_mutex;
  std::string session_id;  ///< guarded by session_mutex
  std::atomic<std::int64_t> model_seq{0};
  std::atomic<std::int64_t> sampling_seq{0};

  // Background tasks registered by clients.
  // The registered background tasks, oldest first (RegisteredTask's links).
  RegisteredTask* first_task = nullptr;
  RegisteredTask* last_task = nullptr;

  std::shared_ptr<client::session::TelemetryState> telemetry;  ///< null when telemetry is off

  // Finishing the session (finish.cpp, doc/service.md#finishing-a-session).
  /// A finish was started (explicitly or by shutdown): never a second one; ensure_session fails.
  bool finish_requested = false;
  ClientSessionFinishReason finish_reason;  ///< the reason that was sent (valid when finish_requested)
  /// What shutdown finishes with unless a finish was requested before: success, or errored when the
  /// ServiceClient was destroyed by an exception (set_shutdown_finish_reason).
  ClientSessionFinishReason shutdown_finish_reason;
  /// The heartbeat's own stop signal, so finishing stops it while the other loops go on.
  std::shared_ptr<client::session::Lifetime> heartbeat_lifetime;
  /// Requests still running after shutdown(): the last to end shuts the HTTP clients down.
  int final_tasks = 0;

  std::string current_session_id() const;
};

}  // namespace tinker::detail

namespace tinker::client::session {

// finish.cpp
/// The error of a call needing the session after it was finished (invalid_argument).
boost::system::error_code finished_session_error(const ClientHolder::Impl& impl, diagnostics& diag);
/// Marks the session finished and stops its heartbeat; the request to send, or nullopt when there
/// is no session to finish (never bootstrapped, or a finish was already requested).
std::optional<FinishSessionRequest> begin_finish(ClientHolder& holder, ClientSessionFinishReason reason,
                                                 std::optional<std::string> detail);
/// At shutdown: sends `request` once, within the telemetry timeout, then ends its final task
/// (end_final_task). Never waits longer, never retries.
boost::asio::awaitable<void> finish_at_shutdown(std::shared_ptr<ClientHolder> holder, FinishSessionRequest request);
/// One of the requests shutdown leaves running (final telemetry flush, finish) is done: the last
/// one shuts the HTTP clients down (holder.cpp).
void end_final_task(ClientHolder& holder);

// bootstrap.cpp
/// client/config, auth/token (JWT mode), dynamic_config: the body of ensure_config's leader.
boost::asio::awaitable<boost::system::error_code> bootstrap_config(std::shared_ptr<ClientHolder> holder,
                                                                   diagnostics& diag);
/// Fetches a JWT with the token credential and installs it (auth/token with call retries).
boost::asio::awaitable<boost::system::error_code> fetch_jwt(std::shared_ptr<ClientHolder> holder, diagnostics& diag);
/// Single-flight refresh shared by the refresh loop and the on-demand check.
boost::asio::awaitable<boost::system::error_code> refresh_jwt(std::shared_ptr<ClientHolder> holder);
/// create_session and what follows it: the body of ensure_session's leader.
boost::asio::awaitable<boost::system::error_code> bootstrap_session(std::shared_ptr<ClientHolder> holder,
                                                                    diagnostics& diag);

// loops.cpp: named coroutines spawned detached; each ends when its lifetime stops.
boost::asio::awaitable<void> heartbeat_loop(std::weak_ptr<ClientHolder> holder, std::shared_ptr<Lifetime> lifetime,
                                            std::string session_id);
boost::asio::awaitable<void> jwt_refresh_loop(std::weak_ptr<ClientHolder> holder, std::shared_ptr<Lifetime> lifetime);
boost::asio::awaitable<void> telemetry_loop(std::weak_ptr<ClientHolder> holder, std::shared_ptr<Lifetime> lifetime,
                                            std::shared_ptr<TelemetryState> state);
/// After shutdown: sends what is queued once, bounded by the telemetry timeout, then shuts the
/// HTTP clients down.
boost::asio::awaitable<void> final_telemetry_flush(std::shared_ptr<ClientHolder> holder,
                                                   std::shared_ptr<TelemetryState> state);

void start_heartbeat(const std::shared_ptr<ClientHolder>& holder, std::string session_id);
/// Re-fetches client/dynamic_config every max(refresh_interval_sec, 10 s) for session-ful
/// holders (doc/protocol.md#endpoints); a failure keeps the last good value.
void start_dynamic_config_refresh(const std::shared_ptr<ClientHolder>& holder);
void start_jwt_refresh(const std::shared_ptr<ClientHolder>& holder);
void start_telemetry(const std::shared_ptr<ClientHolder>& holder);

}  // namespace tinker::client::session
