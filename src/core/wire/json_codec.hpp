// The JSON codec machinery shared by every wire type.
//
// Each type lists its fields once, in `wire_fields(V& v, T& x)` (json_schema.hpp), and two
// visitors give that list its meaning:
//   v.req(name, member)      required on decode; always written on encode
//   v.opt(name, member)      may be absent on decode (keeps the default); written on encode
//                            unless it is an empty std::optional (omit nulls, keep defaults:
//                            doc/protocol.md#json-encoding)
//   v.nullable(name, member) an std::optional written as explicit null when empty
//   v.tag(name, literal)     a discriminator: always written; checked on decode when present
//   v.strict()               on decode, unknown keys are an error (billing event_info, the one
//                            response type that forbids them: doc/protocol.md#json-encoding)
// Scalars, containers and special types are handled by the `write_json`/`read_json` overloads
// below and in json_codec_core.cpp.
#pragma once

#include "core/wire/json_reader.hpp"
#include "core/wire/json_writer.hpp"

#include <tinker/types.hpp>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/value.hpp>

#include <array>
#include <concepts>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace tinker::wire {

// ---------------------------------------------------------------------------------------------
// Encoding

/// Encoder state: the writer plus a path stack used only to name fields in errors.
class JsonEncoder {
 public:
  /// `lenient` is for printing: values JSON cannot carry are written as strings, never thrown.
  JsonEncoder(JsonWriter& writer, bool lenient) : writer_(writer), lenient_(lenient) {}

  template <class T>
  void req(std::string_view name, const T& value);
  template <class T>
  void opt(std::string_view name, const T& value);
  template <class T>
  void nullable(std::string_view name, const std::optional<T>& value);
  void tag(std::string_view name, std::string_view literal);
  void strict() {}

  JsonWriter& writer() noexcept { return writer_; }
  bool lenient() const noexcept { return lenient_; }

  /// Field path bookkeeping for error messages.
  void push(std::string_view key) { push(Segment{key, 0, false}); }
  void push(std::size_t index) { push(Segment{{}, index, true}); }
  void pop() {
    --depth_;
    if (depth_ >= inline_depth) deep_path_.pop_back();
  }
  std::string path_string() const;
  [[noreturn]] void fail(std::string_view what) const;

 private:
  struct Segment {
    std::string_view key;
    std::size_t index;
    bool is_index;
  };
  // Every field of every body is pushed and popped: the usual depth lives in the encoder (no
  // allocation per body), deeper levels in deep_path_.
  static constexpr std::size_t inline_depth = 12;
  void push(const Segment& segment) {
    if (depth_ < inline_depth) {
      path_[depth_] = segment;
    } else {
      deep_path_.push_back(segment);
    }
    ++depth_;
  }
  const Segment& segment(std::size_t level) const {
    return level < inline_depth ? path_[level] : deep_path_[level - inline_depth];
  }

  JsonWriter& writer_;
  bool lenient_;
  std::size_t depth_ = 0;
  std::array<Segment, inline_depth> path_;
  std::vector<Segment> deep_path_;
};

/// Decoder state for one JSON object: lookups by key, with the object's path.
class JsonDecoder {
 public:
  JsonDecoder(const boost::json::object& object, const Path& path) : object_(object), path_(path) {}

  template <class T>
  void req(std::string_view name, T& value);
  template <class T>
  void opt(std::string_view name, T& value);
  template <class T>
  void nullable(std::string_view name, std::optional<T>& value) {
    opt(name, value);
  }
  void tag(std::string_view name, std::string_view literal);
  /// Fails on keys that no req/opt/tag call looked up (call it last).
  void strict();

  const boost::json::object& object() const noexcept { return object_; }
  const Path& path() const noexcept { return path_; }

 private:
  const boost::json::value* find(std::string_view name);

  const boost::json::object& object_;
  const Path& path_;
  // Keys looked up so far, so strict() can name an unknown one (strict objects are small).
  std::array<std::string_view, 16> claimed_{};
  std::size_t claimed_count_ = 0;
};

// Types that list their fields with wire_fields (see json_schema.hpp).
template <class T>
concept DescribedType = requires(JsonEncoder& e, JsonDecoder& d, T& x) {
  wire_fields(e, x);
  wire_fields(d, x);
};

