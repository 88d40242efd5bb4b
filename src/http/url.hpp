// Absolute http(s) URLs split for a request: the API's base URL, a storage URL given as a
// request path, a signed download URL.
#pragma once

#include "http/connection.hpp"

#include <string>
#include <string_view>

namespace tinker::http {

class AbsoluteUrl {
 public:
  Endpoint endpoint;
  std::string origin_key;  ///< "https://host:443": one connection pool per origin
  std::string path;        ///< origin-form target for the request line, with the query
  std::string display;     ///< "https://host:port/path" without the query (a signature stays out of messages)
};

/// An IPv6 literal host ("[::1]") without its brackets, for address parsing and certificate
/// checks; any other host as it is.
std::string host_without_brackets(std::string_view host);

/// Throws tinker::error (invalid_argument), the message starting with `what`, when `text` is
/// not an absolute http or https URL with a host. The URL's query is never in the message.
AbsoluteUrl parse_absolute_url(std::string_view text, std::string_view what);

}  // namespace tinker::http
