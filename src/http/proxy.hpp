// HTTP proxies for the transport: which proxy (if any) serves a target, read from the usual
// environment variables, and the CONNECT tunnel through it.
//
// Variables: https_proxy/HTTPS_PROXY for https targets, http_proxy/HTTP_PROXY for http targets,
// no_proxy/NO_PROXY for exceptions. The lowercase spelling wins when both are set (as curl);
// empty values count as unset. ALL_PROXY and SOCKS are not supported.
//
// Credentials in a proxy URL (`http://user:pass@host:port`) are kept only as the precomputed
// Proxy-Authorization value (a `Secret`); every message shows the URL as `http://***@host:port`.
#pragma once

#include <tinker/config.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::http {

/// Where to send a proxied connection.
class ProxyEndpoint {
 public:
  ProxyEndpoint() = default;

  std::string host;  ///< DNS name or IP literal (IPv6 without brackets)
  std::uint16_t port = 80;
  /// The full Proxy-Authorization value ("Basic <base64(user:password)>"), empty without credentials.
  Secret authorization;
  /// The proxy URL for messages, credentials replaced: "http://***@proxy.example:3128".
  std::string display;

  friend bool operator==(const ProxyEndpoint&, const ProxyEndpoint&) = default;
};

/// One NO_PROXY entry, already parsed.
class NoProxyRule {
 public:
  NoProxyRule() = default;

  std::string host;                   ///< lower case, no leading dot, no brackets
  std::optional<std::uint16_t> port;  ///< only this port is exempt when set
  bool ip = false;                    ///< an IP literal: matches exactly, never as a suffix

  friend bool operator==(const NoProxyRule&, const NoProxyRule&) = default;
};

class ProxySettings {
 public:
  using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

  /// No proxy for anything.
  ProxySettings() = default;

  /// Parses proxy URLs and a NO_PROXY list given in code. `source_*` name the origin of each
  /// value in error messages (a variable name or an option name). Throws `tinker::error`
  /// (invalid_configuration) on a malformed or `https://` proxy URL, naming the source.
  ProxySettings(std::optional<std::string> http_proxy, std::optional<std::string> https_proxy,
                std::optional<std::string> no_proxy, std::string_view source_http = "http_proxy",
                std::string_view source_https = "https_proxy");

  /// Reads the process environment with getenv.
  static ProxySettings from_environment();
  /// Reads the variables through `env` (tests inject an environment).
  static ProxySettings from_environment(const EnvLookup& env);

  /// The proxy for a request to `scheme://host:port` (`host` may be an IPv6 literal in
  /// brackets), or nothing when no proxy is configured for the scheme or NO_PROXY exempts the host.
  std::optional<ProxyEndpoint> proxy_for(std::string_view scheme, std::string_view host, std::uint16_t port) const;

  /// True if NO_PROXY exempts `host:port`. Matching: `*` exempts everything; a name matches
  /// itself and its subdomains ("example.com" and ".example.com" both match "example.com" and
  /// "a.example.com"), case-insensitively; an IP literal matches only the same address; an
  /// entry with a port exempts only that port. Choice: loopback (localhost, 127.0.0.1, ::1) is
  /// not exempt unless listed, so a proxy configuration behaves the same for every host; list
  /// them in NO_PROXY to reach a local server directly. CIDR ranges are not supported.
  bool bypasses(std::string_view host, std::uint16_t port) const;

  const std::optional<ProxyEndpoint>& http_proxy() const noexcept { return http_; }
  const std::optional<ProxyEndpoint>& https_proxy() const noexcept { return https_; }
  const std::vector<NoProxyRule>& no_proxy_rules() const noexcept { return no_proxy_; }

 private:
  std::optional<ProxyEndpoint> http_;
  std::optional<ProxyEndpoint> https_;
  bool no_proxy_all_ = false;
  std::vector<NoProxyRule> no_proxy_;
};

/// Parses `http://[user:pass@]host[:port][/]` (a missing scheme means http; default port 80).
/// Throws `tinker::error` (invalid_configuration) starting with `source`; the message shows
/// the URL only with credentials redacted.
ProxyEndpoint parse_proxy_url(std::string_view url, std::string_view source);

/// Sends `CONNECT target_host:target_port` over `stream` (already connected to the proxy) and
/// reads the proxy's answer. Completes with success iff the proxy answered 2xx; the stream then
/// carries the tunnel. Otherwise errc::connection_failed (non-2xx answer, I/O error, unexpected
/// bytes after the answer), errc::timeout (no answer within `timeout`) or errc::cancelled, with
/// a reason in `*failure_reason` (if not null) such as "proxy CONNECT to api.example:443
/// failed: HTTP 407 Proxy Authentication Required". Reasons never contain credentials. The
/// stream's expiry is cleared (expires_never) on return.
boost::asio::awaitable<boost::system::error_code> establish_tunnel(boost::beast::tcp_stream& stream,
                                                                   ProxyEndpoint proxy, std::string target_host,
                                                                   std::uint16_t target_port,
                                                                   std::chrono::milliseconds timeout,
                                                                   std::string* failure_reason);

}  // namespace tinker::http
