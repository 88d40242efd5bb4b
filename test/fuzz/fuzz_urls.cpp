// Paths and URLs that come from outside: `tinker://` checkpoint paths (users, listings), the absolute
// URLs of checkpoint archives and other signed URLs (a server's answer), proxy URLs and NO_PROXY lists
// (the environment), Content-Range (a storage server), timestamps (every listing), the API base URL
// and archive entry names. The first byte chooses the parser (append new ones at the end). Besides the
// sanitizers, each checks a property its callers rely on (below).
#include "fuzz_support.hpp"

#include "client/rest/archive_extract.hpp"
#include "http/download.hpp"
#include "http/proxy.hpp"
#include "http/url.hpp"

#include <tinker/config.hpp>
#include <tinker/types/checkpoint.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tinker::fuzz {
namespace {

// A checkpoint download lands in "<run>_<kind>_<name>" (download_target_name): parts without '/' or NUL
// keep that one path component.
bool is_plain_part(std::string_view part) {
  return !part.empty() && part.find('/') == std::string_view::npos && part.find('\0') == std::string_view::npos;
}

void tinker_path(std::string_view text) {
  TinkerPath parsed;
  try {
    parsed = TinkerPath::parse(text);
  } catch (const error&) {
    return;
  }
  if (!(TinkerPath::parse(parsed.to_string()) == parsed)) property_failed("TinkerPath does not round-trip");
  if (!is_plain_part(parsed.training_run_id) || !is_plain_part(parsed.name)) {
    property_failed("a tinker path part is empty or holds '/' or NUL");
  }
}

// Signed URLs and archive URLs: their query (the signature) must never reach a message.
void absolute_url(std::string_view text) {
  http::AbsoluteUrl url;
  try {
    url = http::parse_absolute_url(text, "url");
  } catch (const error&) {
    return;
  }
  if (url.endpoint.host.empty()) property_failed("an absolute URL without a host was accepted");
  if (url.path.empty() || url.path.front() != '/') property_failed("the request target does not start with '/'");
  if (url.display.find('?') != std::string::npos) property_failed("the displayed URL shows the query");
  if (url.path.find_first_of("\r\n ") != std::string::npos) property_failed("the request target can split the line");
}

void proxy_url(std::string_view text) {
  try {
    const http::ProxyEndpoint proxy = http::parse_proxy_url(text, "http_proxy");
    if (proxy.host.empty()) property_failed("a proxy without a host was accepted");
  } catch (const error&) {
  }
}

// The input is "<no_proxy list>\n<host>:<port>".
void no_proxy(std::string_view text) {
  const std::size_t newline = text.find('\n');
  const std::string_view list = text.substr(0, newline);
  const std::string_view target = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
  try {
    const http::ProxySettings settings(std::string("http://127.0.0.1:3128"), std::nullopt, std::string(list));
    (void)settings.bypasses(target, 443);
    (void)settings.proxy_for("http", target, 80);
  } catch (const error&) {
  }
}

void content_range(std::string_view text) {
  const auto range = http::parse_content_range(text);
  if (!range) return;
  if (range->first > range->last) property_failed("a Content-Range with first > last was accepted");
  if (range->total && range->last >= *range->total) property_failed("a Content-Range past its total was accepted");
}

void timestamp(std::string_view text) {
  Timestamp t;
  try {
    t = parse_timestamp(text);
  } catch (const error&) {
    return;
  }
  if (parse_timestamp(format_timestamp(t)) != t) property_failed("a timestamp does not round-trip");
}

void base_url(std::string_view text) {
  ClientOptions options{std::string(text), Secret("tml-fuzz")};
  try {
    options.validate();
  } catch (const error&) {
  }
}

void archive_entry_name(std::string_view text) {
  const auto path = client::rest::safe_relative_path(text);
  if (!path) return;
  const std::string_view p = *path;
  if (!p.empty() && p.front() == '/') property_failed("an absolute entry name was accepted");
  std::size_t start = 0;
  while (start <= p.size()) {
    const std::size_t end = std::min(p.find('/', start), p.size());
    const std::string_view component = p.substr(start, end - start);
    if (component == ".." || component == "." || (component.empty() && !p.empty())) {
      property_failed("an entry name kept a '..', '.' or empty component");
    }
    start = end + 1;
  }
}

}  // namespace
}  // namespace tinker::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tinker::fuzz;
  const Selected input(data, size, 8);
  switch (input.choice()) {
    case 0: tinker_path(input.rest()); break;
    case 1: absolute_url(input.rest()); break;
    case 2: proxy_url(input.rest()); break;
    case 3: no_proxy(input.rest()); break;
    case 4: content_range(input.rest()); break;
    case 5: timestamp(input.rest()); break;
    case 6: base_url(input.rest()); break;
    default: archive_entry_name(input.rest()); break;
  }
  return 0;
}
