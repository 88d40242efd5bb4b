#include <tinker/error.hpp>

#include <string>

namespace tinker {
namespace {

class TinkerErrorCategory final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "tinker"; }

  std::string message(int value) const override {
    switch (static_cast<errc>(value)) {
      case errc::connection_failed: return "connection error";
      case errc::timeout: return "request timed out";
      case errc::cancelled: return "operation cancelled";
      case errc::tls_error: return "TLS error";
      case errc::bad_request: return "bad request (HTTP 400)";
      case errc::authentication_failed: return "authentication failed (HTTP 401)";
      case errc::payment_required: return "billing hold (HTTP 402)";
      case errc::permission_denied: return "permission denied (HTTP 403)";
      case errc::not_found: return "not found (HTTP 404)";
      case errc::request_timeout: return "request timeout (HTTP 408)";
      case errc::conflict: return "conflict (HTTP 409)";
      case errc::gone: return "result no longer available (HTTP 410)";
      case errc::unprocessable_entity: return "unprocessable entity (HTTP 422)";
      case errc::rate_limited: return "rate limited (HTTP 429)";
      case errc::http_error: return "unexpected HTTP status";
      case errc::server_error: return "server error (HTTP 5xx)";
      case errc::protocol_error: return "protocol error";
      case errc::decode_error: return "malformed response";
      case errc::response_too_large: return "response too large";
      case errc::request_failed: return "operation failed";
      case errc::invalid_argument: return "invalid argument";
      case errc::invalid_configuration: return "invalid configuration";
      case errc::invalid_file: return "invalid file";
      case errc::io_error: return "file input/output failed";
    }
    return "unknown tinker error " + std::to_string(value);
  }
};

std::string describe(const boost::system::error_code& code, const diagnostics& diag) {
  std::string text = code.message();
  if (diag.http_status != 0 && text.find("HTTP") == std::string::npos) {
    text += " (HTTP " + std::to_string(diag.http_status) + ")";
  }
  if (diag.category) text += std::string(" [category: ") + to_string(*diag.category) + "]";
  if (!diag.message.empty()) text += ": " + diag.message;
  if (!diag.request_id.empty()) text += " (request id " + diag.request_id + ")";
  return text;
}

}  // namespace

const boost::system::error_category& error_category() noexcept {
  static const TinkerErrorCategory category;
  return category;
}

const char* to_string(RequestErrorCategory category) noexcept {
  switch (category) {
    case RequestErrorCategory::user: return "user";
    case RequestErrorCategory::server: return "server";
    case RequestErrorCategory::unknown: break;
  }
  return "unknown";
}

errc errc_from_http_status(int status) noexcept {
  switch (status) {
    case 400: return errc::bad_request;
    case 401: return errc::authentication_failed;
    case 402: return errc::payment_required;
    case 403: return errc::permission_denied;
    case 404: return errc::not_found;
    case 408: return errc::request_timeout;
    case 409: return errc::conflict;
    case 410: return errc::gone;
    case 422: return errc::unprocessable_entity;
    case 429: return errc::rate_limited;
    default: return status >= 500 ? errc::server_error : errc::http_error;
  }
}

void diagnostics::clear() {
  *this = diagnostics{};
}

bool diagnostics::empty() const noexcept {
  return *this == diagnostics{};
}

error::error(boost::system::error_code code, diagnostics diag)
    : boost::system::system_error(code), diag_(std::move(diag)), what_(describe(code, diag_)) {}

error::error(errc code, std::string message)
    : error(make_error_code(code), [&] {
        diagnostics d;
        d.message = std::move(message);
        return d;
      }()) {}

void throw_on_error(boost::system::error_code code, const diagnostics& diag) {
  if (code) throw error(code, diag);
}

}  // namespace tinker
