// Building blocks shared by the wire types: token ids, timestamps and free-form JSON values.
//
// Every wire type in include/tinker/types/ is a non-aggregate value type (it declares a
// constructor; GCC 12 miscompiles aggregate temporaries inside co_await, architecture rule 1),
// compares with ==, and prints as its JSON form through operator<< (for test failures and logs).
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <string_view>

namespace tinker {

/// A token id. The protobuf wire form carries int32 (spec 17.2), so ids must fit in 32 bits.
using TokenId = std::int32_t;

/// A point in time on the wire (RFC 3339 / ISO-8601 text, spec 1.4), microsecond precision, UTC.
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
  static RawJson string(std::string_view value);
  static RawJson number(double value);
  static RawJson integer(std::int64_t value);
  static RawJson boolean(bool value);

  const std::string& text() const noexcept { return text_; }
  bool is_null() const noexcept { return text_ == "null"; }
  bool is_string() const noexcept { return !text_.empty() && text_.front() == '"'; }

  friend bool operator==(const RawJson&, const RawJson&) = default;

 private:
  struct trusted_tag {};
  RawJson(trusted_tag, std::string text) : text_(std::move(text)) {}
  friend struct RawJsonAccess;
  std::string text_;
};

/// A free-form JSON object (string keys, any values), e.g. `user_metadata`.
using JsonObject = std::map<std::string, RawJson>;

/// Builds a JsonObject whose values are all strings.
JsonObject json_object_of_strings(const std::map<std::string, std::string>& values);

std::ostream& operator<<(std::ostream& os, const RawJson& value);

}  // namespace tinker

/// Declares `operator<<` for a wire type; it prints the type's JSON encoding.
#define TINKER_DECLARE_PRINTABLE(Type) std::ostream& operator<<(std::ostream& os, const Type& value)
