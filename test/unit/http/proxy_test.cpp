// Tests of proxy configuration (environment variables, NO_PROXY matching, proxy URL parsing,
// credential redaction) and of establish_tunnel against the test CONNECT proxy.
#include "http/proxy.hpp"
#include "core/redaction.hpp"
#include "http/tls.hpp"

#include "support/raw_http_client.hpp"
#include "support/test_proxy.hpp"
#include "support/test_server.hpp"

#include <tinker/config.hpp>
#include <tinker/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace {

using namespace std::chrono_literals;
using boost::system::error_code;
using tinker::errc;
using tinker::http::ProxyEndpoint;
using tinker::http::ProxySettings;
using tinker::test::ConnectProxy;
using tinker::test::RawHttpClient;
using tinker::test::RawRequest;
using tinker::test::RawResponse;
using tinker::test::ScriptedResponse;
using tinker::test::ScriptedServer;
using Env = std::map<std::string, std::string>;

ProxySettings from(const Env& env) {
  return ProxySettings::from_environment([&env](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(std::string(name));
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

// The message of the tinker::error thrown by `fn`, or a marker if nothing was thrown.
template <class Fn>
std::string config_error(Fn fn) {
  try {
    fn();
  } catch (const tinker::error& e) {
    EXPECT_EQ(e.code(), errc::invalid_configuration);
    return e.what();
  }
  return "<no error>";
}

std::string proxy_host(const ProxySettings& settings, std::string_view scheme, std::string_view host = "api.example",
                       std::uint16_t port = 443) {
  const auto endpoint = settings.proxy_for(scheme, host, port);
  return endpoint ? endpoint->host + ":" + std::to_string(endpoint->port) : "direct";
}

TEST(Proxy, LowercaseVariableWinsOverUppercase) {
  const auto settings = from({{"https_proxy", "http://lower:1"},
                              {"HTTPS_PROXY", "http://upper:2"},
                              {"http_proxy", "http://plain-lower:3"},
                              {"HTTP_PROXY", "http://plain-upper:4"}});
  EXPECT_EQ(proxy_host(settings, "https"), "lower:1");
  EXPECT_EQ(proxy_host(settings, "http"), "plain-lower:3");
}

TEST(Proxy, UppercaseVariableIsUsedAlone) {
  EXPECT_EQ(proxy_host(from({{"HTTPS_PROXY", "http://upper:2"}}), "https"), "upper:2");
  EXPECT_EQ(proxy_host(from({{"HTTP_PROXY", "http://upper:4"}}), "http"), "upper:4");
}

TEST(Proxy, EmptyLowercaseVariableCountsAsUnset) {
  EXPECT_EQ(proxy_host(from({{"https_proxy", " "}, {"HTTPS_PROXY", "http://upper:2"}}), "https"), "upper:2");
}

TEST(Proxy, EachSchemeUsesItsOwnVariable) {
  const auto settings = from({{"HTTPS_PROXY", "http://secure:8080"}});
  EXPECT_EQ(proxy_host(settings, "https"), "secure:8080");
  EXPECT_EQ(proxy_host(settings, "HTTPS"), "secure:8080");
  EXPECT_EQ(proxy_host(settings, "http"), "direct");
  EXPECT_EQ(proxy_host(settings, "ftp"), "direct");
  EXPECT_EQ(proxy_host(from({}), "https"), "direct");
}

TEST(Proxy, UrlDefaultsAndForms) {
  EXPECT_EQ(proxy_host(from({{"https_proxy", "http://proxy.corp"}}), "https"), "proxy.corp:80");
  EXPECT_EQ(proxy_host(from({{"https_proxy", "proxy.corp:3128"}}), "https"), "proxy.corp:3128");
  EXPECT_EQ(proxy_host(from({{"https_proxy", "HTTP://Proxy.Corp:3128/"}}), "https"), "Proxy.Corp:3128");
  EXPECT_EQ(proxy_host(from({{"https_proxy", "http://[::1]:8080"}}), "https"), "::1:8080");
  const auto endpoint = tinker::http::parse_proxy_url("http://[::1]:8080", "test");
  EXPECT_EQ(endpoint.display, "http://[::1]:8080");
  EXPECT_TRUE(endpoint.authorization.empty());
}

TEST(Proxy, CredentialsBecomeABasicAuthorization) {
  const auto endpoint = tinker::http::parse_proxy_url("http://user:pass@proxy:3128", "test");
  EXPECT_EQ(endpoint.authorization.reveal(), "Basic dXNlcjpwYXNz");
  EXPECT_EQ(endpoint.display, "http://***@proxy:3128");
  // Percent-encoded userinfo is decoded first: "us@er" / "p:ss".
  const auto encoded = tinker::http::parse_proxy_url("http://us%40er:p%3Ass@proxy", "test");
  EXPECT_EQ(encoded.authorization.reveal(), "Basic dXNAZXI6cDpzcw==");
  EXPECT_EQ(tinker::http::parse_proxy_url("http://token@proxy", "test").authorization.reveal(), "Basic dG9rZW46");
}

TEST(Proxy, HttpsProxyUrlIsRejectedNamingTheVariable) {
  const std::string message = config_error([] { from({{"HTTPS_PROXY", "https://user:hunter2@proxy:443"}}); });
  EXPECT_NE(message.find("HTTPS_PROXY: https:// proxies are not supported"), std::string::npos) << message;
  EXPECT_NE(message.find("'https://***@proxy:443'"), std::string::npos) << message;
  EXPECT_EQ(message.find("hunter2"), std::string::npos) << message;
  EXPECT_EQ(message.find("user"), std::string::npos) << message;
  EXPECT_NE(config_error([] { from({{"http_proxy", "https://proxy"}}); }).find("http_proxy: "), std::string::npos);
}

TEST(Proxy, ErrorsNeverContainCredentials) {
  const char* bad_urls[] = {"http://user:hunter2@proxy:99999",  "http://user:hunter2@:8080",
                            "socks5://user:hunter2@proxy:1080", "http://user:hun/ter2@proxy:1",
                            "http://user:hunter2@pro xy:1",     "http://user:hunter2@proxy:port"};
  for (const char* url : bad_urls) {
    const std::string message = config_error([url] { from({{"https_proxy", url}}); });
    EXPECT_NE(message.find("https_proxy: "), std::string::npos) << message;
    EXPECT_EQ(message.find("hunter2"), std::string::npos) << message;
    EXPECT_EQ(message.find("ter2"), std::string::npos) << message;
    EXPECT_NE(message.find("***@"), std::string::npos) << message;
  }
  EXPECT_NE(config_error([] {
              from({{"https_proxy", "socks5://proxy:1080"}});
            }).find("unsupported scheme 'socks5'"),
            std::string::npos);
}

TEST(Proxy, RedactsUserinfo) {
  EXPECT_EQ(tinker::redact_url_userinfo("http://u:p@h:1"), "http://***@h:1");
  EXPECT_EQ(tinker::redact_url_userinfo("u:p@h:1"), "***@h:1");
  EXPECT_EQ(tinker::redact_url_userinfo("http://u:p@q@h"), "http://***@h");
  EXPECT_EQ(tinker::redact_url_userinfo("http://h:1"), "http://h:1");
}

TEST(Proxy, NoProxyStarBypassesEverything) {
  const auto settings = from({{"https_proxy", "http://p:1"}, {"NO_PROXY", "*"}});
  EXPECT_EQ(proxy_host(settings, "https"), "direct");
  EXPECT_EQ(proxy_host(settings, "https", "127.0.0.1"), "direct");
}

TEST(Proxy, NoProxyMatchesDomainsAndSubdomains) {
  for (const char* entry : {"example.com", ".example.com", "Example.COM", "*.example.com"}) {
    ProxySettings settings(std::nullopt, "http://p:1", std::string("other.org, ") + entry);
    EXPECT_TRUE(settings.bypasses("example.com", 443)) << entry;
    EXPECT_TRUE(settings.bypasses("api.example.com", 443)) << entry;
    EXPECT_TRUE(settings.bypasses("A.B.EXAMPLE.COM.", 443)) << entry;
    EXPECT_FALSE(settings.bypasses("badexample.com", 443)) << entry;
    EXPECT_FALSE(settings.bypasses("example.com.evil", 443)) << entry;
    EXPECT_TRUE(settings.bypasses("other.org", 80)) << entry;
  }
}

TEST(Proxy, NoProxyEntryWithPortMatchesOnlyThatPort) {
  ProxySettings settings(std::nullopt, "http://p:1", "example.com:8443,10.0.0.1:443,[::1]:8080");
  EXPECT_TRUE(settings.bypasses("api.example.com", 8443));
  EXPECT_FALSE(settings.bypasses("api.example.com", 443));
  EXPECT_TRUE(settings.bypasses("10.0.0.1", 443));
  EXPECT_FALSE(settings.bypasses("10.0.0.1", 80));
  EXPECT_TRUE(settings.bypasses("[::1]", 8080));
  EXPECT_FALSE(settings.bypasses("::1", 8081));
}

TEST(Proxy, NoProxyIpLiteralsMatchExactly) {
  ProxySettings settings(std::nullopt, "http://p:1", "10.0.0.1, ::1, 0.0.1");
  EXPECT_TRUE(settings.bypasses("10.0.0.1", 443));
  EXPECT_FALSE(settings.bypasses("110.0.0.1", 443));
  EXPECT_FALSE(settings.bypasses("10.0.0.10", 443));
  EXPECT_TRUE(settings.bypasses("[::1]", 443));
  EXPECT_TRUE(settings.bypasses("0:0:0:0:0:0:0:1", 443));
  EXPECT_FALSE(settings.bypasses("20.0.0.1", 443));  // "0.0.1" is no suffix rule for addresses
}

TEST(Proxy, LoopbackIsProxiedUnlessListed) {
  const auto plain = from({{"https_proxy", "http://p:1"}});
  EXPECT_EQ(proxy_host(plain, "https", "localhost"), "p:1");
  EXPECT_EQ(proxy_host(plain, "https", "127.0.0.1"), "p:1");
  const auto listed = from({{"https_proxy", "http://p:1"}, {"no_proxy", "localhost,127.0.0.1,::1"}});
  EXPECT_EQ(proxy_host(listed, "https", "localhost"), "direct");
  EXPECT_EQ(proxy_host(listed, "https", "127.0.0.1"), "direct");
  EXPECT_EQ(proxy_host(listed, "https", "[::1]"), "direct");
}

TEST(Proxy, NoProxyLowercaseWinsAndJunkIsIgnored) {
  const auto settings =
      from({{"https_proxy", "http://p:1"}, {"no_proxy", " a.org ,, b.org:bad ,[oops"}, {"NO_PROXY", "*"}});
  EXPECT_EQ(proxy_host(settings, "https", "a.org"), "direct");
  EXPECT_EQ(proxy_host(settings, "https", "b.org"), "p:1");
  EXPECT_EQ(proxy_host(settings, "https", "c.org"), "p:1");
  EXPECT_EQ(settings.no_proxy_rules().size(), 1u);
}

// ---- establish_tunnel ---------------------------------------------------------------------------

ProxyEndpoint endpoint_of(const ConnectProxy& proxy, const std::string& credentials = "") {
  const std::string url = "http://" + credentials + "127.0.0.1:" + std::to_string(proxy.port());
  return tinker::http::parse_proxy_url(url, "test");
}

error_code tunnel(RawHttpClient& client, const ProxyEndpoint& endpoint, std::string host, std::uint16_t port,
                  std::string* reason, std::chrono::milliseconds timeout = 5s) {
  return tinker::test::run_until_done(
      client.io_context(),
      tinker::http::establish_tunnel(client.connection(), endpoint, std::move(host), port, timeout, reason));
}

TEST(Proxy, TunnelCarriesRequestsToTheTarget) {
  ScriptedServer server;
  server.push(ScriptedResponse(200, "through the tunnel"));
  ConnectProxy proxy;
  RawHttpClient client(proxy.port());
  std::string reason;
  ASSERT_FALSE(tunnel(client, endpoint_of(proxy), "127.0.0.1", server.port(), &reason)) << reason;
  EXPECT_EQ(client.request("GET", "/via-proxy").body, "through the tunnel");
  EXPECT_EQ(client.request("GET", "/").body, "{\"ok\":true}");
  EXPECT_EQ(proxy.tunnels_established(), 1u);
  EXPECT_EQ(proxy.connect_targets(), std::vector<std::string>{"127.0.0.1:" + std::to_string(server.port())});
  ASSERT_EQ(server.request_count(), 2u);
  EXPECT_EQ(server.requests()[0].target, "/via-proxy");
  EXPECT_FALSE(proxy.records()[0].authorization);
}

TEST(Proxy, TunnelSendsCredentials) {
  ScriptedServer server;
  ConnectProxy proxy("Basic dXNlcjpwYXNz");
  RawHttpClient client(proxy.port());
  std::string reason;
  ASSERT_FALSE(tunnel(client, endpoint_of(proxy, "user:pass@"), "localhost", server.port(), &reason)) << reason;
  EXPECT_EQ(client.request("GET", "/").status, 200);
  EXPECT_EQ(proxy.records()[0].authorization, "Basic dXNlcjpwYXNz");
  EXPECT_EQ(proxy.records()[0].target, "localhost:" + std::to_string(server.port()));
}

TEST(Proxy, MissingCredentialsFailWith407) {
  ConnectProxy proxy("Basic dXNlcjpwYXNz");
  RawHttpClient client(proxy.port());
  std::string reason;
  EXPECT_EQ(tunnel(client, endpoint_of(proxy), "api.example", 443, &reason), errc::connection_failed);
  EXPECT_EQ(reason, "proxy CONNECT to api.example:443 failed: HTTP 407 Proxy Authentication Required");
  EXPECT_EQ(proxy.tunnels_established(), 0u);
}

TEST(Proxy, WrongCredentialsFailWithoutShowingThem) {
  ConnectProxy proxy("Basic dXNlcjpwYXNz");
  RawHttpClient client(proxy.port());
  std::string reason;
  const auto endpoint = endpoint_of(proxy, "user:hunter2@");
  EXPECT_EQ(tunnel(client, endpoint, "api.example", 443, &reason), errc::connection_failed);
  EXPECT_NE(reason.find("HTTP 407"), std::string::npos);
  EXPECT_EQ(reason.find("hunter2"), std::string::npos);
  EXPECT_EQ(reason.find(endpoint.authorization.reveal().substr(6)), std::string::npos);
}

TEST(Proxy, UnreachableTargetFailsWith502) {
  ConnectProxy proxy;
  RawHttpClient client(proxy.port());
  std::string reason;
  EXPECT_EQ(tunnel(client, endpoint_of(proxy), "127.0.0.1", 1, &reason), errc::connection_failed);
  EXPECT_EQ(reason, "proxy CONNECT to 127.0.0.1:1 failed: HTTP 502 Bad Gateway");
}

// The scripted server stands in for misbehaving proxies: it reads the CONNECT as a request.
TEST(Proxy, SilentProxyTimesOut) {
  ScriptedServer fake_proxy;
  ScriptedResponse silent;
  silent.no_response = true;
  fake_proxy.push(silent);
  RawHttpClient client(fake_proxy.port());
  std::string reason;
  EXPECT_EQ(tunnel(client, ProxyEndpoint(), "api.example", 443, &reason, 200ms), errc::timeout);
  EXPECT_EQ(reason, "proxy CONNECT to api.example:443 timed out after 200 ms");
}

TEST(Proxy, ProxyClosingWithoutAnswerFails) {
  ScriptedServer fake_proxy;
  ScriptedResponse hang_up;
  hang_up.close_without_response = true;
  fake_proxy.push(hang_up);
  RawHttpClient client(fake_proxy.port());
  std::string reason;
  EXPECT_EQ(tunnel(client, ProxyEndpoint(), "api.example", 443, &reason), errc::connection_failed);
  EXPECT_EQ(reason, "proxy CONNECT to api.example:443 failed: the proxy closed the connection");
}

TEST(Proxy, ConnectRequestFormatsIpv6Targets) {
  ScriptedServer fake_proxy;
  ScriptedResponse ok;
  ok.raw = "HTTP/1.1 200 Connection established\r\n\r\n";
  fake_proxy.push(ok);
  RawHttpClient client(fake_proxy.port());
  std::string reason;
  EXPECT_FALSE(tunnel(client, ProxyEndpoint(), "::1", 8443, &reason)) << reason;
  const auto requests = fake_proxy.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "CONNECT");
  EXPECT_EQ(requests[0].target, "[::1]:8443");
  EXPECT_EQ(requests[0].header("host"), "[::1]:8443");
  EXPECT_FALSE(requests[0].header("proxy-authorization"));
}

TEST(Proxy, DataAfterTheProxyAnswerIsRefused) {
  ScriptedServer fake_proxy;  // answers 200 with a body: bytes the tunnel must not swallow
  RawHttpClient client(fake_proxy.port());
  std::string reason;
  EXPECT_EQ(tunnel(client, ProxyEndpoint(), "api.example", 443, &reason), errc::connection_failed);
  EXPECT_EQ(reason, "proxy CONNECT to api.example:443 failed: unexpected data after the proxy's answer");
}

boost::asio::awaitable<error_code> tls_handshake(tinker::http::TlsStream& stream) {
  auto [ec] = co_await stream.async_handshake(boost::asio::ssl::stream_base::client,
                                              boost::asio::as_tuple(boost::asio::use_awaitable));
  co_return ec;
}

TEST(Proxy, TlsThroughTheTunnel) {
  tinker::test::ScriptedServerOptions options;
  options.tls = true;
  ScriptedServer server(options);
  ConnectProxy proxy;
  RawHttpClient client(proxy.port());
  std::string reason;
  ASSERT_FALSE(tunnel(client, endpoint_of(proxy), "localhost", server.port(), &reason)) << reason;
  tinker::TlsOptions tls_options;
  tls_options.ca_file = server.ca_file();
  auto context = tinker::http::make_tls_context(tls_options);
  tinker::http::TlsStream stream(std::move(client.connection()), *context);
  tinker::http::prepare_tls_stream(stream, "localhost", true);
  const error_code handshake_ec = tinker::test::run_until_done(client.io_context(), tls_handshake(stream));
  ASSERT_FALSE(handshake_ec) << tinker::http::describe_tls_error(handshake_ec, stream);
  RawResponse response;
  ASSERT_FALSE(
      tinker::test::run_until_done(client.io_context(), tinker::test::raw_exchange(stream, RawRequest(), response)));
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(server.request_count(), 1u);
}

}  // namespace
