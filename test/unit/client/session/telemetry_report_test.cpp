// The pieces of the SDK's own telemetry events: SESSION_END's duration text (Python's str(timedelta)), the user-error
// rule, the error_type names, and the scrubbing of anything secret from event text.
#include "client/session/telemetry_report.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

namespace tinker::client::session {
namespace {

using std::chrono::microseconds;

TEST(PythonTimedeltaText, MatchesPythonsStrOfATimedelta) {
  EXPECT_EQ(python_timedelta_text(microseconds(0)), "0:00:00");
  EXPECT_EQ(python_timedelta_text(microseconds(1'500'000)), "0:00:01.500000");
  EXPECT_EQ(python_timedelta_text(microseconds(3'723'000'001)), "1:02:03.000001");
  EXPECT_EQ(python_timedelta_text(std::chrono::hours(24) + std::chrono::seconds(5)), "1 day, 0:00:05");
  EXPECT_EQ(python_timedelta_text(std::chrono::hours(50)), "2 days, 2:00:00");
  EXPECT_EQ(python_timedelta_text(microseconds(-5)), "0:00:00") << "a clock step backwards reports no time";
}

TEST(IsUserError, AUserCategoryFailureOrA4xxOtherThan408) {
  diagnostics diag;
  diag.category = RequestErrorCategory::user;
  EXPECT_TRUE(is_user_error(make_error_code(errc::request_failed), diag));
  diag.category = RequestErrorCategory::server;
  EXPECT_FALSE(is_user_error(make_error_code(errc::request_failed), diag));
  diagnostics http;
  http.http_status = 404;
  EXPECT_TRUE(is_user_error(make_error_code(errc::not_found), http));
  http.http_status = 408;
  EXPECT_FALSE(is_user_error(make_error_code(errc::request_timeout), http));
  http.http_status = 500;
  EXPECT_FALSE(is_user_error(make_error_code(errc::server_error), http));
  EXPECT_FALSE(is_user_error(make_error_code(errc::invalid_argument), diagnostics()));
}

TEST(ErrorTypeName, NamesTheTinkerErrcEnumerator) {
  EXPECT_EQ(error_type_name(make_error_code(errc::not_found)), "tinker::errc::not_found");
  EXPECT_EQ(error_type_name(make_error_code(errc::invalid_configuration)), "tinker::errc::invalid_configuration");
  EXPECT_EQ(error_type_name(boost::system::error_code(5, boost::system::generic_category())), "generic:5");
}

TEST(ScrubSecrets, RemovesTheKeyAndAnythingShapedLikeACredential) {
  boost::asio::io_context io;
  ClientOptions client;
  client.api_key = Secret("tml-the-configured-key-0123");
  client.telemetry_enabled = true;
  auto holder = detail::ClientHolder::create(io.get_executor(), ServiceClientOptions(client));
  const std::string text =
      "key=tml-the-configured-key-0123 other tml-abcdefghijklmnop jwt eyJhbGciOi.eyJzdWIiOiJ4In0.c2ln "
      "hf hf_abcdefghijklmnopqrstu short tml-x html-unrelated-word \xff";
  const std::string scrubbed = scrub_secrets(*holder, text);
  EXPECT_EQ(scrubbed.find("tml-the"), std::string::npos) << scrubbed;
  EXPECT_EQ(scrubbed.find("tml-abc"), std::string::npos) << scrubbed;
  EXPECT_EQ(scrubbed.find("eyJ"), std::string::npos) << scrubbed;
  EXPECT_EQ(scrubbed.find("hf_abc"), std::string::npos) << scrubbed;
  EXPECT_NE(scrubbed.find("short tml-x"), std::string::npos) << "too short to be a key: kept";
  EXPECT_NE(scrubbed.find("html-unrelated-word"), std::string::npos) << "inside a word: kept";
  EXPECT_NE(scrubbed.find("word ?"), std::string::npos) << "a byte that is not UTF-8 text becomes '?'";
}

}  // namespace
}  // namespace tinker::client::session
