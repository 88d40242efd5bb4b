// Strict JSON reading with field paths.
//
// Documents are parsed into a Boost.JSON DOM by our own handler, which re-reads every
// floating-point literal with std::from_chars: Boost.JSON 1.81's own parser is 1 ulp off on ~10%
// of 17-digit doubles (doc/architecture.md#toolchain-rules). Decoders walk the DOM with a `Path`
// that lives on the stack and is only turned into text when an error is reported.
#pragma once

#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace tinker::wire {

/// Parses one JSON document (UTF-8 validated, depth-limited). Throws `tinker::error`
/// (decode_error) saying where and why the text is not valid JSON.
boost::json::value parse_json(std::string_view text, boost::json::storage_ptr storage = {});

/// A position in a document: a chain of object keys and array indices back to the root.
class Path {
 public:
  Path() = default;
  Path(const Path& parent, std::string_view key) : parent_(&parent), key_(key) {}
  Path(const Path& parent, std::size_t index) : parent_(&parent), index_(index), is_index_(true) {}

  /// `a.b[3].c`; empty for the root.
  std::string str() const;

 private:
  void append_to(std::string& out) const;

  const Path* parent_ = nullptr;
  std::string_view key_;
  std::size_t index_ = 0;
  bool is_index_ = false;
};

/// Throws `tinker::error` (decode_error) with the message "<path>: <what>".
[[noreturn]] void fail_at(const Path& path, std::string_view what);

/// Throws "<path>: expected <expected>, got <kind of value>".
[[noreturn]] void fail_type(const Path& path, std::string_view expected, const boost::json::value& got);

/// "string", "integer", "number", "object", "array", "boolean" or "null".
const char* json_kind(const boost::json::value& value) noexcept;

/// Writes a DOM value as compact JSON with the project's number formatting.
void write_value(const boost::json::value& value, std::string& out);

}  // namespace tinker::wire
