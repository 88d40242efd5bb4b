// The streaming download of src/http/download against a scripted server: TLS verification,
// no credentials, Range resumption (206 checked, 200 restarts), transient retries, rejected
// URLs, read timeouts, and Content-Range parsing.
#include "http/download.hpp"

#include "support/test_server.hpp"

#include <tinker/error.hpp>

#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace tinker::http {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using test::ScriptedResponse;
using test::ScriptedServer;
using test::ScriptedServerOptions;

std::string pattern(std::size_t size) {
  std::string out(size, '\0');
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<char>(i * 7 % 253);
  return out;
}

ScriptedResponse binary(int status, std::string body) {
  ScriptedResponse response(status, std::move(body));
  response.content_type = "application/x-tar";
  return response;
}

// A 200 with `body` whose connection closes partway through it.
ScriptedResponse cut_short(std::string body) {
  ScriptedResponse response = binary(200, std::move(body));
  response.truncate = true;
  return response;
}

class Download : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device seed;
    file = fs::temp_directory_path() / ("tinker-download-unit-" + std::to_string(seed()));
  }
  void TearDown() override { fs::remove(file); }

  DownloadOutcome fetch(const std::string& url, DownloadState& state, int max_resumes = 3) {
    DownloadRequest request(url, file);
    request.max_resumes = max_resumes;
    request.retry_delay = std::chrono::milliseconds(1);
    auto clock = make_system_clock(io.get_executor());
    return test::run_until_done(io, download_to_file(transport, *clock, request, state));
  }
  std::string on_disk() const {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
  }

  asio::io_context io;
  DownloadTransport transport;
  fs::path file;
};

TEST_F(Download, HttpsWithTheTrustedCaSendsNoCredentials) {
  ScriptedServerOptions options;
  options.tls = true;
  ScriptedServer server(options);
  const std::string body = pattern(200'000);
  server.push(binary(200, body));
  transport.tls.ca_file = server.ca_file();
  DownloadState state;
  const DownloadOutcome outcome = fetch(server.url_with_host("localhost") + "/blob.tar?sig=secret", state);
  ASSERT_FALSE(outcome.error) << outcome.reason;
  EXPECT_EQ(on_disk(), body);
  EXPECT_EQ(state.total, std::optional<std::uint64_t>(body.size()));
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].target, "/blob.tar?sig=secret");
  EXPECT_FALSE(requests[0].header("x-api-key"));
  EXPECT_FALSE(requests[0].header("authorization"));
  EXPECT_FALSE(requests[0].header("range"));
}

