#include "http/proxy.hpp"

#include "core/redaction.hpp"

#include "core/ascii.hpp"
#include "http/url.hpp"

#include <tinker/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>

#include <openssl/evp.h>

#include <charconv>
#include <cstdlib>

namespace tinker::http {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t max_connect_response_header = 16 * 1024;

using ascii::trim;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii::to_lower(c);
  return out;
}

std::optional<asio::ip::address> parse_ip(std::string_view host) {
  boost::system::error_code ec;
  auto address = asio::ip::make_address(host_without_brackets(host), ec);
  if (ec) return std::nullopt;
  return address;
}

// "host:port" with brackets around IPv6 literals, as in a Host header or a CONNECT target.
std::string authority(std::string_view host, std::uint16_t port) {
  std::string name = host_without_brackets(host);
  if (name.find(':') != std::string::npos) name = "[" + name + "]";
  return name + ":" + std::to_string(port);
}

std::optional<std::uint16_t> parse_port(std::string_view text) {
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value == 0 || value > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

std::string base64(std::string_view data) {
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(data.data()), static_cast<int>(data.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

[[noreturn]] void bad_proxy(std::string_view source, std::string_view url, const std::string& problem) {
  throw tinker::error(errc::invalid_configuration,
                      std::string(source) + ": " + problem + " in proxy URL '" + redact_url_userinfo(url) + "'");
}

std::uint16_t proxy_port(const boost::urls::url& u, std::string_view source, std::string_view url) {
  if (!u.has_port() || u.port().empty()) return 80;
  const auto port = parse_port(u.port());
  if (!port) bad_proxy(source, url, "invalid port");
  return *port;
}

// Parses one NO_PROXY entry (already trimmed, not "*"); nothing for entries that cannot match.
std::optional<NoProxyRule> parse_no_proxy_entry(std::string_view entry) {
  NoProxyRule rule;
  std::string_view host = entry;
  if (parse_ip(entry)) {  // bare IPv4 or IPv6 literal, no port
    rule.host = lower(host_without_brackets(entry));
    rule.ip = true;
    return rule;
  }
  const auto colon = entry.rfind(':');
  const bool bracketed = !entry.empty() && entry.front() == '[';
  if (colon != std::string_view::npos && (!bracketed || entry[colon - 1] == ']')) {
    rule.port = parse_port(entry.substr(colon + 1));
    if (!rule.port) return std::nullopt;
    host = entry.substr(0, colon);
  }
  if (parse_ip(host)) {
    rule.host = lower(host_without_brackets(host));
    rule.ip = true;
    return rule;
  }
  if (host.substr(0, 2) == "*.") host.remove_prefix(2);  // "*.example.com", as some tools write it
  while (!host.empty() && host.front() == '.') host.remove_prefix(1);
  while (!host.empty() && host.back() == '.') host.remove_suffix(1);
  if (host.empty() || host.find_first_of(":[]/ ") != std::string_view::npos) return std::nullopt;
  rule.host = lower(host);
  return rule;
}

bool name_matches(const std::string& host, const std::string& rule) {
  if (host == rule) return true;
  return host.size() > rule.size() && host.compare(host.size() - rule.size(), rule.size(), rule) == 0 &&
         host[host.size() - rule.size() - 1] == '.';
}

std::optional<std::string> env_value(const ProxySettings::EnvLookup& env, std::string_view name) {
  auto value = env(name);
  if (value && trim(*value).empty()) return std::nullopt;
  return value;
}

// The lowercase spelling wins, as in curl; returns the value and the name it came from.
std::pair<std::optional<std::string>, std::string_view> env_pair(const ProxySettings::EnvLookup& env,
                                                                 std::string_view lower_name,
                                                                 std::string_view upper_name) {
  if (auto value = env_value(env, lower_name)) return {std::move(value), lower_name};
  return {env_value(env, upper_name), upper_name};
}

std::string describe_io_failure(const boost::system::error_code& ec) {
  if (ec == bhttp::error::end_of_stream || ec == asio::error::eof || ec == bhttp::error::partial_message) {
    return "the proxy closed the connection";
  }
  if (ec == bhttp::error::header_limit) return "the proxy's answer header is too large";
  return ec.message();
}

// Standard reason phrases only: the proxy's own phrase is untrusted text of any length.
std::string status_text(unsigned status) {
  const auto reason = bhttp::obsolete_reason(static_cast<bhttp::status>(status));
  std::string text = "HTTP " + std::to_string(status);
  if (reason != "<unknown-status>") text += " " + std::string(reason);
  return text;
}

boost::system::error_code tunnel_failed(errc code, std::string* failure_reason, std::string reason) {
  if (failure_reason != nullptr) *failure_reason = std::move(reason);
  return make_error_code(code);
}

boost::system::error_code io_failure(const boost::system::error_code& ec, const std::string& target,
                                     std::chrono::milliseconds timeout, std::string* failure_reason) {
  const std::string prefix = "proxy CONNECT to " + target;
  if (ec == beast::error::timeout) {
    return tunnel_failed(errc::timeout, failure_reason,
                         prefix + " timed out after " + std::to_string(timeout.count()) + " ms");
  }
  if (ec == asio::error::operation_aborted)
    return tunnel_failed(errc::cancelled, failure_reason, prefix + " cancelled");
  return tunnel_failed(errc::connection_failed, failure_reason, prefix + " failed: " + describe_io_failure(ec));
}

}  // namespace

ProxyEndpoint parse_proxy_url(std::string_view url, std::string_view source) {
  url = trim(url);
  const std::string text = url.find("://") == std::string_view::npos ? "http://" + std::string(url) : std::string(url);
  auto parsed = boost::urls::parse_uri(text);
  if (!parsed) bad_proxy(source, url, "malformed URL");
  const boost::urls::url u = *parsed;  // owning copy: the view dies with `text`
  const std::string scheme = lower(u.scheme());
  if (scheme == "https") {
    bad_proxy(source, url,
              "https:// proxies are not supported (the client speaks plain HTTP to the proxy; use http://)");
  }
  if (scheme != "http") bad_proxy(source, url, "unsupported scheme '" + scheme + "' (only http:// is supported)");
  // Boost.URL 1.81 reads "h:port" as host "h", empty port and path "port": insisting on an
  // empty path also catches bad ports and passwords with an unencoded '/'.
  if ((u.encoded_path() != "" && u.encoded_path() != "/") || u.has_query() || u.has_fragment()) {
    bad_proxy(source, url, "unexpected path, port or query");
  }
  ProxyEndpoint endpoint;
  endpoint.host = u.host_address();
  if (endpoint.host.empty()) bad_proxy(source, url, "no host");
  endpoint.port = proxy_port(u, source, url);
  if (u.has_userinfo()) {
    const std::string credentials = u.user() + ":" + u.password();
    endpoint.authorization = Secret("Basic " + base64(credentials));
  }
  endpoint.display = "http://" + std::string(u.has_userinfo() ? "***@" : "") + authority(endpoint.host, endpoint.port);
  return endpoint;
}

ProxySettings::ProxySettings(std::optional<std::string> http_proxy, std::optional<std::string> https_proxy,
                             std::optional<std::string> no_proxy, std::string_view source_http,
                             std::string_view source_https) {
  if (http_proxy) http_ = parse_proxy_url(*http_proxy, source_http);
  if (https_proxy) https_ = parse_proxy_url(*https_proxy, source_https);
  std::string_view list = no_proxy ? std::string_view(*no_proxy) : std::string_view();
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view entry = trim(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (entry == "*") no_proxy_all_ = true;
    if (entry.empty() || entry == "*") continue;
    if (auto rule = parse_no_proxy_entry(entry)) no_proxy_.push_back(std::move(*rule));
  }
}

ProxySettings ProxySettings::from_environment() {
  return from_environment([](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  });
}

ProxySettings ProxySettings::from_environment(const EnvLookup& env) {
  auto [http, http_source] = env_pair(env, "http_proxy", "HTTP_PROXY");
  auto [https, https_source] = env_pair(env, "https_proxy", "HTTPS_PROXY");
  auto no_proxy = env_pair(env, "no_proxy", "NO_PROXY").first;
  return ProxySettings(std::move(http), std::move(https), std::move(no_proxy), http_source, https_source);
}

std::optional<ProxyEndpoint> ProxySettings::proxy_for(std::string_view scheme, std::string_view host,
                                                      std::uint16_t port) const {
  const std::optional<ProxyEndpoint>* endpoint = nullptr;
  if (ascii::iequals(scheme, "https")) endpoint = &https_;
  if (ascii::iequals(scheme, "http")) endpoint = &http_;
  if (endpoint == nullptr || !*endpoint || bypasses(host, port)) return std::nullopt;
  return **endpoint;
}

bool ProxySettings::bypasses(std::string_view host, std::uint16_t port) const {
  if (no_proxy_all_) return true;
  std::string name = lower(host_without_brackets(host));
  while (!name.empty() && name.back() == '.') name.pop_back();
  const auto address = parse_ip(name);
  for (const auto& rule : no_proxy_) {
    if (rule.port && *rule.port != port) continue;
    // Addresses compare as addresses ("::1" == "0:0::1") and never as name suffixes.
    const bool match = rule.ip ? address && address == parse_ip(rule.host) : !address && name_matches(name, rule.host);
    if (match) return true;
  }
  return false;
}

asio::awaitable<boost::system::error_code> establish_tunnel(beast::tcp_stream& stream, ProxyEndpoint proxy,
                                                            std::string target_host, std::uint16_t target_port,
                                                            std::chrono::milliseconds timeout,
                                                            std::string* failure_reason) {
  const std::string target = authority(target_host, target_port);
  bhttp::request<bhttp::empty_body> request(bhttp::verb::connect, target, 11);
  request.set(bhttp::field::host, target);
  if (!proxy.authorization.empty()) request.set(bhttp::field::proxy_authorization, proxy.authorization.reveal());

  // One deadline for the whole exchange.
  stream.expires_after(timeout);
  auto [write_ec, written] = co_await bhttp::async_write(stream, request, use_tuple);
  if (write_ec) {
    stream.expires_never();
    co_return io_failure(write_ec, target, timeout, failure_reason);
  }

  // A 2xx answer to CONNECT has no body (RFC 9110 9.3.6): read the head only.
  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::empty_body> parser;
  parser.header_limit(max_connect_response_header);
  parser.body_limit(0);
  parser.skip(true);
  auto [read_ec, read] = co_await bhttp::async_read(stream, buffer, parser, use_tuple);
  stream.expires_never();
  if (read_ec) co_return io_failure(read_ec, target, timeout, failure_reason);

  const unsigned status = parser.get().result_int();
  const std::string prefix = "proxy CONNECT to " + target + " failed: ";
  if (status / 100 != 2) co_return tunnel_failed(errc::connection_failed, failure_reason, prefix + status_text(status));
  // The target speaks only after the client (TLS, HTTP), so bytes here would be lost: refuse.
  if (buffer.size() != 0) {
    co_return tunnel_failed(errc::connection_failed, failure_reason,
                            prefix + "unexpected data after the proxy's answer");
  }
  co_return boost::system::error_code();
}

}  // namespace tinker::http
