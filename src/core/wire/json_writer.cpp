#include "core/wire/json_writer.hpp"

#include "core/wire/float_format.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace tinker::wire {
namespace {

constexpr char hex_digits[] = "0123456789abcdef";

// Characters that need escaping inside a JSON string: '"', '\\' and controls below 0x20.
constexpr std::array<bool, 256> escape_table = [] {
  std::array<bool, 256> table{};
  for (int c = 0; c < 0x20; ++c) table[static_cast<std::size_t>(c)] = true;
  table['"'] = true;
  table['\\'] = true;
  return table;
}();

bool needs_escape(unsigned char c) {
  return escape_table[c];
}

constexpr std::uint64_t every_byte(unsigned char c) noexcept {
  return 0x0101010101010101ULL * c;
}

// True if one of the 8 bytes of `word` is below 0x20, '"' or '\\' (the classic "has a zero
// byte" bit trick, applied to the word and to its XOR with each special character).
constexpr bool word_needs_escape(std::uint64_t word) noexcept {
  constexpr std::uint64_t high = every_byte(0x80);
  const auto zero_byte = [](std::uint64_t v) { return (v - every_byte(0x01)) & ~v & high; };
  const std::uint64_t below_space = (word - every_byte(0x20)) & ~word & high;
  return (below_space | zero_byte(word ^ every_byte('"')) | zero_byte(word ^ every_byte('\\'))) != 0;
}

// The length of the prefix of `text` that needs no escaping (usually all of it); 8 bytes at a
// time, since every key and string value of every request body passes here.
std::size_t plain_prefix(std::string_view text) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, p + i, 8);
    if (word_needs_escape(word)) break;
  }
  while (i < text.size() && !escape_table[p[i]]) ++i;
  return i;
}

// Appends `text` escaped; its first `plain` bytes are known to need no escaping.
void append_escaped(std::string& out, std::string_view text, std::size_t plain) {
  std::size_t run_start = 0;
  for (std::size_t i = plain; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (!needs_escape(c)) continue;
    out.append(text.data() + run_start, i - run_start);
    run_start = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        out += "\\u00";
        out.push_back(hex_digits[c >> 4]);
        out.push_back(hex_digits[c & 0xF]);
    }
  }
  out.append(text.data() + run_start, text.size() - run_start);
}

// Appends the one or two characters of a separator: a character at a time, since a copy of a
// runtime length is a memcpy call (every key and string value of every body passes here).
void append_short(std::string& out, std::string_view separator) {
  for (const char c : separator) out.push_back(c);
}

// Appends `open`, `text` and `close` with one capacity check; the first `plain` bytes of `text`
// need no escaping, and `text` is copied in one piece when that is all of it (keys and ids
// always), with no zero-fill of the string first.
void append_between(std::string& out, std::string_view open, std::string_view text, std::size_t plain,
                    std::string_view close) {
  const std::size_t needed = out.size() + open.size() + text.size() + close.size();
  if (needed > out.capacity()) out.reserve(std::max(needed, 2 * out.capacity()));
  append_short(out, open);
  if (plain != text.size()) {
    append_escaped(out, text, plain);
  } else {
    out.append(text.data(), text.size());
  }
  append_short(out, close);
}

// Appends `open`, `text` escaped and `close`.
void append_quoted(std::string& out, std::string_view open, std::string_view text, std::string_view close) {
  append_between(out, open, text, plain_prefix(text), close);
}

// Appends `open`, `name` and `close`; `name` is the schema's and needs no escaping (not scanned).
void append_plain(std::string& out, std::string_view open, std::string_view name, std::string_view close) {
  assert(plain_prefix(name) == name.size() && "schema names and literals need no escaping");
  append_between(out, open, name, name.size(), close);
}

// The quote that opens a key or a string value, after a comma unless it is the first.
std::string_view opening_quote(bool needs_comma) noexcept {
  return needs_comma ? std::string_view(",\"") : std::string_view("\"");
}

// Negative zero: to_chars writes "-0", which a reader takes for the integer 0 and loses the sign.
template <class T>
char* write_number(char* first, char* last, T value) {
  if constexpr (std::is_same_v<T, float>) {
    if (last - first >= max_float_chars) return format_shortest(first, value);
  }
  char* end = std::to_chars(first, last, value).ptr;
  if constexpr (std::is_floating_point_v<T>) {
    if (value == 0 && std::signbit(value) && last - end >= 2) {
      *end++ = '.';
      *end++ = '0';
    }
  }
  return end;
}

template <class T>
void append_number(std::string& out, T value) {
  std::array<char, 32> buf;
  out.append(buf.data(), write_number(buf.data(), buf.data() + buf.size(), value));
}

// Formats numbers into a stack buffer and appends it in blocks: one memcpy per block instead of
// growing (and zero-filling) the string for the worst case of every element. Returns false,
// leaving `out` as it was, if a float is not finite.
template <class T>
bool append_number_block(std::string& out, std::span<const T> values, std::size_t max_chars) {
  constexpr std::size_t block = 512;
  char buffer[block * (max_float_chars + 1)];
  const std::size_t old_size = out.size();
  for (std::size_t start = 0; start < values.size(); start += block) {
    const auto chunk = values.subspan(start, std::min(block, values.size() - start));
    char* cursor = buffer;
    if (start != 0) *cursor++ = ',';
    if constexpr (std::is_same_v<T, float>) {
      cursor = format_shortest_list(cursor, chunk);
      if (cursor == nullptr) {
        out.resize(old_size);
        return false;
      }
    } else {
      for (std::size_t i = 0; i < chunk.size(); ++i) {
        if (i != 0) *cursor++ = ',';
        cursor = write_number(cursor, cursor + max_chars, chunk[i]);
      }
    }
    out.append(buffer, cursor);
  }
  return true;
}

}  // namespace

