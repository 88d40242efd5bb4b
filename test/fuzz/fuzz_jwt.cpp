// The JWT reader: the SDK reads the claims of the token auth/token gives it (expiry, subject) without a
// signature check, so the token is outside bytes. Checks, besides the sanitizers, that the parts of an
// accepted token are views into it that join back to it.
#include "fuzz_support.hpp"

#include "core/wire/jwt.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tinker;
  const std::string_view token = fuzz::as_text(data, size);
  if (const auto parts = wire::split_jwt(token)) {
    const std::string joined =
        std::string(parts->header) + "." + std::string(parts->payload) + "." + std::string(parts->signature);
    if (joined != token) fuzz::property_failed("the parts of a JWT do not join back to it");
    if (std::string(parts->header) + "." + std::string(parts->payload) != parts->signed_part) {
      fuzz::property_failed("signed_part is not header.payload");
    }
  }
  if (const auto claims = wire::jwt_claims(token)) {
    (void)wire::string_claim(*claims, "sub");
    (void)wire::string_claim(*claims, "exp");
  }
  return 0;
}
