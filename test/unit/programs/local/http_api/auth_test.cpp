// Authentication (doc/protocol.md#authentication): API keys, 401s that never echo the key, and the
// JWT exchange.
#include "unit/programs/local/support/expectations.hpp"
#include "unit/programs/local/support/local_server.hpp"

#include <boost/json/parse.hpp>

#include <chrono>

namespace tinker::local::test {
namespace {

namespace json = boost::json;

using HttpApiAuth = LocalServerTest;

json::object create_session_body() {
  json::object body;
  body["tags"] = json::array{};
  body["user_metadata"] = json::object{};
  body["sdk_version"] = "0.25.0";
  body["type"] = "create_session";
  return body;
}

RawResponse post_with_key(LocalApi& api, std::string_view target, const json::value& body,
                          std::optional<std::string> key) {
  HeaderList headers{{"Content-Type", "application/json"}};
  if (key) headers.emplace_back("X-API-Key", *key);
  return api.http().request("POST", target, headers, to_text(body));
}

::testing::AssertionResult never_mentions(const RawResponse& response, std::string_view secret) {
  if (response.body.find(secret) != std::string::npos) {
    return ::testing::AssertionFailure() << "the body echoes the key\n" << response.describe();
  }
  for (const auto& [name, value] : response.headers) {
    if (value.find(secret) != std::string::npos) {
      return ::testing::AssertionFailure() << "header " << name << " echoes the key";
    }
  }
  return ::testing::AssertionSuccess();
}

std::string base64url_decode(std::string_view text) {
  std::string out;
  int bits = 0;
  std::uint32_t buffer = 0;
  for (char c : text) {
    int value = -1;
    if (c >= 'A' && c <= 'Z') value = c - 'A';
    if (c >= 'a' && c <= 'z') value = c - 'a' + 26;
    if (c >= '0' && c <= '9') value = c - '0' + 52;
    if (c == '-') value = 62;
    if (c == '_') value = 63;
    if (value < 0) throw std::runtime_error("not base64url: " + std::string(text));
    buffer = (buffer << 6) | static_cast<std::uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  return out;
}

std::vector<std::string> split_jwt(const std::string& jwt) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t dot = jwt.find('.'); dot != std::string::npos; dot = jwt.find('.', start)) {
    parts.push_back(jwt.substr(start, dot - start));
    start = dot + 1;
  }
  parts.push_back(jwt.substr(start));
  return parts;
}

TEST_F(HttpApiAuth, MissingKeyIs401) {
  const RawResponse response = post_with_key(api(), "/api/v1/create_session", create_session_body(), std::nullopt);
  EXPECT_TRUE(is_error(response, 401));
}

TEST_F(HttpApiAuth, AnyTmlKeyIsAcceptedByDefault) {
  EXPECT_EQ(post_with_key(api(), "/api/v1/create_session", create_session_body(), "tml-anything-goes").status, 200);
  EXPECT_EQ(post_with_key(api(), "/api/v1/create_session", create_session_body(), "tml-another-one").status, 200);
}

TEST_F(HttpApiAuth, KeyWithoutTmlPrefixIs401AndNotEchoed) {
  const std::string key = "sk-not-a-tinker-key-9f8e7d6c";
  const RawResponse response = post_with_key(api(), "/api/v1/create_session", create_session_body(), key);
  EXPECT_TRUE(is_error(response, 401));
  EXPECT_TRUE(never_mentions(response, key));
  EXPECT_TRUE(never_mentions(response, "9f8e7d6c"));
}

TEST_F(HttpApiAuth, OnlyListedKeysAreAcceptedWhenGiven) {
  options.api_keys = {"tml-the-only-good-key"};
  EXPECT_EQ(post_with_key(api(), "/api/v1/create_session", create_session_body(), "tml-the-only-good-key").status, 200);
  const std::string wrong = "tml-wrong-secret-5a4b3c2d1e";
  const RawResponse response = post_with_key(api(), "/api/v1/create_session", create_session_body(), wrong);
  EXPECT_TRUE(is_error(response, 401));
  EXPECT_TRUE(never_mentions(response, wrong));
  EXPECT_TRUE(never_mentions(response, "5a4b3c2d1e"));
}

TEST_F(HttpApiAuth, RestAndFutureEndpointsRequireTheKeyToo) {
  EXPECT_TRUE(is_error(api().http().request("GET", "/api/v1/training_runs", {}), 401));
  json::object poll;
  poll["request_id"] = "req-x";
  poll["allow_metadata_only"] = false;
  EXPECT_TRUE(is_error(post_with_key(api(), "/api/v1/retrieve_future", poll, std::nullopt), 401));
}

TEST_F(HttpApiAuth, OwnershipFollowsTheKey) {
  const std::string session = api().create_session();
  const std::string model = api().create_model(session);
  // Another key is another principal: the run is not visible to it (404, as for a missing run).
  HeaderList other{{"X-API-Key", "tml-someone-else"}};
  EXPECT_EQ(api().http().request("GET", "/api/v1/training_runs/" + model + "?access_scope=owned", other).status, 404);
  EXPECT_EQ(api().get("/api/v1/training_runs/" + model + "?access_scope=owned").status, 200);
}

TEST_F(HttpApiAuth, JwtModeMintsATokenWithTheSpecClaims) {
  options.client_config.pjwt_auth_enabled = true;
  options.jwt_lifetime = std::chrono::seconds(1800);
  const json::value flags = api().post("/api/v1/client/config", json::object{{"sdk_version", "0.25.0"}}).json();
  EXPECT_EQ(field(flags, "pjwt_auth_enabled"), json::value(true));

  const RawResponse response = api().post("/api/v1/auth/token", json::object{});
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  const std::string jwt = string_field(response.json(), "jwt");
  EXPECT_EQ(jwt.rfind("eyJ", 0), 0u) << jwt;
  const std::vector<std::string> parts = split_jwt(jwt);
  ASSERT_EQ(parts.size(), 3u) << jwt;
  EXPECT_FALSE(parts[2].empty());

  const json::value header = json::parse(base64url_decode(parts[0]));
  EXPECT_EQ(string_field(header, "alg"), "HS256");
  EXPECT_EQ(string_field(header, "typ"), "JWT");
  const json::value claims = json::parse(base64url_decode(parts[1]));
  EXPECT_EQ(string_field(claims, "sub").rfind("tml:organization_user:", 0), 0u) << to_text(claims);
  EXPECT_TRUE(field(claims, "email").is_string());
  EXPECT_EQ(string_field(claims, "iss").rfind("passport-", 0), 0u) << to_text(claims);
  const auto iat = field(claims, "iat").to_number<std::int64_t>();
  const auto exp = field(claims, "exp").to_number<std::int64_t>();
  EXPECT_EQ(exp - iat, 1800);
  const auto now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_NEAR(static_cast<double>(iat), static_cast<double>(now), 60.0);
  EXPECT_TRUE(never_mentions(response, test_api_key));
}

TEST_F(HttpApiAuth, MintedJwtAuthenticatesAsTheSamePrincipalUntilItExpires) {
  options.client_config.pjwt_auth_enabled = true;
  options.jwt_lifetime = std::chrono::seconds(600);
  const std::string jwt = string_field(api().post("/api/v1/auth/token", json::object{}).json(), "jwt");

  const RawResponse created = post_with_key(api(), "/api/v1/create_session", create_session_body(), jwt);
  ASSERT_EQ(created.status, 200) << created.describe();
  const std::string session = string_field(created.json(), "session_id");
  // Same principal as the raw key: the key sees the session made with the JWT.
  EXPECT_EQ(api().get("/api/v1/sessions/" + session).status, 200);

  std::string tampered = jwt;
  tampered[jwt.find('.') + 5] = tampered[jwt.find('.') + 5] == 'A' ? 'B' : 'A';
  EXPECT_TRUE(is_error(post_with_key(api(), "/api/v1/create_session", create_session_body(), tampered), 401));

  api().server().advance_clock(std::chrono::seconds(601));
  EXPECT_TRUE(is_error(post_with_key(api(), "/api/v1/create_session", create_session_body(), jwt), 401));
  // The raw key keeps working for client/config and a fresh token.
  EXPECT_EQ(api().post("/api/v1/auth/token", json::object{}).status, 200);
}

}  // namespace
}  // namespace tinker::local::test
