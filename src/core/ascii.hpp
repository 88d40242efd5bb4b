// Locale-independent ASCII text helpers (HTTP header names and values, media types, tokens) for
// the SDK and tinker-local. std::tolower and friends depend on the global C locale, which a host
// application may change; these do not.
#pragma once

#include <cstddef>
#include <string_view>

namespace tinker::ascii {

constexpr char to_lower(char c) noexcept {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

constexpr bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (to_lower(a[i]) != to_lower(b[i])) return false;
  }
  return true;
}

constexpr std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

constexpr bool iends_with(std::string_view s, std::string_view suffix) noexcept {
  return s.size() >= suffix.size() && iequals(s.substr(s.size() - suffix.size()), suffix);
}

constexpr bool icontains(std::string_view s, std::string_view needle) noexcept {
  if (needle.size() > s.size()) return false;
  for (std::size_t i = 0; i + needle.size() <= s.size(); ++i) {
    if (iequals(s.substr(i, needle.size()), needle)) return true;
  }
  return false;
}

}  // namespace tinker::ascii
