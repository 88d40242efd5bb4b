#include "programs/local/server/auth.hpp"
#include "core/wire/base64url.hpp"

#include <gtest/gtest.h>

namespace tinker::local::front {
namespace {

using namespace std::chrono;

const system_clock::time_point kNow = system_clock::time_point(seconds(1'800'000'000));

TEST(PrincipalTest, DerivedFromTheKeyHash) {
  // SHA-256("abc") = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const Principal p = principal_for_key("abc");
  EXPECT_EQ(p.user_id, "tml:organization_user:ba7816bf8f01cfea");
  EXPECT_EQ(p.email, "ba7816bf8f01cfea@tinker-local.invalid");
  EXPECT_FALSE(p.organization_id.empty());
  EXPECT_NE(principal_for_key("tml-a").user_id, principal_for_key("tml-b").user_id);
}

TEST(JwtTest, MintedTokenVerifiesUntilExp) {
  const Principal who = principal_for_key("tml-key");
  const std::string token = mint_jwt(who, 1000, 4600, "secret");
  EXPECT_EQ(token.rfind("eyJ", 0), 0u);  // how the SDK tells a JWT from a "tml-" key
  const auto identity = verify_jwt(token, "secret", 4599);
  ASSERT_TRUE(identity.has_value());
  EXPECT_EQ(identity->principal.user_id, who.user_id);
  EXPECT_EQ(identity->principal.email, who.email);
  EXPECT_EQ(identity->principal.organization_id, who.organization_id);
  EXPECT_EQ(identity->expires_at, 4600);
  EXPECT_FALSE(verify_jwt(token, "secret", 4600).has_value());  // exp reached
  EXPECT_FALSE(verify_jwt(token, "other secret", 2000).has_value());
}

TEST(JwtTest, HeaderAndClaimsAreTheServicesJwtShape) {
  const std::string token = mint_jwt(principal_for_key("tml-key"), 1000, 4600, "s");
  const std::size_t first = token.find('.');
  const std::size_t last = token.rfind('.');
  EXPECT_EQ(wire::base64url_decode(token.substr(0, first)), R"({"alg":"HS256","typ":"JWT"})");
  const auto claims = wire::base64url_decode(token.substr(first + 1, last - first - 1));
  ASSERT_TRUE(claims.has_value());
  for (const char* part : {R"("sub":"tml:organization_user:)", R"("email":")", R"("iss":"passport-local")",
                           R"("iat":1000)", R"("exp":4600)"}) {
    EXPECT_NE(claims->find(part), std::string::npos) << part << " in " << *claims;
  }
}

TEST(JwtTest, TamperedTokensAreRejected) {
  const std::string token = mint_jwt(principal_for_key("tml-key"), 1000, 4600, "secret");
  const std::size_t first = token.find('.');
  const std::size_t last = token.rfind('.');
  const std::string forged_claims = wire::base64url_encode(
      R"({"sub":"tml:organization_user:0000000000000000","email":"","iss":"passport-local","iat":1,"exp":99999})");
  EXPECT_FALSE(verify_jwt(token.substr(0, first + 1) + forged_claims + token.substr(last), "secret", 2000));
  std::string flipped = token;
  flipped.back() = flipped.back() == 'A' ? 'B' : 'A';
  EXPECT_FALSE(verify_jwt(flipped, "secret", 2000).has_value());
  EXPECT_FALSE(verify_jwt("not.a.jwt", "secret", 2000).has_value());
  EXPECT_FALSE(verify_jwt("nodots", "secret", 2000).has_value());
}

TEST(AuthenticatorTest, AnyTmlKeyByDefault) {
  Authenticator auth({}, seconds(3600));
  const auto p = auth.authenticate("tml-anything", kNow);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->user_id, principal_for_key("tml-anything").user_id);
  EXPECT_TRUE(auth.authenticate("tml-anything", kNow).has_value());  // cached path
  EXPECT_FALSE(auth.authenticate("", kNow).has_value());
  EXPECT_FALSE(auth.authenticate("tml-", kNow).has_value());
  EXPECT_FALSE(auth.authenticate("sk-other", kNow).has_value());
}

TEST(AuthenticatorTest, AllowListOnlyWhenGiven) {
  Authenticator auth({"tml-one", "custom-key"}, seconds(3600));
  EXPECT_TRUE(auth.authenticate("tml-one", kNow).has_value());
  EXPECT_TRUE(auth.authenticate("custom-key", kNow).has_value());
  EXPECT_FALSE(auth.authenticate("tml-two", kNow).has_value());
  EXPECT_TRUE(auth.authenticate("tml-one", kNow).has_value());
}

TEST(AuthenticatorTest, MintedJwtAuthenticatesAsItsKeyUntilExpiry) {
  Authenticator auth({"tml-one"}, seconds(60));
  const Principal who = *auth.authenticate("tml-one", kNow);
  const std::string jwt = auth.mint(who, kNow);
  const auto via_jwt = auth.authenticate(jwt, kNow + seconds(59));
  ASSERT_TRUE(via_jwt.has_value());
  EXPECT_EQ(via_jwt->user_id, who.user_id);
  EXPECT_TRUE(auth.authenticate(jwt, kNow + seconds(59)).has_value());  // cached
  EXPECT_FALSE(auth.authenticate(jwt, kNow + seconds(60)).has_value());

  // A JWT of another server (another secret) is not accepted.
  Authenticator other({"tml-one"}, seconds(60));
  EXPECT_FALSE(other.authenticate(jwt, kNow).has_value());
}

}  // namespace
}  // namespace tinker::local::front
