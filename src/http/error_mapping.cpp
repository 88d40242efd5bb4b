#include "http/error_mapping.hpp"

#include "core/ascii.hpp"
#include "core/wire/json_reader.hpp"
#include "http/retry_policy.hpp"

#include <boost/json/value.hpp>

#include <array>
#include <exception>
#include <optional>

namespace tinker::http {
namespace {

namespace json = boost::json;

constexpr std::string_view redacted_marker = "<redacted>";
constexpr std::size_t min_secret_size = 4;
constexpr std::size_t excerpt_bytes = 512;
constexpr std::size_t text_message_bytes = 200;
// Structured messages (a FastAPI 422 "detail" list) are worth more room than a stray first
// line, but what() must stay readable.
constexpr std::size_t json_message_bytes = 1024;
// Bigger bodies are not an error document worth parsing (a protocol error on a result body).
constexpr std::size_t max_parsed_body = 1024 * 1024;

bool redactable(std::string_view secret) noexcept {
  return secret.size() >= min_secret_size;
}

class Utf8Char {
 public:
  std::size_t size = 0;  ///< 0: not valid UTF-8 at this position
  char32_t code_point = 0;
};

// The well-formed UTF-8 sequence starting at `at` (RFC 3629: no overlongs, surrogates or code
// points above U+10FFFF), or size 0.
Utf8Char decode_utf8(std::string_view s, std::size_t at) noexcept {
  const auto lead = static_cast<unsigned char>(s[at]);
  if (lead < 0x80) return {1, lead};
  // Sequence length, payload bits of the lead byte and the smallest code point of that length.
  std::size_t size = 4;
  char32_t cp = lead & 0x07;
  char32_t min = 0x10000;
  if (lead >= 0xC2 && lead <= 0xDF) {
    size = 2;
    cp = lead & 0x1F;
    min = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    size = 3;
    cp = lead & 0x0F;
    min = 0x800;
  } else if (lead < 0xF0 || lead > 0xF4) {
    return {};  // continuation byte, C0/C1 (always overlong) or F5..FF
  }
  if (s.size() - at < size) return {};
  for (std::size_t i = 1; i < size; ++i) {
    const auto b = static_cast<unsigned char>(s[at + i]);
    if ((b & 0xC0) != 0x80) return {};
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {};
  return {size, cp};
}

bool is_control(char32_t cp) noexcept {
  return (cp < 0x20 && cp != '\n' && cp != '\t') || (cp >= 0x7F && cp <= 0x9F);
}

RequestErrorCategory category_of(const json::object& body) {
  const json::value* category = body.if_contains("category");
  if (category == nullptr || !category->is_string()) return RequestErrorCategory::unknown;
  // The category strings are lowercase; anything else is "unknown", as in the Python SDK.
  if (category->get_string() == "user") return RequestErrorCategory::user;
  if (category->get_string() == "server") return RequestErrorCategory::server;
  return RequestErrorCategory::unknown;
}

std::string text_of(const json::value& v) {
  if (v.is_string()) return std::string(v.get_string());
  std::string out;
  wire::write_value(v, out);
  return out;
}

const json::value* non_null(const json::object& body, std::string_view key) {
  const json::value* v = body.if_contains(key);
  return v != nullptr && !v->is_null() ? v : nullptr;
}

// The message of a JSON error document: "detail" (FastAPI), "error" (a failed future) or "message";
// any other document is shown whole. nullopt when the body is not JSON.
std::optional<std::string> json_message(std::string_view body, diagnostics& d) {
  if (body.size() > max_parsed_body || !ascii::trim(body).starts_with('{')) return std::nullopt;
  json::value doc;
  try {
    doc = wire::parse_json(body);
  } catch (const std::exception&) {
    return std::nullopt;  // not JSON after all: the first line will do
  }
  const json::object& object = doc.get_object();
  if (non_null(object, "error") != nullptr) d.category = category_of(object);
  for (std::string_view key : {"detail", "error", "message"}) {
    if (const json::value* v = non_null(object, key)) return text_of(*v);
  }
  return text_of(doc);
}

std::string first_line(std::string_view body, std::string_view secret) {
  body = ascii::trim(body);
  body = ascii::trim(body.substr(0, body.find('\n')));
  // Trimmed again: the cut may leave a space at the end.
  return std::string(ascii::trim(printable_prefix(body, text_message_bytes, secret)));
}

std::string request_id_of(const Response& r, std::string_view secret) {
  for (std::string_view name : {"x-request-id", "request-id", "x-amzn-requestid"}) {
    const std::string_view value = ascii::trim(r.header(name));
    if (!value.empty()) return printable_prefix(value, text_message_bytes, secret);
  }
  return {};
}

}  // namespace

std::string redact(std::string text, std::string_view secret) {
  if (!redactable(secret)) return text;
  for (std::size_t at = text.find(secret); at != std::string::npos;
       at = text.find(secret, at + redacted_marker.size())) {
    text.replace(at, secret.size(), redacted_marker);
  }
  return text;
}

std::string printable_prefix(std::string_view text, std::size_t max_bytes, std::string_view secret) {
  const bool redacting = redactable(secret);
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    if (redacting && text.substr(at).starts_with(secret)) {
      if (out.size() + redacted_marker.size() > max_bytes) break;
      out += redacted_marker;
      at += secret.size();
      continue;
    }
    const Utf8Char c = decode_utf8(text, at);
    const bool printable = c.size != 0 && !is_control(c.code_point);
    const std::size_t produced = printable ? c.size : 1;
    if (out.size() + produced > max_bytes) break;
    if (printable) {
      out.append(text.substr(at, c.size));
    } else {
      out += '?';
    }
    at += c.size != 0 ? c.size : 1;
  }
  return out;
}

void fill_diagnostics(const Response& r, diagnostics& d, std::string_view secret,
                      std::chrono::system_clock::time_point now, std::chrono::milliseconds max_hint) {
  d = diagnostics{};
  d.http_status = r.status;
  d.request_id = request_id_of(r, secret);
  if (std::optional<std::string> message = json_message(r.body, d)) {
    d.message = printable_prefix(*message, json_message_bytes, secret);
  } else {
    d.message = first_line(r.body, secret);
  }
  d.retry_after = server_retry_hint(r, now, max_hint);
  d.body_excerpt = printable_prefix(r.body, excerpt_bytes, secret);
}

boost::system::error_code error_for_status(int status) noexcept {
  return make_error_code(errc_from_http_status(status));
}

boost::system::error_code attempt_error(const boost::system::error_code& transport_error, int status,
                                        bool accept_redirect) noexcept {
  if (transport_error) return transport_error;
  if (status < 300 || (status < 400 && accept_redirect)) return {};
  return error_for_status(status);
}

boost::system::error_code attempt_error(const boost::system::error_code& transport_error, const Response& response,
                                        bool accept_redirect) noexcept {
  if (!transport_error && response.status == 400 && response.body.empty()) {
    return make_error_code(errc::connection_failed);
  }
  return attempt_error(transport_error, response.status, accept_redirect);
}

}  // namespace tinker::http
