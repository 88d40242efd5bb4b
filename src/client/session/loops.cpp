// The holder's background loops: session heartbeat (doc/protocol.md#endpoints), JWT refresh
// (doc/protocol.md#authentication) and telemetry (doc/protocol.md#telemetry). Each is a named coroutine holding a
// weak_ptr to the holder — it locks it only while working, never while sleeping — and the holder's Lifetime, which
// shutdown() stops.
#include "api/endpoints.hpp"
#include "client/session/holder_impl.hpp"
#include "http/observer.hpp"

#include <tinker/version.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace tinker::client::session {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

std::string seconds_text(steady_clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + " s";
}

std::string failure_text(error_code ec, const diagnostics& diag) {
  std::string text = ec.message();
  if (!diag.message.empty()) text += ": " + diag.message;
  return text;
}

// doc/observability.md: one event per failed heartbeat (the lines are the loop's own).
void report_heartbeat_failure(const ClientHolder& holder, std::string_view session_id,
                              steady_clock::duration failing_for, const std::string& reason, bool warning) {
  HeartbeatFailing event;
  event.session_id = session_id;
  event.failing_for = std::chrono::duration_cast<milliseconds>(failing_for);
  const std::string redacted = holder.observer().redact(reason);
  event.reason = redacted;
  event.warning = warning;
  holder.observer().heartbeat_failing(event);
}

// Delay until the next JWT refresh: `lead` before exp; the retry interval after a failure or
// when exp is unknown. Choice: at least 1 s, so a token shorter-lived than the lead does not
// make the loop spin.
milliseconds jwt_refresh_delay(const ClientHolder::Impl& impl) {
  const milliseconds retry = impl.timing.jwt_retry;
  if (impl.jwt_refresh_failed || !impl.jwt_claims || !impl.jwt_claims->exp) return retry;
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const auto refresh_at = std::chrono::seconds(*impl.jwt_claims->exp) - impl.timing.jwt_refresh_lead;
  const auto delay = std::chrono::duration_cast<milliseconds>(refresh_at - now);
  return std::max(delay, milliseconds(1000));
}

TelemetryRequest telemetry_request(const ClientHolder::Impl& impl, const TelemetryState& state,
                                   std::vector<TelemetryEvent> batch) {
  std::string session = impl.current_session_id();
  if (session.empty()) session = state.sessionless_id;
  return TelemetryRequest(std::move(batch), telemetry_platform(), protocol_version, std::move(session),
                          telemetry_process_uuid());
}

// Sends one batch until it is accepted (every retry interval, doc/protocol.md#telemetry). A send in flight runs to
// its end even when the holder shuts down (only the final flush's deadline stops it: state.sends); a failure after
// the shutdown is not retried here. False when not sent: the caller puts the batch back for the final flush.
asio::awaitable<bool> send_batch(std::weak_ptr<ClientHolder> weak, std::shared_ptr<Lifetime> lifetime,
                                 std::shared_ptr<TelemetryState> state, std::vector<TelemetryEvent> batch) {
  for (;;) {
    milliseconds retry{};
    {
      std::shared_ptr<ClientHolder> holder = weak.lock();
      if (!holder) co_return false;
      ClientHolder::Impl& impl = holder->impl();
      const TelemetryRequest request = telemetry_request(impl, *state, batch);
      diagnostics diag;
      auto operation = api::telemetry(holder->http(), request, diag);
      const std::optional<error_code> outcome = co_await run_unless_stopped(state->sends, std::move(operation));
      if (!outcome) co_return false;
      if (!*outcome) co_return true;
      holder->log(LogLevel::debug, "sending telemetry failed (" + failure_text(*outcome, diag) + "); will retry");
      if (lifetime->stopped()) co_return false;
      retry = impl.timing.telemetry_retry_interval;
    }
    if (!co_await sleep_unless_stopped(lifetime, retry)) co_return false;
  }
}