// ---------------------------------------------------------------------------------------------
// Scalar and special-type overloads (json_codec_core.cpp).

void write_json(JsonEncoder& e, const std::string& value);
void write_json(JsonEncoder& e, bool value);
void write_json(JsonEncoder& e, std::int64_t value);
void write_json(JsonEncoder& e, std::int32_t value);
void write_json(JsonEncoder& e, std::uint64_t value);
void write_json(JsonEncoder& e, double value);
void write_json(JsonEncoder& e, float value);
void write_json(JsonEncoder& e, const RawJson& value);
void write_json(JsonEncoder& e, const Timestamp& value);
void write_json(JsonEncoder& e, const TensorData& value);
void write_json(JsonEncoder& e, const std::vector<std::uint8_t>& bytes);  // base64
void write_json(JsonEncoder& e, const ModelInputChunk& value);
void write_json(JsonEncoder& e, const ProvenanceSpan& value);
void write_json(JsonEncoder& e, const StopCondition& value);
void write_json(JsonEncoder& e, const TopkEntry& value);
void write_json(JsonEncoder& e, const billing::EventInfo& value);
void write_json(JsonEncoder& e, const ForwardBackwardRequest& value);
void write_json(JsonEncoder& e, const OptimParams& value);      // json_codec_optimizer.cpp
void write_json(JsonEncoder& e, const OptimizerConfig& value);  // json_codec_optimizer.cpp
void write_json(JsonEncoder& e, const SearchOwner& value);
void write_json(JsonEncoder& e, const std::vector<TokenId>& value);
void write_json(JsonEncoder& e, const std::vector<float>& value);

void read_json(const boost::json::value& v, const Path& p, std::string& out);
void read_json(const boost::json::value& v, const Path& p, bool& out);
void read_json(const boost::json::value& v, const Path& p, std::int64_t& out);
void read_json(const boost::json::value& v, const Path& p, std::int32_t& out);
void read_json(const boost::json::value& v, const Path& p, std::uint64_t& out);
void read_json(const boost::json::value& v, const Path& p, double& out);
void read_json(const boost::json::value& v, const Path& p, float& out);
void read_json(const boost::json::value& v, const Path& p, RawJson& out);
void read_json(const boost::json::value& v, const Path& p, Timestamp& out);
void read_json(const boost::json::value& v, const Path& p, TensorData& out);
void read_json(const boost::json::value& v, const Path& p, std::vector<std::uint8_t>& bytes);  // base64
void read_json(const boost::json::value& v, const Path& p, ModelInputChunk& out);
void read_json(const boost::json::value& v, const Path& p, ProvenanceSpan& out);
void read_json(const boost::json::value& v, const Path& p, StopCondition& out);
void read_json(const boost::json::value& v, const Path& p, TopkEntry& out);
void read_json(const boost::json::value& v, const Path& p, billing::EventInfo& out);
void read_json(const boost::json::value& v, const Path& p, ForwardBackwardRequest& out);
void read_json(const boost::json::value& v, const Path& p, OptimParams& out);
void read_json(const boost::json::value& v, const Path& p, OptimizerConfig& out);
void read_json(const boost::json::value& v, const Path& p, SearchOwner& out);
void read_json(const boost::json::value& v, const Path& p, std::vector<TokenId>& out);
void read_json(const boost::json::value& v, const Path& p, std::vector<float>& out);

// Enums travel as strings (json_codec_core.cpp).
#define TINKER_WIRE_ENUM(Enum)                 \
  void write_json(JsonEncoder& e, Enum value); \
  void read_json(const boost::json::value& v, const Path& p, Enum& out)
TINKER_WIRE_ENUM(ImageFormat);
TINKER_WIRE_ENUM(StopReason);
TINKER_WIRE_ENUM(QueueState);
TINKER_WIRE_ENUM(RequestErrorCategory);
TINKER_WIRE_ENUM(CheckpointType);
TINKER_WIRE_ENUM(TraceExportStatus);
TINKER_WIRE_ENUM(TelemetryEventKind);
TINKER_WIRE_ENUM(Severity);
#undef TINKER_WIRE_ENUM

