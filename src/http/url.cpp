#include "http/url.hpp"

#include <tinker/error.hpp>

#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>

namespace tinker::http {

AbsoluteUrl parse_absolute_url(std::string_view text, std::string_view what) {
  const auto parsed = boost::urls::parse_uri(text);
  if (!parsed) throw error(errc::invalid_argument, std::string(what) + ": not an absolute URL");
  const boost::urls::url url = *parsed;  // owning copy: parse_uri returns a view, which would dangle
  const bool tls = url.scheme_id() == boost::urls::scheme::https;
  if (!tls && url.scheme_id() != boost::urls::scheme::http) {
    throw error(errc::invalid_argument,
                std::string(what) + ": only http and https are supported, got '" + std::string(url.scheme()) + "'");
  }
  if (url.encoded_host_address().empty()) throw error(errc::invalid_argument, std::string(what) + ": no host");
  // Boost.URL 1.81 takes "https://host:-43/a" as port "" and a path "-43/a" without its leading '/' (found
  // by fuzzing): such a port would dial port 0 and the path break the request line, so both are refused.
  if (url.has_port() && !url.port().empty() && url.port_number() == 0) {
    throw error(errc::invalid_argument, std::string(what) + ": invalid port");
  }
  if (!url.encoded_path().empty() && !url.encoded_path().starts_with('/')) {
    throw error(errc::invalid_argument, std::string(what) + ": invalid port or path");
  }
  std::uint16_t port = tls ? 443 : 80;
  if (url.has_port() && !url.port().empty()) port = url.port_number();
  AbsoluteUrl result;
  result.endpoint = Endpoint(std::string(url.encoded_host_address()), port, tls);
  result.origin_key = std::string(url.scheme()) + "://" + result.endpoint.host + ":" + std::to_string(port);
  result.path = std::string(url.encoded_path());
  if (result.path.empty()) result.path = "/";
  result.display = std::string(url.scheme()) + "://" + result.endpoint.host_header() + result.path;
  if (url.has_query()) result.path += "?" + std::string(url.encoded_query());
  return result;
}

std::string host_without_brackets(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return std::string(host);
}

}  // namespace tinker::http