void JsonWriter::begin_object() {
  value_prefix();
  out_.push_back('{');
  needs_comma_ = false;
}

void JsonWriter::end_object() {
  out_.push_back('}');
  needs_comma_ = true;
}

void JsonWriter::begin_array() {
  value_prefix();
  out_.push_back('[');
  needs_comma_ = false;
}

void JsonWriter::end_array() {
  out_.push_back(']');
  needs_comma_ = true;
}

void JsonWriter::key(std::string_view name) {
  append_quoted(out_, opening_quote(needs_comma_), name, "\":");
  needs_comma_ = false;
}

void JsonWriter::schema_key(std::string_view name) {
  append_plain(out_, opening_quote(needs_comma_), name, "\":");
  needs_comma_ = false;
}

void JsonWriter::schema_literal(std::string_view literal) {
  append_plain(out_, opening_quote(needs_comma_), literal, "\"");
  needs_comma_ = true;
}

bool JsonWriter::string(std::string_view value) {
  if (!is_valid_utf8(value)) return false;
  append_quoted(out_, opening_quote(needs_comma_), value, "\"");
  needs_comma_ = true;
  return true;
}

void JsonWriter::integer(std::int64_t value) {
  value_prefix();
  append_number(out_, value);
}

void JsonWriter::unsigned_integer(std::uint64_t value) {
  value_prefix();
  append_number(out_, value);
}

bool JsonWriter::number(double value) {
  if (!std::isfinite(value)) return false;
  value_prefix();
  append_number(out_, value);
  return true;
}

bool JsonWriter::number(float value) {
  if (!std::isfinite(value)) return false;
  value_prefix();
  append_number(out_, value);
  return true;
}

void JsonWriter::boolean(bool value) {
  value_prefix();
  out_ += value ? "true" : "false";
}

void JsonWriter::null() {
  value_prefix();
  out_ += "null";
}

void JsonWriter::raw(std::string_view json_text) {
  value_prefix();
  out_ += json_text;
}

std::ptrdiff_t JsonWriter::float_array(std::span<const float> values) {
  const std::size_t old_size = out_.size();
  const bool old_needs_comma = needs_comma_;
  begin_array();
  if (append_number_block(out_, values, max_float_chars)) {
    end_array();
    return -1;
  }
  // Rare path: undo the opening bracket and find the offending value for the error message.
  out_.resize(old_size);
  needs_comma_ = old_needs_comma;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) return static_cast<std::ptrdiff_t>(i);
  }
  return -1;  // unreachable: append_number_block only fails on a non-finite value
}

void JsonWriter::int_array(std::span<const std::int64_t> values) {
  begin_array();
  (void)append_number_block(out_, values, 20);
  end_array();
}

void JsonWriter::int_array(std::span<const std::int32_t> values) {
  begin_array();
  (void)append_number_block(out_, values, 11);
  end_array();
}

void append_json_string(std::string& out, std::string_view text) {
  append_quoted(out, "\"", text, "\"");
}

bool is_valid_utf8(std::string_view text) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    // ASCII runs 8 bytes at a time (ids and names are all ASCII).
    std::uint64_t word;
    while (end - p >= 8 && (std::memcpy(&word, p, 8), (word & 0x8080808080808080ULL) == 0)) p += 8;
    if (p == end) break;
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int extra = 0;
    std::uint32_t code = 0;
    if ((c & 0xE0) == 0xC0) {
      extra = 1, code = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, code = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, code = c & 0x07;
    } else {
      return false;
    }
    if (end - p <= extra) return false;
    for (int i = 1; i <= extra; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
      code = (code << 6) | (p[i] & 0x3F);
    }
    static constexpr std::uint32_t min_code[] = {0, 0x80, 0x800, 0x10000};
    if (code < min_code[extra] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    p += extra + 1;
  }
  return true;
}

namespace {
constexpr char base64_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace

std::string base64_encode(std::span<const std::uint8_t> bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out.push_back(base64_alphabet[(n >> 18) & 63]);
    out.push_back(base64_alphabet[(n >> 12) & 63]);
    out.push_back(base64_alphabet[(n >> 6) & 63]);
    out.push_back(base64_alphabet[n & 63]);
  }
  const std::size_t rest = bytes.size() - i;
  if (rest == 0) return out;
  std::uint32_t n = bytes[i] << 16;
  if (rest == 2) n |= bytes[i + 1] << 8;
  out.push_back(base64_alphabet[(n >> 18) & 63]);
  out.push_back(base64_alphabet[(n >> 12) & 63]);
  out.push_back(rest == 2 ? base64_alphabet[(n >> 6) & 63] : '=');
  out.push_back('=');
  return out;
}

bool base64_decode(std::string_view text, std::string& out) {
  out.clear();
  if (text.size() % 4 != 0) return false;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int v[4];
    int padding = 0;
    for (int j = 0; j < 4; ++j) {
      const char c = text[i + j];
      if (c == '=' && last && j >= 2) {
        v[j] = 0;
        ++padding;
        continue;
      }
      if (padding > 0) return false;  // data after padding
      v[j] = base64_value(c);
      if (v[j] < 0) return false;
    }
    const std::uint32_t n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out.push_back(static_cast<char>((n >> 16) & 0xFF));
    if (padding < 2) out.push_back(static_cast<char>((n >> 8) & 0xFF));
    if (padding < 1) out.push_back(static_cast<char>(n & 0xFF));
  }
  return true;
}

}  // namespace tinker::wire
