// Compares JSON texts by value: numbers numerically (1 == 1.0), objects ignoring key order.
#pragma once

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <string_view>

namespace tinker::test {

inline bool json_values_equivalent(const boost::json::value& a, const boost::json::value& b) {
  if (a.is_number() && b.is_number()) return a.to_number<double>() == b.to_number<double>();
  if (a.kind() != b.kind()) return false;
  if (a.is_array()) {
    const auto& x = a.get_array();
    const auto& y = b.get_array();
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!json_values_equivalent(x[i], y[i])) return false;
    }
    return true;
  }
  if (a.is_object()) {
    const auto& x = a.get_object();
    const auto& y = b.get_object();
    if (x.size() != y.size()) return false;
    for (const auto& entry : x) {
      const auto* other = y.if_contains(entry.key());
      if (other == nullptr || !json_values_equivalent(entry.value(), *other)) return false;
    }
    return true;
  }
  return a == b;
}

inline bool json_equivalent(std::string_view a, std::string_view b) {
  return json_values_equivalent(boost::json::parse(a), boost::json::parse(b));
}

}  // namespace tinker::test
