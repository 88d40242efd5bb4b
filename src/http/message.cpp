#include "http/message.hpp"

#include "http/ascii.hpp"

namespace tinker::http {

const char* to_string(Method method) noexcept {
  switch (method) {
    case Method::get: return "GET";
    case Method::post: return "POST";
    case Method::put: return "PUT";
    case Method::delete_: return "DELETE";
  }
  return "GET";
}

const char* to_string(PoolKind kind) noexcept {
  switch (kind) {
    case PoolKind::session: return "session";
    case PoolKind::training: return "training";
    case PoolKind::sampling: return "sampling";
    case PoolKind::futures: return "futures";
    case PoolKind::storage: return "storage";
  }
  return "unknown";
}

std::string_view Response::header(std::string_view name) const noexcept {
  // Names are stored lower-cased, but a response built by hand (tests, fakes) may not be.
  for (const Header& h : headers) {
    if (ascii::iequals(h.name, name)) return h.value;
  }
  return {};
}

bool Response::is_json() const noexcept {
  // As the Python SDK decides: the media type (parameters such as "; charset=utf-8" stripped) ends
  // with "json", which also accepts "application/problem+json".
  std::string_view type = content_type();
  type = ascii::trim(type.substr(0, type.find(';')));
  return ascii::iends_with(type, "json");
}

bool Response::is_protobuf() const noexcept {
  constexpr std::string_view protobuf = "application/x-protobuf";
  const std::string_view type = content_type();
  // The usual spelling first (one memcmp; every sample result is checked twice).
  return type.starts_with(protobuf) || ascii::icontains(type, protobuf);
}

}  // namespace tinker::http
