#include "client/session/telemetry_report.hpp"

#include "client/session/holder_impl.hpp"
#include "client/training/state.hpp"

#include <cctype>
#include <cstdio>

namespace tinker::client::session {

namespace {

using boost::system::error_code;

const char* errc_name(errc value) noexcept {
  switch (value) {
    case errc::connection_failed: return "connection_failed";
    case errc::timeout: return "timeout";
    case errc::cancelled: return "cancelled";
    case errc::tls_error: return "tls_error";
    case errc::bad_request: return "bad_request";
    case errc::authentication_failed: return "authentication_failed";
    case errc::payment_required: return "payment_required";
    case errc::permission_denied: return "permission_denied";
    case errc::not_found: return "not_found";
    case errc::request_timeout: return "request_timeout";
    case errc::conflict: return "conflict";
    case errc::gone: return "gone";
    case errc::unprocessable_entity: return "unprocessable_entity";
    case errc::rate_limited: return "rate_limited";
    case errc::http_error: return "http_error";
    case errc::server_error: return "server_error";
    case errc::protocol_error: return "protocol_error";
    case errc::decode_error: return "decode_error";
    case errc::response_too_large: return "response_too_large";
    case errc::request_failed: return "request_failed";
    case errc::invalid_argument: return "invalid_argument";
    case errc::invalid_configuration: return "invalid_configuration";
    case errc::invalid_file: return "invalid_file";
    case errc::io_error: return "io_error";
  }
  return "unknown";
}

bool token_char(char c) noexcept {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
}

// The end of a token-shaped run starting at `begin` (letters, digits, '-', '_', '.').
std::size_t token_end(std::string_view text, std::size_t begin) noexcept {
  std::size_t end = begin;
  while (end < text.size() && token_char(text[end])) ++end;
  return end;
}

// True when `text` at `at` starts something shaped like a credential: a Tinker API key ("tml-"), a JWT ("eyJ") or a
// Hugging Face token ("hf_"), at the start of a word and at least 12 characters long.
bool credential_at(std::string_view text, std::size_t at) noexcept {
  if (at > 0 && token_char(text[at - 1])) return false;
  const std::string_view rest = text.substr(at);
  if (!rest.starts_with("tml-") && !rest.starts_with("eyJ") && !rest.starts_with("hf_")) return false;
  return token_end(text, at) - at >= 12;
}

std::string replace_all(std::string text, std::string_view secret) {
  if (secret.size() < 4) return text;
  for (std::size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 3)) {
    text.replace(at, secret.size(), "***");
  }
  return text;
}

// Bytes outside printable ASCII become '?': the text goes into a JSON string, which must be valid UTF-8.
std::string printable(std::string text) {
  for (char& c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x80 || (byte < 0x20 && c != '\n' && c != '\t')) c = '?';
  }
  return text;
}

TelemetryEvent envelope(TelemetryEventKind kind, Severity severity) {
  return TelemetryEvent(kind, std::string(), 0, severity, Timestamp{});
}

// The response body as Python's APIStatusError.body holds it: the JSON value when it is JSON, else the text.
RawJson body_value(const std::string& text) {
  try {
    return RawJson::parse(text);
  } catch (const error&) {
    return RawJson::string(text);
  }
}

// Python's GENERIC_EVENT "user_error": {error_type, message?, status_code?, body?} at WARNING.
TelemetryEvent user_error_event(const detail::ClientHolder& holder, error_code ec, const diagnostics& diag) {
  TelemetryEvent event = envelope(TelemetryEventKind::generic_event, Severity::warning);
  event.event_name = "user_error";
  JsonObject data;
  data.emplace("error_type", RawJson::string(error_type_name(ec)));
  const std::string message = scrub_secrets(holder, error(ec, diag).what());
  if (!message.empty()) data.emplace("message", RawJson::string(message));
  if (diag.http_status != 0) data.emplace("status_code", RawJson::integer(diag.http_status));
  if (!diag.body_excerpt.empty()) data.emplace("body", body_value(scrub_secrets(holder, diag.body_excerpt)));
  event.event_data = std::move(data);
  return event;
}

