#include "http/headers.hpp"

#include <tinker/version.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <regex>
#include <set>
#include <string>

namespace tinker::http {
namespace {

std::optional<std::string> find(const std::vector<Header>& headers, std::string_view name) {
  std::optional<std::string> found;
  for (const Header& h : headers) {
    if (h.name == name) {
      EXPECT_FALSE(found.has_value()) << "header sent twice: " << name;
      found = h.value;
    }
  }
  return found;
}

TEST(HttpHeaders, Uuid4Format) {
  const std::regex format("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
  for (int i = 0; i < 200; ++i) {
    const std::string id = uuid4();
    EXPECT_TRUE(std::regex_match(id, format)) << id;
  }
}

TEST(HttpHeaders, Uuid4IsUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 10'000; ++i) seen.insert(uuid4());
  EXPECT_EQ(seen.size(), 10'000u);
}

TEST(HttpHeaders, IdempotencyKeyPrefix) {
  const std::string key = new_idempotency_key();
  ASSERT_TRUE(key.starts_with("tinker-cpp-retry-")) << key;
  EXPECT_EQ(key.size(), std::string("tinker-cpp-retry-").size() + 36);
  EXPECT_NE(key, new_idempotency_key());
}

TEST(HttpHeaders, StandardHeaders) {
  const std::vector<Header> headers = standard_headers(ClientOptions());
  EXPECT_EQ(find(headers, "User-Agent"), std::string("tinker-cpp/") + sdk_version);
  EXPECT_EQ(find(headers, "User-Agent"), "tinker-cpp/0.2.0");
  EXPECT_EQ(find(headers, "X-Stainless-Package-Version"), "0.25.0");
  EXPECT_EQ(find(headers, "X-Stainless-Lang"), "cpp");
  EXPECT_EQ(find(headers, "X-Stainless-Runtime"), "cpp");
  EXPECT_EQ(find(headers, "X-Stainless-Async"), "async:asio");
#if defined(__linux__) && !defined(__ANDROID__)
  EXPECT_EQ(find(headers, "X-Stainless-OS"), "Linux");
#endif
#if defined(__x86_64__)
  EXPECT_EQ(find(headers, "X-Stainless-Arch"), "x64");
#elif defined(__aarch64__)
  EXPECT_EQ(find(headers, "X-Stainless-Arch"), "arm64");
#endif
  const std::string runtime = find(headers, "X-Stainless-Runtime-Version").value_or("");
#if defined(__clang__)
  EXPECT_TRUE(std::regex_match(runtime, std::regex(R"(clang-\d+\.\d+\.\d+)"))) << runtime;
#elif defined(__GNUC__)
  EXPECT_TRUE(std::regex_match(runtime, std::regex(R"(gcc-\d+\.\d+\.\d+)"))) << runtime;
#endif
  // Per-request and credential headers are the client's business.
  for (const char* absent : {"X-API-Key", "Accept", "Content-Type", "X-Idempotency-Key", "x-stainless-retry-count",
                             "CF-Access-Client-Id", "CF-Access-Client-Secret"}) {
    EXPECT_FALSE(find(headers, absent).has_value()) << absent;
  }
}

TEST(HttpHeaders, TheApiKeyIsNeverAStandardHeader) {
  ClientOptions o("http://127.0.0.1:1", Secret("tml-secret-key"));
  for (const Header& h : standard_headers(o)) EXPECT_EQ(h.value.find("tml-secret-key"), std::string::npos) << h.name;
}

TEST(HttpHeaders, CloudflareHeadersOnlyWhenSet) {
  ClientOptions o;
  o.cloudflare_access_client_id = "cf-id";
  o.cloudflare_access_client_secret = Secret("cf-secret");
  const std::vector<Header> both = standard_headers(o);
  EXPECT_EQ(find(both, "CF-Access-Client-Id"), "cf-id");
  EXPECT_EQ(find(both, "CF-Access-Client-Secret"), "cf-secret");

  ClientOptions id_only;
  id_only.cloudflare_access_client_id = "cf-id";
  EXPECT_TRUE(find(standard_headers(id_only), "CF-Access-Client-Id").has_value());
  EXPECT_FALSE(find(standard_headers(id_only), "CF-Access-Client-Secret").has_value());

  ClientOptions empty_id;
  empty_id.cloudflare_access_client_id = "";
  EXPECT_FALSE(find(standard_headers(empty_id), "CF-Access-Client-Id").has_value());
}

TEST(HttpHeaders, DefaultHeadersAreAppendedAndMayReplaceStandardOnes) {
  ClientOptions o;
  o.default_headers["X-Team"] = "research";
  o.default_headers["A-First"] = "1";
  o.default_headers["user-agent"] = "my-app/2";
  const std::vector<Header> headers = standard_headers(o);
  const std::vector<Header> plain = standard_headers(ClientOptions());
  ASSERT_EQ(headers.size(), plain.size() + 2);
  // Appended after the standard ones, in the map's order.
  EXPECT_EQ(headers[headers.size() - 2], Header("A-First", "1"));
  EXPECT_EQ(headers.back(), Header("X-Team", "research"));
  // Same name in another case: replaced in place, sent once.
  EXPECT_EQ(headers.front(), Header("User-Agent", "my-app/2"));
  EXPECT_FALSE(find(headers, "user-agent").has_value());
}

}  // namespace
}  // namespace tinker::http
