// Tests of the TLS helpers with a raw Beast client (make_tls_context + prepare_tls_stream +
// handshake) against the scripted server in TLS mode: untrusted certificates and host-name
// mismatches are refused with a reason that says why; a configured CA file is trusted.
#include "http/tls.hpp"

#include "support/test_certs.hpp"
#include "support/test_server.hpp"

#include <tinker/config.hpp>
#include <tinker/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <openssl/ssl.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using tinker::TlsOptions;
using tinker::http::describe_tls_error;
using tinker::http::make_tls_context;
using tinker::http::prepare_tls_stream;
using tinker::http::TlsStream;
using tinker::test::RawRequest;
using tinker::test::RawResponse;
using tinker::test::ScriptedServer;
using tinker::test::ScriptedServerOptions;

asio::awaitable<error_code> handshake(TlsStream& stream) {
  auto [ec] = co_await stream.async_handshake(asio::ssl::stream_base::client, asio::as_tuple(asio::use_awaitable));
  co_return ec;
}

// A raw TLS client connected to a scripted server, with the outcome of its handshake.
class TlsClient {
 public:
  TlsClient(const ScriptedServer& server, const TlsOptions& options, const std::string& host)
      : context(make_tls_context(options)), stream(asio::ip::tcp::socket(ioc), *context) {
    const error_code connected = tinker::test::run_until_done(
        ioc, tinker::test::raw_connect(boost::beast::get_lowest_layer(stream), server.port()));
    if (connected) throw boost::system::system_error(connected, "connect");
    prepare_tls_stream(stream, host, options.verify_peer);
    result = tinker::test::run_until_done(ioc, handshake(stream));
    reason = result ? describe_tls_error(result, stream) : std::string();
  }

  RawResponse get() {
    RawResponse response;
    const error_code ec =
        tinker::test::run_until_done(ioc, tinker::test::raw_exchange(stream, RawRequest("GET", "/tls"), response));
    if (ec) throw boost::system::system_error(ec, "GET over TLS");
    return response;
  }

  asio::io_context ioc;
  std::shared_ptr<asio::ssl::context> context;
  TlsStream stream;
  error_code result;
  std::string reason;
};

ScriptedServerOptions tls_server(std::vector<std::string> dns, std::vector<std::string> ips) {
  ScriptedServerOptions options;
  options.tls = true;
  options.cert_dns_names = std::move(dns);
  options.cert_ip_addresses = std::move(ips);
  return options;
}

TlsOptions trusting(const ScriptedServer& server) {
  TlsOptions options;
  options.ca_file = server.ca_file();
  return options;
}

TEST(Tls, UntrustedCertificateIsRefusedByDefault) {
  ScriptedServer server(tls_server({"localhost"}, {"127.0.0.1"}));
  TlsClient client(server, TlsOptions(), "localhost");
  ASSERT_TRUE(client.result);
  EXPECT_EQ(client.result.category(), asio::error::get_ssl_category());
  EXPECT_EQ(client.reason, "certificate verify failed: unable to get local issuer certificate");
  EXPECT_EQ(server.request_count(), 0u);
}

TEST(Tls, ConfiguredCaFileIsTrusted) {
  ScriptedServer server(tls_server({"localhost"}, {"127.0.0.1"}));
  TlsClient client(server, trusting(server), "localhost");
  ASSERT_FALSE(client.result) << client.reason;
  const RawResponse response = client.get();
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.body, "{\"ok\":true}");
  ASSERT_EQ(server.request_count(), 1u);
  EXPECT_EQ(server.requests()[0].target, "/tls");
  EXPECT_EQ(SSL_version(client.stream.native_handle()) >= TLS1_2_VERSION, true);
}

TEST(Tls, IpLiteralMatchesAnIpSubjectAltName) {
  ScriptedServer server(tls_server({"localhost"}, {"127.0.0.1"}));
  TlsClient client(server, trusting(server), "127.0.0.1");
  ASSERT_FALSE(client.result) << client.reason;
  EXPECT_EQ(client.get().status, 200);
}

