#include <tinker/error.hpp>

#include <gtest/gtest.h>

namespace tinker {
namespace {

TEST(Error, CodesMapFromHttpStatuses) {
  EXPECT_EQ(errc_from_http_status(400), errc::bad_request);
  EXPECT_EQ(errc_from_http_status(402), errc::payment_required);
  EXPECT_EQ(errc_from_http_status(410), errc::gone);
  EXPECT_EQ(errc_from_http_status(429), errc::rate_limited);
  EXPECT_EQ(errc_from_http_status(418), errc::http_error);
  EXPECT_EQ(errc_from_http_status(302), errc::http_error);
  EXPECT_EQ(errc_from_http_status(503), errc::server_error);
}

TEST(Error, CategoryAndMessages) {
  const boost::system::error_code code = errc::decode_error;
  EXPECT_EQ(code.category(), error_category());
  EXPECT_STREQ(error_category().name(), "tinker");
  for (int value : {1, 2, 3, 4, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 30, 31, 32, 40, 50, 51}) {
    EXPECT_FALSE(make_error_code(static_cast<errc>(value)).message().starts_with("unknown")) << value;
  }
  EXPECT_TRUE(make_error_code(static_cast<errc>(999)).message().starts_with("unknown tinker error"));
}

TEST(Error, WhatCombinesCodeAndDiagnostics) {
  diagnostics diag;
  diag.http_status = 422;
  diag.message = "seq_id must be positive";
  diag.request_id = "req-1";
  const error e(make_error_code(errc::unprocessable_entity), diag);
  EXPECT_STREQ(e.what(), "unprocessable entity (HTTP 422): seq_id must be positive (request id req-1)");
  EXPECT_EQ(e.diag(), diag);

  diagnostics failed;
  failed.category = RequestErrorCategory::user;
  failed.message = "bad target";
  EXPECT_STREQ(error(make_error_code(errc::request_failed), failed).what(),
               "operation failed [category: user]: bad target");
  EXPECT_STREQ(error(errc::invalid_argument, "x: y").what(), "invalid argument: x: y");
}

TEST(Error, ThrowOnError) {
  EXPECT_NO_THROW(throw_on_error({}, {}));
  EXPECT_THROW(throw_on_error(make_error_code(errc::timeout), {}), error);
  diagnostics d;
  EXPECT_TRUE(d.empty());
  d.http_status = 500;
  EXPECT_FALSE(d.empty());
  d.clear();
  EXPECT_TRUE(d.empty());
}

}  // namespace
}  // namespace tinker
