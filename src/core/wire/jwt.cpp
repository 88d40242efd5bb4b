#include "core/wire/jwt.hpp"

#include "core/wire/base64url.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

namespace tinker::wire {

std::optional<JwtParts> split_jwt(std::string_view token) noexcept {
  const std::size_t first_dot = token.find('.');
  if (first_dot == std::string_view::npos) return std::nullopt;
  const std::size_t second_dot = token.find('.', first_dot + 1);
  if (second_dot == std::string_view::npos || token.find('.', second_dot + 1) != std::string_view::npos) {
    return std::nullopt;
  }
  JwtParts parts;
  parts.header = token.substr(0, first_dot);
  parts.payload = token.substr(first_dot + 1, second_dot - first_dot - 1);
  parts.signature = token.substr(second_dot + 1);
  parts.signed_part = token.substr(0, second_dot);
  return parts;
}

std::optional<boost::json::object> decode_jwt_payload(std::string_view encoded_payload) {
  const std::optional<std::string> payload = base64url_decode(encoded_payload);
  if (!payload) return std::nullopt;
  boost::system::error_code ec;
  boost::json::value parsed = boost::json::parse(*payload, ec);
  if (ec || !parsed.is_object()) return std::nullopt;
  return std::move(parsed.get_object());
}

std::optional<boost::json::object> jwt_claims(std::string_view token) {
  const std::optional<JwtParts> parts = split_jwt(token);
  if (!parts) return std::nullopt;
  return decode_jwt_payload(parts->payload);
}

std::optional<std::string> string_claim(const boost::json::object& claims, std::string_view name) {
  const boost::json::value* value = claims.if_contains(name);
  if (value == nullptr || !value->is_string()) return std::nullopt;
  return std::string(value->get_string());
}

}  // namespace tinker::wire
