// Shared pieces of the protobuf codec (doc/protocol.md#protobuf): field paths, little-endian arrays, dtypes,
// tensor checks, parse/serialize. Internal to src/core/wire/proto_codec*.cpp.
#pragma once

#include "core/wire/borrowed_runs.hpp"

#include <tinker/codec.hpp>

#include "tinker_public.pb.h"

#include <google/protobuf/arena.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tinker::wire::proto {

// Every packed array on the wire is little-endian; we copy them with memcpy.
static_assert(std::endian::native == std::endian::little, "the protobuf codec assumes a little-endian machine");

namespace pb = ::tinker_public;

/// The wire types of the protobuf encoding that the hand-written reader and writer meet (the low
/// three bits of a field's key).
enum class WireType : std::uint32_t { varint = 0, fixed64 = 1, length_delimited = 2, fixed32 = 5 };

/// A field path such as `data[3].loss_fn_inputs.weights`, built as a chain of stack nodes and
/// turned into text only when an error is reported (the hot path never allocates for it).
/// A child refers to its parent, so it must not outlive it: children of temporaries are
/// refused at compile time (write `child("a.b")` rather than `child("a").child("b")`).
class Path {
 public:
  explicit Path(std::string_view name, std::int64_t index = -1) : name_(name), index_(index) {}
  Path(const Path& parent, std::string_view name, std::int64_t index = -1)
      : parent_(&parent), name_(name), index_(index) {}

  Path child(std::string_view name, std::int64_t index = -1) const& { return Path(*this, name, index); }
  Path child(std::string_view name, std::int64_t index = -1) const&& = delete;
  /// The same node with an index appended, e.g. `offsets[4]`.
  Path at(std::int64_t index) const& { return Path(*this, {}, index); }
  Path at(std::int64_t index) const&& = delete;
  std::string str() const;

 private:
  const Path* parent_ = nullptr;
  std::string_view name_;
  std::int64_t index_ = -1;
};

/// Throws `tinker::error(code, "<path>: <what>")`.
[[noreturn]] void fail(errc code, const Path& path, std::string_view what);
[[noreturn]] inline void decode_fail(const Path& path, std::string_view what) {
  fail(errc::decode_error, path, what);
}
[[noreturn]] inline void encode_fail(const Path& path, std::string_view what) {
  fail(errc::invalid_argument, path, what);
}

/// Encode-side checks for values the wire type cannot carry.
std::int32_t to_int32(std::int64_t value, const Path& path);
void check_utf8(std::string_view text, const Path& path);

// ---- little-endian arrays ------------------------------------------------------------------

template <class T>
void assign_le(std::string* out, std::span<const T> values) {
  static_assert(std::is_trivially_copyable_v<T>);
  out->assign(reinterpret_cast<const char*>(values.data()), values.size_bytes());
}

template <class T>
void append_le(std::string* out, std::span<const T> values) {
  out->append(reinterpret_cast<const char*>(values.data()), values.size_bytes());
}

/// Reads a packed array of T; the byte length must be a multiple of sizeof(T).
template <class T>
std::vector<T> read_le(std::string_view bytes, const Path& path) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (bytes.size() % sizeof(T) != 0) {
    decode_fail(path,
                "byte length " + std::to_string(bytes.size()) + " is not a multiple of " + std::to_string(sizeof(T)));
  }
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

// ---- dtypes and tensors --------------------------------------------------------------------

/// Bytes per element on the wire, 0 for DTYPE_UNSPECIFIED and unknown values.
std::size_t item_size(int dtype) noexcept;
pb::DType wire_dtype(const TensorData::Values& values) noexcept;
std::string_view dtype_name(int dtype) noexcept;

/// Decodes a packed array of `dtype` (FLOAT32, INT64, INT32, BFLOAT16), widening INT32 to int64
/// and BFLOAT16 to float32. `dtype_path` names the dtype field, `data_path` the bytes.
TensorData::Values read_values(int dtype, std::string_view bytes, const Path& dtype_path, const Path& data_path);

/// Appends the raw little-endian bytes of `values`.
void append_values(std::string* out, const TensorData::Values& values);

/// Product of `dims`; fails (with `code`) on a negative dimension or int64 overflow.
std::int64_t shape_product(std::span<const std::int64_t> dims, errc code, const Path& path);

/// Checks what the wire form needs to be self-consistent: shape product = value count for dense
/// tensors; 2-D shape, crow/col lengths, monotonic crow and in-range columns for CSR. NaN and
/// Inf are allowed (protobuf carries them, unlike JSON). Fails with `code` naming `path`.
void check_tensor(const TensorData& tensor, errc code, const Path& path);

/// The dense row-major values of a tensor that passed check_tensor (CSR is expanded).
TensorData::Values dense_values(const TensorData& tensor);

// ---- messages ------------------------------------------------------------------------------

/// Arena tuned for messages with thousands of sub-messages.
google::protobuf::ArenaOptions arena_options();

/// Deterministic serialization (maps sorted by key): the same value always gives the same bytes,
/// which is what the golden tests compare. `type_name` names the message in errors.
std::string serialize(const google::protobuf::MessageLite& message, std::string_view type_name);

/// Parses `bytes` into `message`; fails with decode_error naming `type_name`.
void parse(google::protobuf::MessageLite& message, std::string_view bytes, std::string_view type_name);

// ---- per-message codecs (proto_codec_request.cpp, proto_codec_output.cpp, proto_codec_sample.cpp)

/// The request's bytes. Given `borrowed`, its arrays of at least min_borrowed_run bytes are left
/// out of the returned spine and listed there instead (cleared first), pointing into `request`.
std::string encode_request(const ForwardBackwardRequest& request, std::vector<BorrowedRun>* borrowed = nullptr);
ForwardBackwardRequest decode_request(std::string_view bytes);
std::string encode_output(const ForwardBackwardOutput& output);
ForwardBackwardOutput decode_output(std::string_view bytes);
std::string encode_sample(const SampleResponse& response);
SampleResponse decode_sample(std::string_view bytes);
/// One SampledSequence from its fields (`path` names it in errors).
SampledSequence decode_sequence(int stop_reason, std::string_view tokens, std::string_view logprobs, const Path& path);
/// SampleResponse.prompt_logprobs: float32 values, NaN for a position without one.
std::vector<std::optional<float>> decode_prompt_logprobs(std::string_view bytes);
/// decode_sample through the generated libprotobuf parser: what decode_sample does for any message
/// decode_plain_sample leaves alone (and the reference its tests compare against).
SampleResponse decode_sample_with_libprotobuf(std::string_view bytes);
/// The usual sample result read straight from the wire format (proto_sample_reader.cpp): true and
/// `out` filled when `bytes` holds only sequences, prompt logprobs, the cache-hit count and unknown
/// fields in their plain forms; false, `out` untouched, for anything else (top-k logprobs, groups,
/// a known field in an unexpected wire type, a 10-byte varint, malformed bytes), which
/// libprotobuf then decodes or refuses. Throws the same decode errors as decode_sample.
bool decode_plain_sample(std::string_view bytes, SampleResponse& out);

}  // namespace tinker::wire::proto