TEST(Tls, IpLiteralIsRefusedByACertificateForANameOnly) {
  ScriptedServer server(tls_server({"localhost"}, {}));
  TlsClient client(server, trusting(server), "127.0.0.1");
  ASSERT_TRUE(client.result);
  EXPECT_EQ(client.reason, "certificate verify failed: IP address mismatch");
}

TEST(Tls, HostNameMismatchIsRefused) {
  ScriptedServer server(tls_server({"other.example"}, {"127.0.0.1"}));
  TlsClient client(server, trusting(server), "localhost");
  ASSERT_TRUE(client.result);
  EXPECT_EQ(client.reason, "certificate verify failed: hostname mismatch");
}

TEST(Tls, WildcardCoversOneLabel) {
  ScriptedServer server(tls_server({"*.test.example"}, {}));
  EXPECT_FALSE(TlsClient(server, trusting(server), "api.test.example").result);
  EXPECT_TRUE(TlsClient(server, trusting(server), "a.b.test.example").result);
}

TEST(Tls, VerificationCanBeTurnedOff) {
  ScriptedServer server(tls_server({"other.example"}, {}));
  TlsOptions options;
  options.verify_peer = false;
  TlsClient client(server, options, "localhost");
  ASSERT_FALSE(client.result) << client.reason;
  EXPECT_EQ(client.get().status, 200);
}

TEST(Tls, SniIsSetForNamesButNotForIpLiterals) {
  asio::io_context ioc;
  auto context = make_tls_context(TlsOptions());
  const auto sni = [&](const std::string& host) -> std::string {
    TlsStream stream(asio::ip::tcp::socket(ioc), *context);
    prepare_tls_stream(stream, host, true);
    const char* name = SSL_get_servername(stream.native_handle(), TLSEXT_NAMETYPE_host_name);
    return name == nullptr ? "<none>" : name;
  };
  EXPECT_EQ(sni("api.example.com"), "api.example.com");
  EXPECT_EQ(sni("127.0.0.1"), "<none>");
  EXPECT_EQ(sni("::1"), "<none>");
  EXPECT_EQ(sni("[::1]"), "<none>");
}

TEST(Tls, ContextRequiresTls12) {
  auto context = make_tls_context(TlsOptions());
  EXPECT_EQ(SSL_CTX_get_min_proto_version(context->native_handle()), TLS1_2_VERSION);
  EXPECT_EQ(SSL_CTX_get_verify_mode(context->native_handle()) & SSL_VERIFY_PEER, SSL_VERIFY_PEER);
  TlsOptions off;
  off.verify_peer = false;
  EXPECT_EQ(SSL_CTX_get_verify_mode(make_tls_context(off)->native_handle()), SSL_VERIFY_NONE);
}

TEST(Tls, MissingCaFileIsAConfigurationError) {
  TlsOptions options;
  options.ca_file = "/nonexistent/tinker/ca.pem";
  try {
    make_tls_context(options);
    FAIL() << "expected tinker::error";
  } catch (const tinker::error& e) {
    EXPECT_EQ(e.code(), tinker::errc::invalid_configuration);
    EXPECT_EQ(e.diag().message, "tls.ca_file: cannot load CA bundle '/nonexistent/tinker/ca.pem': no such file");
  }
}

TEST(Tls, CaFileWithoutCertificatesIsAConfigurationError) {
  tinker::test::TempFile garbage("this is not a certificate\n", ".pem");
  TlsOptions options;
  options.ca_file = garbage.path().string();
  try {
    make_tls_context(options);
    FAIL() << "expected tinker::error";
  } catch (const tinker::error& e) {
    EXPECT_EQ(e.code(), tinker::errc::invalid_configuration);
    EXPECT_NE(e.diag().message.find("tls.ca_file: cannot load CA bundle '" + garbage.path().string() + "': "),
              std::string::npos);
  }
}

TEST(Tls, DescribesOtherErrorsPlainly) {
  EXPECT_EQ(describe_tls_error(asio::error::connection_reset, nullptr),
            error_code(asio::error::connection_reset).message());
  EXPECT_EQ(describe_tls_error(asio::ssl::error::stream_truncated, nullptr),
            "the peer closed the TLS connection without close_notify");
}

}  // namespace