// The batch the loop has in flight is done: the final flush may be waiting for it.
void batch_done(TelemetryState& state) {
  state.sending = false;
  state.idle->cancel();
}

}  // namespace

asio::awaitable<void> heartbeat_loop(std::weak_ptr<ClientHolder> weak, std::shared_ptr<Lifetime> lifetime,
                                     std::string session_id) {
  auto last_success = steady_clock::now();
  bool warned = false;
  for (;;) {
    milliseconds interval{};
    if (auto holder = weak.lock()) {
      interval = holder->timing().heartbeat_interval;
    } else {
      co_return;
    }
    if (!co_await sleep_unless_stopped(lifetime, interval)) co_return;

    std::shared_ptr<ClientHolder> holder = weak.lock();
    if (!holder) co_return;
    const SessionHeartbeatRequest request(session_id);
    diagnostics diag;
    auto operation = api::session_heartbeat(holder->http(), request, diag);
    const std::optional<error_code> outcome = co_await run_unless_stopped(lifetime, std::move(operation));
    if (!outcome) co_return;
    const auto now = steady_clock::now();
    if (!*outcome) {
      if (warned) {
        holder->log(LogLevel::info, "session heartbeat recovered after failing for " +
                                        seconds_text(now - last_success) + " (session " + session_id + ")");
      }
      warned = false;
      last_success = now;
      continue;
    }
    // doc/protocol.md#endpoints: failures are ignored until none has succeeded for 120 s; then every failure warns.
    const auto failing_for = now - last_success;
    if (holder->observer().watches_events()) {
      report_heartbeat_failure(*holder, session_id, failing_for, failure_text(*outcome, diag),
                               failing_for >= holder->timing().heartbeat_warning_after);
    }
    if (failing_for >= holder->timing().heartbeat_warning_after) {
      holder->log(LogLevel::warning, "session heartbeat failing for " + seconds_text(failing_for) + " (" +
                                         failure_text(*outcome, diag) + "); the session " + session_id +
                                         " will be terminated by the server if this continues");
      warned = true;
    } else {
      holder->log(LogLevel::debug, "session heartbeat failed (" + failure_text(*outcome, diag) + ")");
    }
  }
}

asio::awaitable<void> dynamic_config_loop(std::weak_ptr<ClientHolder> weak, std::shared_ptr<Lifetime> lifetime) {
  for (;;) {
    milliseconds interval{};
    if (auto holder = weak.lock()) {
      const ClientHolder::Impl& impl = holder->impl();
      interval = std::max(milliseconds(std::chrono::seconds(impl.dynamic.refresh_interval_sec)),
                          impl.timing.dynamic_config_min_interval);
    } else {
      co_return;
    }
    if (!co_await sleep_unless_stopped(lifetime, interval)) co_return;
    std::shared_ptr<ClientHolder> holder = weak.lock();
    if (!holder || holder->shutting_down()) co_return;
    ClientHolder::Impl& impl = holder->impl();
    DynamicConfigResponse fetched;
    diagnostics diag;
    auto operation = api::dynamic_config(*impl.http, fetched, diag, holder->retry_call(), /*retry_call=*/false);
    const std::optional<error_code> outcome = co_await run_unless_stopped(lifetime, std::move(operation));
    if (!outcome) co_return;
    if (*outcome) {
      holder->log(LogLevel::debug, "refreshing the dynamic client config failed (" + failure_text(*outcome, diag) +
                                       "); keeping the last one");
      continue;
    }
    impl.dynamic = fetched;
  }
}

asio::awaitable<void> jwt_refresh_loop(std::weak_ptr<ClientHolder> weak, std::shared_ptr<Lifetime> lifetime) {
  for (;;) {
    milliseconds delay{};
    if (auto holder = weak.lock()) {
      delay = jwt_refresh_delay(holder->impl());
    } else {
      co_return;
    }
    if (!co_await sleep_unless_stopped(lifetime, delay)) co_return;
    std::shared_ptr<ClientHolder> holder = weak.lock();
    if (!holder || holder->shutting_down()) co_return;
    auto operation = refresh_jwt(holder);
    const std::optional<error_code> outcome = co_await run_unless_stopped(lifetime, std::move(operation));
    if (!outcome) co_return;
  }
}

