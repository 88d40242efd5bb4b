// Hiding credentials that may sit inside text the SDK shows: URLs in error messages.
#pragma once

#include <string>
#include <string_view>

namespace tinker {

/// Replaces the userinfo of a URL ("user:password@") with "***@". Everything up to the *last*
/// '@' goes, without trusting a URL parser: the value may be malformed, and a password may
/// itself contain '/', '?', '#' or '@'. Over-redacting a strange URL is the safe mistake.
inline std::string redact_url_userinfo(std::string_view url) {
  const auto at = url.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  const auto scheme_end = url.find("://");
  const std::size_t start = scheme_end == std::string_view::npos || scheme_end > at ? 0 : scheme_end + 3;
  return std::string(url.substr(0, start)) + "***" + std::string(url.substr(at));
}

}  // namespace tinker
