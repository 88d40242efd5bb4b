// Python's formatting of JSON values (renderers/python_format.hpp).
#include "renderers/python_format.hpp"

#include "core/wire/json_writer.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace tinker::renderers::detail::python {
namespace {

namespace json = boost::json;

// json.dumps of a string with ensure_ascii=False is JSON's escaping and nothing more: the SDK's
// one escaper.
using wire::append_json_string;

// repr() of a str: single quotes unless the text has one and no double quote; control
// characters escaped (Python also escapes the other non-printable Unicode characters, which a
// JSON Schema's constraint values do not hold in practice).
void append_repr_string(std::string& out, std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const char quote = has_single && text.find('"') == std::string_view::npos ? '"' : '\'';
  out += quote;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\\' || c == static_cast<unsigned char>(quote)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\x%02x", c);
      out += escape;
    } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xa0) {
      char escape[8];  // U+0080..U+009F, the C1 controls
      std::snprintf(escape, sizeof escape, "\\x%02x", static_cast<unsigned char>(text[++i]));
      out += escape;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += quote;
}

}  // namespace

// repr() of a float: the shortest digits that read back the same, in fixed notation when the
// decimal exponent is in [-4, 16), else as "1e-05" / "1.5e+16"; an integral value keeps ".0".
std::string float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buffer[64];
  const auto written = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  std::string_view text(buffer, static_cast<std::size_t>(written.ptr - buffer));
  std::string out;
  if (text.front() == '-') {
    out = "-";
    text.remove_prefix(1);
  }
  const std::size_t e = text.find('e');
  std::string digits(1, text.front());
  if (e > 1) digits += text.substr(2, e - 2);  // after "d."
  int exponent = 0;
  std::from_chars(text.data() + e + (text[e + 1] == '+' ? 2 : 1), text.data() + text.size(), exponent);
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) return out + "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    const auto integral = static_cast<std::size_t>(exponent) + 1;
    if (digits.size() <= integral) return out + digits + std::string(integral - digits.size(), '0') + ".0";
    return out + digits.substr(0, integral) + "." + digits.substr(integral);
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  const std::string magnitude = std::to_string(std::abs(exponent));
  return out + (exponent < 0 ? "e-" : "e+") + (magnitude.size() < 2 ? "0" : "") + magnitude;
}

// json.dumps(value, ensure_ascii=False), with the compact separators or Python's default ones.
void append_json(std::string& out, const json::value& value, bool compact) {
  const std::string_view item_separator = compact ? "," : ", ";
  const std::string_view key_separator = compact ? ":" : ": ";
  switch (value.kind()) {
    case json::kind::null: out += "null"; return;
    case json::kind::bool_: out += value.get_bool() ? "true" : "false"; return;
    case json::kind::int64: out += std::to_string(value.get_int64()); return;
    case json::kind::uint64: out += std::to_string(value.get_uint64()); return;
    case json::kind::double_: {
      const double number = value.get_double();
      if (std::isnan(number))
        out += "NaN";
      else if (std::isinf(number))
        out += number < 0 ? "-Infinity" : "Infinity";
      else
        out += float_repr(number);
      return;
    }
    case json::kind::string: append_json_string(out, value.get_string()); return;
    case json::kind::array: {
      out += '[';
      bool first = true;
      for (const json::value& item : value.get_array()) {
        if (!first) out += item_separator;
        first = false;
        append_json(out, item, compact);
      }
      out += ']';
      return;
    }
    case json::kind::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, item] : value.get_object()) {
        if (!first) out += item_separator;
        first = false;
        append_json_string(out, key);
        out += key_separator;
        append_json(out, item, compact);
      }
      out += '}';
      return;
    }
  }
}

// repr() of the value json.loads gives: None, True, 1, 1.0, 'text', [..], {..}.
void append_repr(std::string& out, const json::value& value) {
  switch (value.kind()) {
    case json::kind::null: out += "None"; return;
    case json::kind::bool_: out += value.get_bool() ? "True" : "False"; return;
    case json::kind::string: append_repr_string(out, value.get_string()); return;
    case json::kind::array: {
      out += '[';
      bool first = true;
      for (const json::value& item : value.get_array()) {
        if (!first) out += ", ";
        first = false;
        append_repr(out, item);
      }
      out += ']';
      return;
    }
    case json::kind::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, item] : value.get_object()) {
        if (!first) out += ", ";
        first = false;
        append_repr_string(out, key);
        out += ": ";
        append_repr(out, item);
      }
      out += '}';
      return;
    }
    default: append_json(out, value, false);  // numbers: as json.dumps writes them
  }
}

// str() of the value json.loads gives: a string as it is, anything else as repr().
std::string str(const json::value& value) {
  if (value.is_string()) return std::string(value.get_string());
  std::string out;
  append_repr(out, value);
  return out;
}

bool truthy(const json::value& value) {
  switch (value.kind()) {
    case json::kind::null: return false;
    case json::kind::bool_: return value.get_bool();
    case json::kind::int64: return value.get_int64() != 0;
    case json::kind::uint64: return value.get_uint64() != 0;
    case json::kind::double_: return value.get_double() != 0;
    case json::kind::string: return !value.get_string().empty();
    case json::kind::array: return !value.get_array().empty();
    case json::kind::object: return !value.get_object().empty();
  }
  return false;
}

// The value with every object's keys in sorted order, as Kimi's tokenizer passes tools on.
json::value deep_sorted(const json::value& value) {
  if (value.is_array()) {
    json::array sorted;
    for (const json::value& item : value.get_array()) sorted.push_back(deep_sorted(item));
    return sorted;
  }
  if (!value.is_object()) return value;
  std::vector<const json::key_value_pair*> members;
  for (const json::key_value_pair& member : value.get_object()) members.push_back(&member);
  std::sort(members.begin(), members.end(),
            [](const auto* a, const auto* b) { return std::string_view(a->key()) < std::string_view(b->key()); });
  json::object sorted;
  for (const json::key_value_pair* member : members) sorted.emplace(member->key(), deep_sorted(member->value()));
  return sorted;
}

}  // namespace tinker::renderers::detail::python
