// The one JWT reader (wire/jwt.hpp) shared by the SDK's claims and tinker-local's verification.
#include "core/wire/jwt.hpp"

#include <gtest/gtest.h>

namespace tinker::wire {
namespace {

// {"sub":"u","n":1}
constexpr std::string_view kPayload = "eyJzdWIiOiJ1IiwibiI6MX0";

TEST(Jwt, SplitsExactlyThreeParts) {
  const std::string token = "aGVhZA." + std::string(kPayload) + ".c2ln";
  const auto parts = split_jwt(token);
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(parts->header, "aGVhZA");
  EXPECT_EQ(parts->payload, kPayload);
  EXPECT_EQ(parts->signature, "c2ln");
  EXPECT_EQ(parts->signed_part, "aGVhZA." + std::string(kPayload));
}

TEST(Jwt, RefusesOtherPartCounts) {
  EXPECT_FALSE(split_jwt("tml-plain-key").has_value());
  EXPECT_FALSE(split_jwt("a.b").has_value());
  EXPECT_FALSE(split_jwt("a.b.c.d").has_value());
}

TEST(Jwt, ClaimsAreThePayloadObject) {
  const auto claims = jwt_claims("e30." + std::string(kPayload) + ".sig");
  ASSERT_TRUE(claims.has_value());
  EXPECT_EQ(string_claim(*claims, "sub"), "u");
  EXPECT_FALSE(string_claim(*claims, "n").has_value());  // a number is no string claim
  EXPECT_FALSE(string_claim(*claims, "missing").has_value());
}

TEST(Jwt, APayloadThatIsNoJsonObjectHasNoClaims) {
  EXPECT_FALSE(decode_jwt_payload("WzFd").has_value());  // [1]
  EXPECT_FALSE(decode_jwt_payload("not base64!").has_value());
  EXPECT_FALSE(jwt_claims("e30.bm90IGpzb24.sig").has_value());  // "not json"
}

}  // namespace
}  // namespace tinker::wire
