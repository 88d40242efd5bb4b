#include "programs/local/server/request_fields.hpp"

#include <boost/beast/core/string.hpp>

#include <array>

namespace tinker::local::front {
namespace bhttp = boost::beast::http;

namespace {

class KnownField {
 public:
  bhttp::field beast;
  KeptField kept;
};

// Fields with a name in Beast's table, compared by enum.
constexpr std::array<KnownField, 7> kKnownFields{{
    {bhttp::field::accept, KeptField::accept},
    {bhttp::field::authorization, KeptField::authorization},
    {bhttp::field::connection, KeptField::connection},
    {bhttp::field::content_encoding, KeptField::content_encoding},
    {bhttp::field::content_type, KeptField::content_type},
    {bhttp::field::expect, KeptField::expect},
    {bhttp::field::range, KeptField::range},
}};

class OtherField {
 public:
  std::string_view name;
  KeptField kept;
};

// Fields Beast does not know (field::unknown), compared by name, case-insensitively.
constexpr std::array<OtherField, 7> kOtherFields{{
    {"X-API-Key", KeptField::api_key},
    {"CF-Access-Client-Secret", KeptField::cf_access_client_secret},
    {"X-Idempotency-Key", KeptField::idempotency_key},
    {"x-stainless-retry-count", KeptField::retry_count},
    {"X-Tinker-Request-Iteration", KeptField::request_iteration},
    {"X-Tinker-Sampling-Backpressure", KeptField::sampling_backpressure},
    {"X-Tinker-Upload-Token", KeptField::upload_token},
}};

}  // namespace

std::optional<KeptField> kept_request_field(bhttp::field known, std::string_view name) noexcept {
  if (known != bhttp::field::unknown) {
    for (const KnownField& field : kKnownFields) {
      if (known == field.beast) return field.kept;
    }
    return std::nullopt;
  }
  for (const OtherField& field : kOtherFields) {
    // The size check first: most unknown fields (X-Stainless-*) are dropped without a call.
    if (name.size() == field.name.size() && boost::beast::iequals(name, field.name)) return field.kept;
  }
  return std::nullopt;
}

bool is_kept_request_field(std::string_view name) noexcept {
  return kept_request_field(bhttp::string_to_field(name), name).has_value();
}

}  // namespace tinker::local::front
