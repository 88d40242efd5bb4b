#include "client/session/credentials.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

namespace tinker::client::session {
namespace {

namespace asio = boost::asio;

TEST(JwtClaims, DecodesThePayloadWithoutVerifying) {
  // {"sub":"tml:user:1","email":"a@b.c","iss":"passport-x","exp":1900000000}
  const std::string jwt =
      "eyJhbGciOiJIUzI1NiJ9."
      "eyJzdWIiOiJ0bWw6dXNlcjoxIiwiZW1haWwiOiJhQGIuYyIsImlzcyI6InBhc3Nwb3J0LXgiLCJleHAiOjE5MDAwMDAwMDB9."
      "not-a-real-signature";
  const auto claims = decode_jwt_claims(jwt);
  ASSERT_TRUE(claims.has_value());
  EXPECT_EQ(claims->exp, 1900000000);
  EXPECT_EQ(claims->sub, "tml:user:1");
  EXPECT_EQ(claims->email, "a@b.c");
  EXPECT_EQ(claims->iss, "passport-x");
}

TEST(JwtClaims, FractionalExpEmptyEmailAndMissingClaims) {
  // {"exp":1700000000.5,"email":""}
  const auto claims = decode_jwt_claims("e30.eyJleHAiOjE3MDAwMDAwMDAuNSwiZW1haWwiOiIifQ.sig");
  ASSERT_TRUE(claims.has_value());
  EXPECT_EQ(claims->exp, 1700000000);
  EXPECT_FALSE(claims->email.has_value());  // empty means none (doc/protocol.md#authentication)
  EXPECT_FALSE(claims->sub.has_value());
  // {"exp":"soon"}: not a number -> unknown
  const auto text_exp = decode_jwt_claims("e30.eyJleHAiOiJzb29uIn0.sig");
  ASSERT_TRUE(text_exp.has_value());
  EXPECT_FALSE(text_exp->exp.has_value());
}

TEST(JwtClaims, RejectsMalformedTokens) {
  EXPECT_FALSE(decode_jwt_claims("tml-plain-key").has_value());
  EXPECT_FALSE(decode_jwt_claims("a.b").has_value());
  EXPECT_FALSE(decode_jwt_claims("a.b.c.d").has_value());
  EXPECT_FALSE(decode_jwt_claims("e30.!!!.sig").has_value());
  EXPECT_FALSE(decode_jwt_claims("e30.WzFd.sig").has_value());  // payload [1] is not an object
  EXPECT_TRUE(looks_like_jwt("eyJabc"));
  EXPECT_FALSE(looks_like_jwt("tml-abc"));
}

TEST(CredentialCommand, TrimmedStdoutIsTheCredential) {
  Secret out;
  diagnostics diag;
  ASSERT_FALSE(run_credential_command("printf '  tml-from-command\\n\\n'", out, diag)) << diag.message;
  EXPECT_EQ(out.reveal(), "tml-from-command");
}

TEST(CredentialCommand, RunsThroughTheShellEveryTime) {
  const std::string counter = ::testing::TempDir() + "/credential-counter";
  std::remove(counter.c_str());
  const std::string command = "echo x >> " + counter + " && printf tml-%s $(wc -l < " + counter + ")";
  Secret first;
  Secret second;
  diagnostics diag;
  ASSERT_FALSE(run_credential_command(command, first, diag)) << diag.message;
  ASSERT_FALSE(run_credential_command(command, second, diag)) << diag.message;
  EXPECT_EQ(first.reveal(), "tml-1");
  EXPECT_EQ(second.reveal(), "tml-2");
  std::remove(counter.c_str());
}

TEST(CredentialCommand, EmptyOutputAndFailuresAreErrorsThatNeverQuoteTheOutput) {
  Secret out;
  diagnostics diag;
  EXPECT_EQ(run_credential_command("printf '   \\n'", out, diag), make_error_code(errc::authentication_failed));
  EXPECT_NE(diag.message.find("printed nothing"), std::string::npos) << diag.message;

  EXPECT_EQ(run_credential_command("echo tml-secret-output; exit 3", out, diag),
            make_error_code(errc::authentication_failed));
  EXPECT_NE(diag.message.find("status 3"), std::string::npos) << diag.message;
  EXPECT_EQ(diag.message.find("tml-secret-output"), std::string::npos) << diag.message;
  EXPECT_TRUE(out.empty());
}

asio::awaitable<std::string> run_async(std::string command) {
  Secret out;
  diagnostics diag;
  const auto ec = co_await async_run_credential_command(std::move(command), out, diag);
  if (ec) co_return "error: " + diag.message;
  co_return out.reveal();
}

TEST(CredentialCommand, AsyncFormCompletesOnTheIoThread) {
  asio::io_context io;
  auto ok = asio::co_spawn(io, run_async("sleep 0.05; echo tml-async"), asio::use_future);
  auto bad = asio::co_spawn(io, run_async("true"), asio::use_future);
  io.run();  // returns only once both commands finished (the helper threads hold work)
  EXPECT_EQ(ok.get(), "tml-async");
  EXPECT_NE(bad.get().find("printed nothing"), std::string::npos);
}

}  // namespace
}  // namespace tinker::client::session
