#include "http/message.hpp"

#include <gtest/gtest.h>

#include <string>

namespace tinker::http {
namespace {

Response with_content_type(std::string value) {
  Response r;
  r.headers.emplace_back("content-type", std::move(value));
  return r;
}

TEST(HttpMessage, MethodNames) {
  EXPECT_STREQ(to_string(Method::get), "GET");
  EXPECT_STREQ(to_string(Method::post), "POST");
  EXPECT_STREQ(to_string(Method::put), "PUT");
  EXPECT_STREQ(to_string(Method::delete_), "DELETE");
}

TEST(HttpMessage, PoolKindNames) {
  EXPECT_STREQ(to_string(PoolKind::session), "session");
  EXPECT_STREQ(to_string(PoolKind::training), "training");
  EXPECT_STREQ(to_string(PoolKind::sampling), "sampling");
  EXPECT_STREQ(to_string(PoolKind::futures), "futures");
  EXPECT_STREQ(to_string(PoolKind::storage), "storage");
}

TEST(HttpMessage, HeaderLookupIsCaseInsensitiveAndTakesTheFirst) {
  Response r;
  r.headers.emplace_back("x-request-id", "first");
  r.headers.emplace_back("X-Request-Id", "second");
  r.headers.emplace_back("Retry-After", "5");
  EXPECT_EQ(r.header("X-REQUEST-ID"), "first");
  EXPECT_EQ(r.header("retry-after"), "5");
  EXPECT_EQ(r.header("retry-after-ms"), "");
  EXPECT_EQ(r.header(""), "");
  EXPECT_EQ(Response().content_type(), "");
}

TEST(HttpMessage, IsJsonLooksAtTheMediaTypeOnly) {
  EXPECT_TRUE(with_content_type("application/json").is_json());
  EXPECT_TRUE(with_content_type("application/json; charset=utf-8").is_json());
  EXPECT_TRUE(with_content_type("  Application/JSON ;charset=utf-8").is_json());
  EXPECT_TRUE(with_content_type("application/problem+json").is_json());
  EXPECT_TRUE(with_content_type("text/json").is_json());
  EXPECT_FALSE(with_content_type("text/plain; format=json").is_json());
  EXPECT_FALSE(with_content_type("application/jsonl").is_json());
  EXPECT_FALSE(with_content_type("text/html").is_json());
  EXPECT_FALSE(with_content_type("").is_json());
  EXPECT_FALSE(Response().is_json());
}

TEST(HttpMessage, IsProtobufSearchesTheWholeValue) {
  EXPECT_TRUE(with_content_type("application/x-protobuf").is_protobuf());
  EXPECT_TRUE(with_content_type("Application/X-Protobuf; messageType=Sample").is_protobuf());
  EXPECT_TRUE(with_content_type("application/x-protobuf, application/json").is_protobuf());
  EXPECT_FALSE(with_content_type("application/protobuf").is_protobuf());
  EXPECT_FALSE(with_content_type("application/json").is_protobuf());
  EXPECT_FALSE(Response().is_protobuf());
}

}  // namespace
}  // namespace tinker::http
