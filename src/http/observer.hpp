// What the SDK tells about itself (doc/observability.md): log lines to the holder's sink at
// TINKER_LOG's level, and typed events to ServiceClientOptions::on_event. One per ClientHolder,
// shared by its HTTP clients and the retry loops above them; io thread only, except the
// secrets list (mutex).
//
// Cheap when quiet: callers ask watches_exchanges() / watches_events() first (a load and a
// branch) and build nothing when it says no. Every line goes through redact() on its way out, so
// no credential the observer knows (API key, JWTs, HF_TOKEN), and nothing shaped like one (a JWT,
// an "hf_" token, a sensitive URL query value), reaches the sink.
#pragma once

#include <tinker/config.hpp>
#include <tinker/error.hpp>
#include <tinker/events.hpp>
#include <tinker/log.hpp>

#include <chrono>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::http {

class Observer {
 public:
  /// An empty `sink` logs nothing; `level` drops the lines above it; an empty `hook` gets nothing.
  /// HF_TOKEN, when set in the environment, is a secret from the start.
  Observer(LogSink sink, LogLevel level, EventHook hook);

  bool logs(LogLevel level) const noexcept {
    return level != LogLevel::off && level_ != LogLevel::off && level <= level_ && has_sink_;
  }
  bool hooked() const noexcept { return has_hook_; }
  /// Exchanges are reported (debug lines or the hook).
  bool watches_exchanges() const noexcept { return exchanges_; }
  /// Retries, back-offs, future states and heartbeats are reported (info lines or the hook).
  bool watches_events() const noexcept { return events_; }

  /// Writes a redacted line if `level` is logged; a throwing sink is ignored.
  void log(LogLevel level, std::string_view message) const;
  /// Calls the hook if there is one; a throwing hook is ignored.
  void emit(const Event& event) const;

  /// Redacts `secret` from every later line (a credential the SDK sends, e.g. a fresh JWT).
  void add_secret(const Secret& secret);
  /// `text` without the known secrets and without anything shaped like a credential.
  std::string redact(std::string text) const;
  /// The path of `target` (no query string), redacted: what events carry (an id in a path may be anything).
  std::string event_path(std::string_view target) const;

  // Each reports one event: a line at its level (debug for exchanges, info for the others) and
  // the event to the hook. Call them only when watches_exchanges() / watches_events() is true.
  /// `target` is the full origin-form target (query included: it is redacted for the line).
  void request_finished(const RequestFinished& event, std::string_view target) const;
  void retry_scheduled(const RetryScheduled& event) const;
  void backoff_started(const BackoffStarted& event) const;
  void backoff_ended(const BackoffEnded& event) const;
  void future_state_changed(const FutureStateChanged& event) const;
  void heartbeat_failing(const HeartbeatFailing& event) const;

 private:
  LogSink sink_;
  LogLevel level_;
  EventHook hook_;
  bool has_sink_;
  bool has_hook_;
  bool exchanges_;
  bool events_;
  mutable std::mutex secrets_mutex_;
  std::vector<std::string> secrets_;
};

/// `target` (a path with an optional query string) with the query cut off.
std::string_view path_of(std::string_view target) noexcept;

/// `target` with the value of every query parameter replaced by "***" except a few known to be
/// harmless (limit, offset, ...): signed URLs carry their signature and token there.
std::string redact_query(std::string_view target);

/// Replaces JWTs ("eyJ...x.y.z"), Hugging Face tokens ("hf_" + 20 or more letters and digits)
/// and Tinker API keys ("tml-" + 16 or more) in `text` with "<redacted>".
std::string redact_credential_shapes(std::string text);

/// The "HTTP 503 (server error)" / "timeout: connect to ... timed out" text of a failed attempt.
std::string failure_reason(int status, boost::system::error_code ec, std::string_view detail);

/// Milliseconds since `start` on the steady clock.
std::chrono::microseconds elapsed_since(std::chrono::steady_clock::time_point start) noexcept;

}  // namespace tinker::http
