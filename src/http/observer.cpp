// Observer: the log lines and events of doc/observability.md, and their redaction.
#include "http/observer.hpp"

#include "http/error_mapping.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>

namespace tinker {

const char* to_string(RetryLayer layer) noexcept {
  switch (layer) {
    case RetryLayer::transport: return "transport";
    case RetryLayer::call: return "call";
    case RetryLayer::sampling: return "sampling";
    case RetryLayer::future_poll: return "future_poll";
  }
  return "unknown";
}

const char* to_string(BackoffCause cause) noexcept {
  switch (cause) {
    case BackoffCause::rate_limited: return "rate_limited";
    case BackoffCause::payment_required: return "payment_required";
  }
  return "unknown";
}

const char* to_string(FutureState state) noexcept {
  switch (state) {
    case FutureState::waiting: return "waiting";
    case FutureState::paused: return "paused";
    case FutureState::complete: return "complete";
    case FutureState::failed: return "failed";
  }
  return "unknown";
}

}  // namespace tinker

namespace tinker::http {
namespace {

constexpr std::string_view redacted = "<redacted>";

bool is_token_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// The end of the run of token characters (and dots, when `dots`) starting at `at`.
std::size_t token_end(std::string_view text, std::size_t at, bool dots) noexcept {
  while (at < text.size() && (is_token_char(text[at]) || (dots && text[at] == '.'))) ++at;
  return at;
}

// Replaces every token starting with `prefix` whose body is at least `min_body` characters long.
void redact_prefixed(std::string& text, std::string_view prefix, std::size_t min_body, bool dots) {
  for (std::size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + 1)) {
    if (at > 0 && is_token_char(text[at - 1])) continue;  // inside a longer word
    const std::size_t end = token_end(text, at + prefix.size(), dots);
    if (end - at - prefix.size() < min_body) continue;
    text.replace(at, end - at, redacted);
  }
}

// Query parameters whose values say nothing secret and help reading a log.
bool harmless_query_key(std::string_view key) noexcept {
  static constexpr std::array<std::string_view, 7> keys = {"limit",    "offset",    "order",       "page",
                                                           "revision", "recursive", "access_scope"};
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

std::string milliseconds_text(std::chrono::microseconds duration) {
  const auto micros = duration.count();
  std::string text = std::to_string(micros / 1000);
  text += '.';
  text += static_cast<char>('0' + (micros / 100) % 10);
  return text;
}

}  // namespace

Observer::Observer(LogSink sink, LogLevel level, EventHook hook)
    : sink_(std::move(sink)),
      level_(level),
      hook_(std::move(hook)),
      has_sink_(static_cast<bool>(sink_)),
      has_hook_(static_cast<bool>(hook_)),
      exchanges_(has_hook_ || logs(LogLevel::debug)),
      events_(has_hook_ || logs(LogLevel::info)) {
  if (const char* token = std::getenv("HF_TOKEN"); token != nullptr && *token != '\0') {
    secrets_.emplace_back(token);
  }
}

void Observer::log(LogLevel level, std::string_view message) const {
  if (!logs(level)) return;
  try {
    sink_(level, redact(std::string(message)));
  } catch (...) {
    // A failing user sink must not take the client down.
  }
}

void Observer::emit(const Event& event) const {
  if (!has_hook_) return;
  try {
    hook_(event);
  } catch (...) {
    // Nor a failing hook.
  }
}

void Observer::add_secret(const Secret& secret) {
  if (secret.reveal().size() < 4) return;  // as http::redact: shorter ones would shred ordinary text
  const std::lock_guard lock(secrets_mutex_);
  if (std::find(secrets_.begin(), secrets_.end(), secret.reveal()) != secrets_.end()) return;
  constexpr std::size_t max_secrets = 32;  // a long-running client refreshes its JWT every hour or so
  if (secrets_.size() >= max_secrets) secrets_.erase(secrets_.begin() + 1);
  secrets_.push_back(secret.reveal());
}

std::string Observer::redact(std::string text) const {
  {
    const std::lock_guard lock(secrets_mutex_);
    for (const std::string& secret : secrets_) text = http::redact(std::move(text), secret);
  }
  return redact_credential_shapes(std::move(text));
}

std::string Observer::event_path(std::string_view target) const {
  return redact(std::string(path_of(target)));
}

void Observer::request_finished(const RequestFinished& event, std::string_view target) const {
  if (logs(LogLevel::debug)) {
    std::string line = "http ";
    line += event.method;
    line += ' ';
    line += redact_query(target);
    line += " status=" + std::to_string(event.status);
    if (!event.error.empty()) {
      line += " error=\"";
      line += event.error;
      line += '"';
    }
    line += " ms=" + milliseconds_text(event.duration);
    line += " request_id=";
    line += event.request_id.empty() ? std::string_view("-") : event.request_id;
    line += " attempt=" + std::to_string(event.attempt);
    line += " sent=" + std::to_string(event.bytes_sent);
    line += " received=" + std::to_string(event.bytes_received);
    log(LogLevel::debug, line);
  }
  emit(event);
}

void Observer::retry_scheduled(const RetryScheduled& event) const {
  if (logs(LogLevel::info)) {
    std::string line = "retry ";
    line += to_string(event.layer);
    line += ' ';
    line += event.path;
    line += " attempt=" + std::to_string(event.attempt);
    line += " in_ms=" + std::to_string(event.delay.count());
    line += " reason=\"";
    line += event.reason;
    line += '"';
    log(LogLevel::info, line);
  }
  emit(event);
}

namespace {

// "back-off <started|ended> <layer> <path> cause=<cause> <duration_key>=<ms>": both ends of a wait.
template <class Backoff>
std::string backoff_line(std::string_view verb, const Backoff& event, std::string_view duration_key,
                         std::chrono::milliseconds duration) {
  std::string line = "back-off ";
  line += verb;
  line += ' ';
  line += to_string(event.layer);
  line += ' ';
  line += event.path;
  line += " cause=";
  line += to_string(event.cause);
  line += ' ';
  line += duration_key;
  line += '=' + std::to_string(duration.count());
  return line;
}

}  // namespace

void Observer::backoff_started(const BackoffStarted& event) const {
  if (logs(LogLevel::info)) log(LogLevel::info, backoff_line("started", event, "for_ms", event.delay));
  emit(event);
}

void Observer::backoff_ended(const BackoffEnded& event) const {
  if (logs(LogLevel::info)) log(LogLevel::info, backoff_line("ended", event, "waited_ms", event.waited));
  emit(event);
}

// Pauses are the news (info); the rest of a future's life is debug detail.
void Observer::future_state_changed(const FutureStateChanged& event) const {
  const bool paused_or_resumed = event.state == FutureState::paused || event.queue_state != QueueState::active;
  const LogLevel level = paused_or_resumed ? LogLevel::info : LogLevel::debug;
  if (logs(level)) {
    std::string line = "future ";
    line += event.request_id;
    line += ' ';
    line += event.operation;
    line += " state=";
    line += to_string(event.state);
    line += " queue=";
    line += to_string(event.queue_state);
    if (!event.queue_state_reason.empty()) {
      line += " reason=\"";
      line += event.queue_state_reason;
      line += '"';
    }
    if (!event.error.empty()) {
      line += " error=\"";
      line += event.error;
      line += '"';
    }
    line += " waited_ms=" + std::to_string(event.waited.count());
    if (event.state == FutureState::paused) line += " (waiting in a paused queue)";
    log(level, line);
  }
  emit(event);
}

// The heartbeat loop writes its own lines (debug, then warning after 120 s): only the event here.
void Observer::heartbeat_failing(const HeartbeatFailing& event) const {
  emit(event);
}

std::string_view path_of(std::string_view target) noexcept {
  return target.substr(0, target.find('?'));
}

std::string redact_query(std::string_view target) {
  const std::size_t question = target.find('?');
  if (question == std::string_view::npos) return std::string(target);
  std::string out(target.substr(0, question + 1));
  std::string_view query = target.substr(question + 1);
  const std::size_t fragment = query.find('#');
  query = query.substr(0, fragment);
  bool first = true;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const std::size_t equals = pair.find('=');
    const std::string_view key = pair.substr(0, equals);
    if (!first) out += '&';
    first = false;
    out += key;
    if (equals == std::string_view::npos) continue;
    out += '=';
    out += harmless_query_key(key) ? pair.substr(equals + 1) : std::string_view("***");
  }
  return out;
}

std::string redact_credential_shapes(std::string text) {
  redact_prefixed(text, "eyJ", 16, /*dots=*/true);  // a JWT: base64url of '{"' then two more dotted parts
  redact_prefixed(text, "hf_", 20, false);
  redact_prefixed(text, "tml-", 16, false);
  return text;
}

std::string failure_reason(int status, boost::system::error_code ec, std::string_view detail) {
  std::string reason;
  if (status != 0) {
    reason = "HTTP " + std::to_string(status) + " (" + ec.message() + ")";
  } else {
    reason = ec.message();
  }
  if (!detail.empty()) {
    reason += ": ";
    reason += detail.substr(0, 200);
  }
  return reason;
}

std::chrono::microseconds elapsed_since(std::chrono::steady_clock::time_point start) noexcept {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
}

}  // namespace tinker::http