// ---------------------------------------------------------------------------------------------
// Generic overloads: described types, optionals, vectors, string-keyed maps.

template <DescribedType T>
void write_json(JsonEncoder& e, const T& value) {
  e.writer().begin_object();
  wire_fields(e, const_cast<T&>(value));  // the encoder only reads
  e.writer().end_object();
}

template <class T>
void write_json(JsonEncoder& e, const std::optional<T>& value) {
  if (value) {
    write_json(e, *value);
  } else {
    e.writer().null();
  }
}

template <class T>
void write_json(JsonEncoder& e, const std::vector<T>& values) {
  e.writer().begin_array();
  for (std::size_t i = 0; i < values.size(); ++i) {
    e.push(i);
    write_json(e, values[i]);
    e.pop();
  }
  e.writer().end_array();
}

template <class T>
void write_json(JsonEncoder& e, const std::map<std::string, T>& values) {
  e.writer().begin_object();
  for (const auto& [key, value] : values) {
    e.push(key);
    if (!is_valid_utf8(key) && !e.lenient()) e.fail("key is not valid UTF-8");
    e.writer().key(key);
    write_json(e, value);
    e.pop();
  }
  e.writer().end_object();
}

template <DescribedType T>
void read_json(const boost::json::value& v, const Path& p, T& out) {
  if (!v.is_object()) fail_type(p, "object", v);
  JsonDecoder decoder(v.get_object(), p);
  wire_fields(decoder, out);
}

template <class T>
void read_json(const boost::json::value& v, const Path& p, std::optional<T>& out) {
  if (v.is_null()) {
    out.reset();
    return;
  }
  read_json(v, p, out.emplace());
}

template <class T>
void read_json(const boost::json::value& v, const Path& p, std::vector<T>& out) {
  if (!v.is_array()) fail_type(p, "array", v);
  const auto& array = v.get_array();
  out.clear();
  out.resize(array.size());
  for (std::size_t i = 0; i < array.size(); ++i) read_json(array[i], Path(p, i), out[i]);
}

template <class T>
void read_json(const boost::json::value& v, const Path& p, std::map<std::string, T>& out) {
  if (!v.is_object()) fail_type(p, "object", v);
  out.clear();
  for (const auto& entry : v.get_object()) {
    const std::string_view key = entry.key();
    read_json(entry.value(), Path(p, key), out[std::string(key)]);
  }
}

// ---------------------------------------------------------------------------------------------
// Visitor members.

template <class T>
void JsonEncoder::req(std::string_view name, const T& value) {
  writer_.schema_key(name);
  push(name);
  write_json(*this, value);
  pop();
}

template <class T>
void JsonEncoder::opt(std::string_view name, const T& value) {
  if constexpr (requires { value.has_value(); }) {
    if (!value.has_value()) return;
  }
  req(name, value);
}

template <class T>
void JsonEncoder::nullable(std::string_view name, const std::optional<T>& value) {
  req(name, value);  // an empty optional writes null
}

template <class T>
void JsonDecoder::req(std::string_view name, T& value) {
  const boost::json::value* found = find(name);
  if (found == nullptr) fail_at(Path(path_, name), "missing required field");
  read_json(*found, Path(path_, name), value);
}

template <class T>
void JsonDecoder::opt(std::string_view name, T& value) {
  const boost::json::value* found = find(name);
  if (found == nullptr) return;
  // An explicit null means "absent" for optional members and for defaulted ones.
  if (found->is_null()) {
    if constexpr (requires { value.reset(); }) value.reset();
    return;
  }
  read_json(*found, Path(path_, name), value);
}

// ---------------------------------------------------------------------------------------------
// Entry points used by the public codec.hpp templates.

template <class T>
void encode_json(const T& value, std::string& out, bool lenient) {
  JsonWriter writer(out);
  JsonEncoder encoder(writer, lenient);
  write_json(encoder, value);
}

template <class T>
void decode_json(std::string_view text, T& out) {
  // The DOM only lives for the duration of the decode: allocate it from one arena.
  boost::json::monotonic_resource arena(text.size() + 1024);
  const boost::json::value document = parse_json(text, &arena);
  read_json(document, Path{}, out);
}

}  // namespace tinker::wire
