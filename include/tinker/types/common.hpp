/// \file
/// Building blocks shared by the wire types: token ids, timestamps and free-form JSON values.
///
/// Every wire type in include/tinker/types/ is a value type with a constructor (never an
/// aggregate: GCC 12 miscompiles aggregate temporaries inside `co_await`, see
/// `doc/architecture.md#toolchain-rules`), compares with `==` field by field, and prints as its
/// JSON form through `operator<<` (for test failures and logs). Their wire forms are described in
/// `doc/protocol.md#core-types` and `doc/protocol.md#json-encoding`.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <string_view>

namespace tinker {

/// A token id. The protobuf wire form carries int32 (`doc/protocol.md#protobuf`), so ids must fit
/// in 32 bits.
using TokenId = std::int32_t;

/// A point in time on the wire: UTC with microsecond precision, written as RFC 3339 text
/// (`2026-08-08T12:00:00Z`, `doc/protocol.md#json-encoding`).
using Timestamp = std::chrono::sys_time<std::chrono::microseconds>;

/// Parses an RFC 3339 timestamp (`2026-08-08T12:00:00Z`, fractional seconds and `+hh:mm`
/// offsets allowed; no offset means UTC). Throws `tinker::error` (invalid_argument) otherwise.
Timestamp parse_timestamp(std::string_view text);

/// Formats as `YYYY-MM-DDTHH:MM:SS[.ffffff]Z` (fraction only when non-zero).
std::string format_timestamp(Timestamp t);

/// A JSON value kept as its compact text, for the protocol's free-form fields (user metadata,
/// telemetry event data). Decoding normalises the text, so equal values compare equal.
class RawJson {
 public:
  /// JSON `null`.
  RawJson() : text_("null") {}

  /// Wraps JSON text. Throws `tinker::error` (invalid_argument) if it is not one valid JSON value.
  static RawJson parse(std::string_view json_text);
  /// A JSON string holding `value`, escaped as JSON requires. Throws `tinker::error`
  /// (invalid_argument) if `value` is not valid UTF-8.
  static RawJson string(std::string_view value);
  /// A JSON number. Throws `tinker::error` (invalid_argument)
  /// for NaN and infinities, which JSON cannot carry.
  static RawJson number(double value);
  /// A JSON integer.
  static RawJson integer(std::int64_t value);
  /// JSON `true` or `false`.
  static RawJson boolean(bool value);

  /// The compact JSON text, e.g. `{"a":1}` or `"text"`.
  const std::string& text() const noexcept { return text_; }
  /// True for JSON `null` (also a default-constructed value).
  bool is_null() const noexcept { return text_ == "null"; }
  /// True for a JSON string.
  bool is_string() const noexcept { return !text_.empty() && text_.front() == '"'; }

  /// Equal when the compact texts are equal.
  friend bool operator==(const RawJson&, const RawJson&) = default;

 private:
  struct trusted_tag {};
  RawJson(trusted_tag, std::string text) : text_(std::move(text)) {}
  friend struct RawJsonAccess;
  std::string text_;
};

/// A free-form JSON object (string keys, any values), e.g. `user_metadata`.
using JsonObject = std::map<std::string, RawJson>;

/// Builds a JsonObject whose values are all JSON strings. Throws `tinker::error`
/// (invalid_argument) for a value that is not valid UTF-8.
JsonObject json_object_of_strings(const std::map<std::string, std::string>& values);

/// Prints the compact JSON text.
std::ostream& operator<<(std::ostream& os, const RawJson& value);

}  // namespace tinker

/// Declares `operator<<` for a wire type; it prints the type's JSON encoding (as `to_json`).
/// Used by the headers of include/tinker/types/; not meant for user types.
#define TINKER_DECLARE_PRINTABLE(Type) std::ostream& operator<<(std::ostream& os, const Type& value)
