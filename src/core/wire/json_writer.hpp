// A compact JSON writer appending to a std::string: no DOM, no per-element allocation.
//
// Boost.JSON's serializer writes 0.7 as 7E-1 and widens floats to 17 digits
// (doc/architecture.md#toolchain-rules), so numbers are written with std::to_chars in their
// shortest round-trip form instead: a float32 written here and read back as float32 is bit-identical.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tinker::wire {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  void key(std::string_view name);
  /// A key of the SDK's own schema (an ASCII identifier such as "seq_id"): written without the
  /// escape scan, since every field of every request body passes here. Keys that come from data
  /// (metadata maps) go through key().
  void schema_key(std::string_view name);
  /// A string value of the schema (a type tag such as "sample"): ASCII, nothing to escape.
  void schema_literal(std::string_view literal);

  /// Writes a string value; returns false (writing nothing) if `value` is not valid UTF-8.
  [[nodiscard]] bool string(std::string_view value);
  void integer(std::int64_t value);
  void unsigned_integer(std::uint64_t value);
  /// Returns false (writing nothing) for NaN or infinity, which JSON cannot carry.
  [[nodiscard]] bool number(double value);
  [[nodiscard]] bool number(float value);
  void boolean(bool value);
  void null();
  /// Writes already-valid JSON text verbatim.
  void raw(std::string_view json_text);

  /// Writes `[v0,v1,...]`. Returns the index of the first non-finite value, or -1 on success
  /// (in which case the whole array was written).
  [[nodiscard]] std::ptrdiff_t float_array(std::span<const float> values);
  void int_array(std::span<const std::int64_t> values);
  void int_array(std::span<const std::int32_t> values);

  std::string& buffer() noexcept { return out_; }

 private:
  void value_prefix() {
    if (needs_comma_) out_.push_back(',');
    needs_comma_ = true;
  }

  std::string& out_;
  bool needs_comma_ = false;
};

/// Appends `text` as a quoted JSON string: '"', '\\' and the controls below 0x20 escaped, every
/// other byte as it is (no UTF-8 check: JsonWriter::string does that). The one JSON string
/// escaper of the SDK and tinker-local.
void append_json_string(std::string& out, std::string_view text);

/// True if `text` is valid UTF-8 (no overlongs, no surrogates, at most U+10FFFF).
bool is_valid_utf8(std::string_view text) noexcept;

/// Standard base64 with padding, the encoding of `bytes` fields (doc/protocol.md#json-encoding).
std::string base64_encode(std::span<const std::uint8_t> bytes);
/// Returns false if `text` is not valid padded base64.
bool base64_decode(std::string_view text, std::string& out);

}  // namespace tinker::wire