// Python's UNHANDLED_EXCEPTION: error_type and error_message at ERROR; no traceback (there is none to send).
TelemetryEvent exception_event(const detail::ClientHolder& holder, error_code ec, const diagnostics& diag) {
  TelemetryEvent event = envelope(TelemetryEventKind::unhandled_exception, Severity::error);
  event.error_type = error_type_name(ec);
  event.error_message = scrub_secrets(holder, error(ec, diag).what());
  return event;
}

}  // namespace

std::string python_timedelta_text(std::chrono::microseconds duration) {
  using namespace std::chrono;
  if (duration.count() < 0) duration = microseconds(0);  // a clock step backwards: report no time rather than garbage
  const auto total = duration.count();
  const long long micros = total % 1'000'000;
  long long seconds = total / 1'000'000;
  const long long days = seconds / 86'400;
  seconds %= 86'400;
  char clock[64];
  std::snprintf(clock, sizeof clock, "%lld:%02lld:%02lld", seconds / 3600, (seconds / 60) % 60, seconds % 60);
  std::string text;
  if (days != 0) text = std::to_string(days) + (days == 1 ? " day, " : " days, ");
  text += clock;
  if (micros != 0) {
    char fraction[16];
    std::snprintf(fraction, sizeof fraction, ".%06lld", micros);
    text += fraction;
  }
  return text;
}

bool is_user_error(error_code ec, const diagnostics& diag) noexcept {
  if (ec == errc::request_failed) return diag.category == RequestErrorCategory::user;
  return diag.http_status >= 400 && diag.http_status < 500 && diag.http_status != 408;
}

std::string error_type_name(error_code ec) {
  if (ec.category() == error_category())
    return "tinker::errc::" + std::string(errc_name(static_cast<errc>(ec.value())));
  return std::string(ec.category().name()) + ":" + std::to_string(ec.value());
}

std::string scrub_secrets(const detail::ClientHolder& holder, std::string_view text) {
  std::string scrubbed = replace_all(std::string(text), holder.options().client.api_key.reveal());
  std::string out;
  out.reserve(scrubbed.size());
  for (std::size_t at = 0; at < scrubbed.size();) {
    if (credential_at(scrubbed, at)) {
      out += "***";
      at = token_end(scrubbed, at);
      continue;
    }
    out += scrubbed[at++];
  }
  return printable(std::move(out));
}

void report_failure(detail::ClientHolder& holder, error_code ec, const diagnostics& diag, bool session_end) {
  if (!ec || ec == errc::cancelled || !holder.impl().telemetry) return;
  holder.telemetry(is_user_error(ec, diag) ? user_error_event(holder, ec, diag) : exception_event(holder, ec, diag));
  if (session_end) report_session_end(holder);
  holder.flush_telemetry();
}

void report_session_end(detail::ClientHolder& holder) {
  const std::shared_ptr<TelemetryState>& state = holder.impl().telemetry;
  if (!state || !state->session_started) return;
  TelemetryEvent event = envelope(TelemetryEventKind::session_end, Severity::info);
  const auto now = std::chrono::system_clock::now();
  event.timestamp = std::chrono::time_point_cast<std::chrono::microseconds>(now);
  event.duration =
      python_timedelta_text(std::chrono::duration_cast<std::chrono::microseconds>(now - *state->session_started));
  holder.telemetry(std::move(event));
}

}  // namespace tinker::client::session

namespace tinker::detail {

TelemetryInfo holder_telemetry(const ClientHolder& holder) {
  TelemetryInfo info;
  const std::shared_ptr<client::session::TelemetryState>& state = holder.impl().telemetry;
  if (!state) return info;
  info.enabled = true;
  info.session_id = holder.session_id();
  if (info.session_id.empty()) info.session_id = state->sessionless_id;
  info.process_uuid = client::session::telemetry_process_uuid();
  return info;
}

TelemetryInfo training_telemetry(const TrainingState& training) {
  return holder_telemetry(*training.holder);
}

}  // namespace tinker::detail