asio::awaitable<void> telemetry_loop(std::weak_ptr<ClientHolder> weak, std::shared_ptr<Lifetime> lifetime,
                                     std::shared_ptr<TelemetryState> state) {
  for (;;) {
    if (!state->flush_requested) {
      if (auto holder = weak.lock()) {
        state->wake->expires_after(holder->timing().telemetry_flush_interval);
      } else {
        co_return;
      }
      if (!co_await wait_unless_stopped(lifetime, state->wake)) co_return;
    }
    state->flush_requested = false;
    while (!state->queue.empty()) {
      if (lifetime->stopped()) co_return;  // final_telemetry_flush sends the rest
      std::vector<TelemetryEvent> batch = state->queue.take_batch();
      state->sending = true;
      const bool sent = co_await send_batch(weak, lifetime, state, batch);
      if (!sent) state->queue.put_back(std::move(batch));
      batch_done(*state);
      if (!sent) co_return;
    }
  }
}

asio::awaitable<void> final_telemetry_flush(std::shared_ptr<ClientHolder> holder,
                                            std::shared_ptr<TelemetryState> state) {
  ClientHolder::Impl& impl = holder->impl();
  // Its own deadline: the whole flush, including the loop's batch in flight, gets one telemetry
  // timeout, then whatever is left is dropped.
  asio::steady_timer expiry(impl.executor, impl.options.client.timeouts.telemetry);
  expiry.async_wait([state](error_code ec) {
    if (ec == asio::error::operation_aborted) return;
    state->sends->stop();
    state->idle->cancel();
  });
  while (state->sending && !state->sends->stopped()) {
    co_await state->idle->async_wait(asio::as_tuple(asio::use_awaitable));
  }
  while (!state->queue.empty() && !state->sends->stopped()) {
    const TelemetryRequest request = telemetry_request(impl, *state, state->queue.take_batch());
    diagnostics diag;
    auto operation = api::telemetry(*impl.http, request, diag);
    const std::optional<error_code> outcome = co_await run_unless_stopped(state->sends, std::move(operation));
    if (!outcome || *outcome) break;
  }
  expiry.cancel();
  end_final_task(*holder);
}

void start_heartbeat(const std::shared_ptr<ClientHolder>& holder, std::string session_id) {
  ClientHolder::Impl& impl = holder->impl();
  // Its own stop signal: finishing the session stops the heartbeat alone (finish.cpp); shutdown
  // stops it with the rest.
  impl.heartbeat_lifetime = std::make_shared<Lifetime>(impl.executor);
  asio::co_spawn(impl.executor, heartbeat_loop(holder, impl.heartbeat_lifetime, std::move(session_id)), asio::detached);
}

void start_dynamic_config_refresh(const std::shared_ptr<ClientHolder>& holder) {
  ClientHolder::Impl& impl = holder->impl();
  asio::co_spawn(impl.executor, dynamic_config_loop(holder, impl.lifetime), asio::detached);
}

void start_jwt_refresh(const std::shared_ptr<ClientHolder>& holder) {
  ClientHolder::Impl& impl = holder->impl();
  if (impl.jwt_loop_started) return;
  impl.jwt_loop_started = true;
  asio::co_spawn(impl.executor, jwt_refresh_loop(holder, impl.lifetime), asio::detached);
}

void start_telemetry(const std::shared_ptr<ClientHolder>& holder) {
  ClientHolder::Impl& impl = holder->impl();
  if (!impl.telemetry || impl.telemetry->loop_running) return;
  impl.telemetry->loop_running = true;
  asio::co_spawn(impl.executor, telemetry_loop(holder, impl.lifetime, impl.telemetry), asio::detached);
}

}  // namespace tinker::client::session
