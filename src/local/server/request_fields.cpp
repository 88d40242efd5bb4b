#include "local/server/request_fields.hpp"

#include <boost/beast/core/string.hpp>

#include <array>

namespace tinker::local::front {
namespace bhttp = boost::beast::http;

namespace {

// Fields with a name in Beast's table, compared by enum.
constexpr std::array kKnownFields{
    bhttp::field::accept,       bhttp::field::authorization, bhttp::field::connection, bhttp::field::content_encoding,
    bhttp::field::content_type, bhttp::field::expect,        bhttp::field::range,
};

// Fields Beast does not know (field::unknown), compared by name, case-insensitively.
constexpr std::array<std::string_view, 6> kOtherFields{
    "X-API-Key",
    "CF-Access-Client-Secret",
    "X-Idempotency-Key",
    "x-stainless-retry-count",
    "X-Tinker-Request-Iteration",
    "X-Tinker-Sampling-Backpressure",
};

}  // namespace

bool is_kept_request_field(bhttp::field known, std::string_view name) noexcept {
  if (known != bhttp::field::unknown) {
    for (const bhttp::field kept : kKnownFields) {
      if (known == kept) return true;
    }
    return false;
  }
  for (const std::string_view kept : kOtherFields) {
    // The size check first: most unknown fields (X-Stainless-*) are dropped without a call.
    if (name.size() == kept.size() && boost::beast::iequals(name, kept)) return true;
  }
  return false;
}

bool is_kept_request_field(std::string_view name) noexcept {
  return is_kept_request_field(bhttp::string_to_field(name), name);
}

}  // namespace tinker::local::front