// The Hugging Face Hub's use: an Authorization value, redirects (relative, then to another
// origin, which must not get the credential), and response headers kept from the first answer
// that has them.
TEST_F(Download, RedirectsKeepTheAuthorizationToItsOriginAndKeepHeaders) {
  ScriptedServer hub;
  ScriptedServer cdn;
  const std::string body = pattern(5'000);
  ScriptedResponse renamed(307);
  renamed.headers = {{"Location", "/org/new-name/resolve/main/tokenizer.json"}};
  ScriptedResponse resolved(302);
  resolved.headers = {
      {"Location", cdn.base_url() + "/blob"}, {"X-Repo-Commit", "abc123"}, {"X-Linked-Etag", "\"sha256\""}};
  ScriptedResponse blob = binary(200, body);
  blob.headers = {{"ETag", "\"cdn-etag\""}};
  hub.push(renamed);
  hub.push(resolved);
  cdn.push(blob);

  DownloadRequest request(hub.base_url() + "/org/old-name/resolve/main/tokenizer.json", file);
  request.authorization = Secret("Bearer hf_secret");
  request.max_redirects = 2;
  request.keep_headers = {"x-repo-commit", "x-linked-etag", "etag"};
  auto clock = make_system_clock(io.get_executor());
  DownloadState state;
  const DownloadOutcome outcome = test::run_until_done(io, download_to_file(transport, *clock, request, state));
  ASSERT_FALSE(outcome.error) << outcome.reason;
  EXPECT_EQ(on_disk(), body);
  EXPECT_EQ(outcome.header("x-repo-commit"), std::optional<std::string>("abc123"));
  EXPECT_EQ(outcome.header("x-linked-etag"), std::optional<std::string>("\"sha256\""));
  EXPECT_EQ(outcome.header("etag"), std::optional<std::string>("\"cdn-etag\""));

  const auto at_hub = hub.requests();
  ASSERT_EQ(at_hub.size(), 2u);
  EXPECT_EQ(at_hub[1].target, "/org/new-name/resolve/main/tokenizer.json");
  EXPECT_EQ(at_hub[0].header("authorization"), std::optional<std::string>("Bearer hf_secret"));
  EXPECT_EQ(at_hub[1].header("authorization"), std::optional<std::string>("Bearer hf_secret"));
  const auto at_cdn = cdn.requests();
  ASSERT_EQ(at_cdn.size(), 1u);
  EXPECT_FALSE(at_cdn[0].header("authorization"));

  // Without max_redirects a redirect is a failure, as before.
  hub.push(renamed);
  request.max_redirects = 0;
  DownloadState again;
  const DownloadOutcome refused = test::run_until_done(io, download_to_file(transport, *clock, request, again));
  EXPECT_TRUE(refused.error);
  EXPECT_EQ(refused.http_status, 307);
}

TEST_F(Download, AnUntrustedCertificateIsATlsErrorWithoutRetries) {
  ScriptedServerOptions options;
  options.tls = true;
  ScriptedServer server(options);
  DownloadState state;
  const DownloadOutcome outcome = fetch(server.url_with_host("localhost") + "/blob.tar", state);
  EXPECT_EQ(outcome.error, errc::tls_error);
  EXPECT_EQ(server.connections_accepted(), 1u);
  EXPECT_EQ(state.resumes, 0);
}

TEST_F(Download, A200ToARangeRequestRestartsFromZero) {
  ScriptedServer server;
  const std::string body = pattern(100'000);
  server.push(cut_short(body));
  server.push(binary(200, body));  // ignores Range
  DownloadState state;
  const DownloadOutcome outcome = fetch(server.base_url() + "/a.tar", state);
  ASSERT_FALSE(outcome.error) << outcome.reason;
  EXPECT_EQ(on_disk(), body);
  EXPECT_EQ(state.resumes, 1);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  ASSERT_TRUE(requests[1].header("range"));
  EXPECT_NE(*requests[1].header("range"), "bytes=0-");
}

TEST_F(Download, A206IsAcceptedOnlyWhereTheFileStops) {
  ScriptedServer server;
  const std::string body = pattern(10'000);
  server.push(cut_short(body));
  ScriptedResponse wrong = binary(206, body.substr(0, 100));
  wrong.headers.emplace_back("Content-Range", "bytes 0-99/10000");
  server.push(wrong);
  DownloadState state;
  const DownloadOutcome outcome = fetch(server.base_url() + "/a.tar", state);
  EXPECT_EQ(outcome.error, errc::protocol_error);
  EXPECT_NE(outcome.reason.find("bytes 0-99/10000"), std::string::npos) << outcome.reason;
}

TEST_F(Download, TransientStatusesAreRetriedAndRejectedUrlsReported) {
  ScriptedServer server;
  server.push(binary(503, "busy"));
  server.push(binary(429, "slow down"));
  server.push(binary(200, "payload"));
  DownloadState state;
  DownloadOutcome outcome = fetch(server.base_url() + "/a.tar", state);
  ASSERT_FALSE(outcome.error) << outcome.reason;
  EXPECT_EQ(on_disk(), "payload");

  server.push(binary(403, "expired"));
  DownloadState fresh;
  outcome = fetch(server.base_url() + "/a.tar?X-Sig=abc", fresh);
  EXPECT_EQ(outcome.error, errc::permission_denied);
  EXPECT_TRUE(outcome.url_rejected);
  EXPECT_EQ(outcome.http_status, 403);
  EXPECT_EQ(outcome.reason.find("X-Sig"), std::string::npos) << "the signature stays out of messages";
}

TEST_F(Download, ASilentServerTimesOutAsADroppedConnection) {
  ScriptedServer server;
  ScriptedResponse silent;
  silent.no_response = true;
  server.push(silent);
  transport.read_timeout = std::chrono::milliseconds(100);
  DownloadState state;
  const DownloadOutcome outcome = fetch(server.base_url() + "/a.tar", state, 0);
  EXPECT_EQ(outcome.error, errc::timeout);
  EXPECT_EQ(state.resumes, 0);
}

TEST_F(Download, OutOfResumesWithAKnownTotalNamesTheSizes) {
  ScriptedServer server;
  server.set_default_response(cut_short(pattern(5000)));
  DownloadState state;
  const DownloadOutcome outcome = fetch(server.base_url() + "/a.tar", state, 2);
  EXPECT_EQ(outcome.error, errc::request_failed);
  EXPECT_NE(outcome.reason.find(" of 5000 bytes"), std::string::npos) << outcome.reason;
  EXPECT_EQ(state.resumes, 2);
}

TEST_F(Download, TheHandlersSlotCancels) {
  ScriptedServer server;
  ScriptedResponse silent;
  silent.no_response = true;
  server.push(silent);
  DownloadRequest request(server.base_url() + "/a.tar", file);
  auto clock = make_system_clock(io.get_executor());
  DownloadState state;
  asio::cancellation_signal signal;
  auto future = asio::co_spawn(io, download_to_file(transport, *clock, request, state),
                               asio::bind_cancellation_slot(signal.slot(), asio::use_future));
  while (server.request_count() == 0) io.run_one_for(std::chrono::milliseconds(10));
  signal.emit(asio::cancellation_type::terminal);
  io.run_for(std::chrono::seconds(5));
  ASSERT_EQ(future.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(future.get().error, errc::cancelled);
}

TEST(ContentRange, Parses) {
  const auto range = parse_content_range("bytes 10-19/100");
  ASSERT_TRUE(range);
  EXPECT_EQ(range->first, 10u);
  EXPECT_EQ(range->last, 19u);
  EXPECT_EQ(range->total, std::optional<std::uint64_t>(100));
  EXPECT_FALSE(parse_content_range("bytes 10-19/*")->total);
  EXPECT_FALSE(parse_content_range("bytes 19-10/100"));
  EXPECT_FALSE(parse_content_range("items 0-1/2"));
  EXPECT_FALSE(parse_content_range("bytes 0-1/2x"));
  EXPECT_FALSE(parse_content_range("bytes -1/2"));
}

// Fuzzing found "bytes 0-99/1" accepted: a range past its own total (test/fuzz/regressions/urls/).
TEST(ContentRange, RefusesARangePastItsTotal) {
  EXPECT_FALSE(parse_content_range("bytes 0-99/1"));
  EXPECT_FALSE(parse_content_range("bytes 0-100/100"));
  EXPECT_EQ(parse_content_range("bytes 0-99/100")->total, std::optional<std::uint64_t>(100));
}

}  // namespace
}  // namespace tinker::http
