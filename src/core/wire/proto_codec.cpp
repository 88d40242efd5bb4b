// Protobuf codec (doc/protocol.md#protobuf): public entry points and the helpers shared by the per-message files.
#include "core/wire/proto_codec_internal.hpp"

#include "core/types/tensor_checks.hpp"
#include "core/wire/field_path.hpp"

#include <tinker/codec.hpp>
#include <tinker/error.hpp>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <climits>
#include <limits>
#include <string>
#include <type_traits>

namespace tinker {

std::string to_protobuf(const ForwardBackwardRequest& request) {
  return wire::proto::encode_request(request);
}
std::string wire::to_protobuf_borrowing(const ForwardBackwardRequest& request, std::vector<BorrowedRun>& borrowed) {
  return wire::proto::encode_request(request, &borrowed);
}
std::string to_protobuf(const ForwardBackwardOutput& output) {
  return wire::proto::encode_output(output);
}
std::string to_protobuf(const SampleResponse& response) {
  return wire::proto::encode_sample(response);
}

template <class T>
T from_protobuf(std::string_view bytes) {
  if constexpr (std::is_same_v<T, ForwardBackwardRequest>) {
    return wire::proto::decode_request(bytes);
  } else if constexpr (std::is_same_v<T, ForwardBackwardOutput>) {
    return wire::proto::decode_output(bytes);
  } else {
    static_assert(std::is_same_v<T, SampleResponse>, "from_protobuf: no protobuf form for this type");
    return wire::proto::decode_sample(bytes);
  }
}

template ForwardBackwardRequest from_protobuf<ForwardBackwardRequest>(std::string_view);
template ForwardBackwardOutput from_protobuf<ForwardBackwardOutput>(std::string_view);
template SampleResponse from_protobuf<SampleResponse>(std::string_view);

}  // namespace tinker

namespace tinker::wire::proto {

std::string Path::str() const {
  std::string text = parent_ != nullptr ? parent_->str() : std::string();
  append_path_step(text, name_, index_);
  return text;
}

void fail(errc code, const Path& path, std::string_view what) {
  std::string message = path.str();
  message += ": ";
  message += what;
  throw error(code, std::move(message));
}

std::int32_t to_int32(std::int64_t value, const Path& path) {
  if (value < std::numeric_limits<std::int32_t>::min() || value > std::numeric_limits<std::int32_t>::max()) {
    encode_fail(path, std::to_string(value) + " does not fit in the int32 of the protobuf form");
  }
  return static_cast<std::int32_t>(value);
}

namespace {

// Length of the UTF-8 sequence starting at `text[i]` (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF), or 0 if it is not valid.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const auto cont = [&](std::size_t k) { return i + k < text.size() && (byte(k) & 0xC0) == 0x80; };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) return cont(1) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (b0 == 0xE0 && byte(1) < 0xA0) return 0;   // overlong
    if (b0 == 0xED && byte(1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (b0 == 0xF0 && byte(1) < 0x90) return 0;   // overlong
    if (b0 == 0xF4 && byte(1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

// proto3 `string` fields must be UTF-8: parsers (the C++ one, Python's) reject the whole message
// otherwise, so catch it here where we can still name the field.
void check_utf8(std::string_view text, const Path& path) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_sequence_length(text, i);
    if (n == 0) encode_fail(path, "not valid UTF-8 (byte " + std::to_string(i) + ")");
    i += n;
  }
}

std::size_t item_size(int dtype) noexcept {
  switch (dtype) {
    case pb::DTYPE_FLOAT32: return 4;
    case pb::DTYPE_INT64: return 8;
    case pb::DTYPE_INT32: return 4;
    case pb::DTYPE_BFLOAT16: return 2;
    default: return 0;
  }
}

pb::DType wire_dtype(const TensorData::Values& values) noexcept {
  return values.index() == 0 ? pb::DTYPE_FLOAT32 : pb::DTYPE_INT64;
}

std::string_view dtype_name(int dtype) noexcept {
  switch (dtype) {
    case pb::DTYPE_FLOAT32: return "FLOAT32";
    case pb::DTYPE_INT64: return "INT64";
    case pb::DTYPE_INT32: return "INT32";
    case pb::DTYPE_BFLOAT16: return "BFLOAT16";
    case pb::DTYPE_UNSPECIFIED: return "UNSPECIFIED";
    default: return "unknown";
  }
}

TensorData::Values read_values(int dtype, std::string_view bytes, const Path& dtype_path, const Path& data_path) {
  switch (dtype) {
    case pb::DTYPE_FLOAT32: return read_le<float>(bytes, data_path);
    case pb::DTYPE_INT64: return read_le<std::int64_t>(bytes, data_path);
    case pb::DTYPE_INT32: {
      const std::vector<std::int32_t> narrow = read_le<std::int32_t>(bytes, data_path);
      return std::vector<std::int64_t>(narrow.begin(), narrow.end());
    }
    case pb::DTYPE_BFLOAT16: {
      // bfloat16 is the upper half of a float32: widening is exact.
      const std::vector<std::uint16_t> halves = read_le<std::uint16_t>(bytes, data_path);
      std::vector<float> wide(halves.size());
      for (std::size_t i = 0; i < halves.size(); ++i) {
        wide[i] = std::bit_cast<float>(static_cast<std::uint32_t>(halves[i]) << 16);
      }
      return wide;
    }
    default:
      decode_fail(dtype_path,
                  "unsupported dtype " + std::to_string(dtype) + " (" + std::string(dtype_name(dtype)) + ")");
  }
}

void append_values(std::string* out, const TensorData::Values& values) {
  std::visit([out](const auto& v) { append_le(out, std::span(v)); }, values);
}

std::int64_t shape_product(std::span<const std::int64_t> dims, errc code, const Path& path) {
  std::int64_t product = 1;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) fail(code, path.at(static_cast<std::int64_t>(i)), "negative dimension " + std::to_string(dims[i]));
    if (__builtin_mul_overflow(product, dims[i], &product)) fail(code, path, "element count overflows int64");
  }
  return product;
}

namespace {

template <class T>
std::vector<T> expand_csr(const std::vector<T>& values, const TensorData& tensor) {
  const std::int64_t cols = (*tensor.shape)[1];
  const auto& crow = *tensor.sparse_crow_indices;
  const auto& col = *tensor.sparse_col_indices;
  std::vector<T> dense(static_cast<std::size_t>((*tensor.shape)[0] * cols), T{});
  for (std::size_t r = 0; r + 1 < crow.size(); ++r) {
    for (auto k = crow[r]; k < crow[r + 1]; ++k) {
      const auto i = static_cast<std::size_t>(k);
      dense[r * static_cast<std::size_t>(cols) + static_cast<std::size_t>(col[i])] = values[i];
    }
  }
  return dense;
}

}  // namespace

void check_tensor(const TensorData& tensor, errc code, const Path& path) {
  // tensor_structure_problem computes rows + 1 for CSR; a hostile shape [INT64_MAX, n] would
  // overflow there, so compare the row count with the crow length first.
  if (tensor.is_sparse() && tensor.shape && tensor.shape->size() == 2 && (*tensor.shape)[0] >= 0 &&
      static_cast<std::uint64_t>((*tensor.shape)[0]) != tensor.sparse_crow_indices->size() - 1) {
    fail(code, path.child("sparse_crow_indices"),
         std::to_string(tensor.sparse_crow_indices->size()) + " entries, expected rows + 1 for shape [" +
             std::to_string((*tensor.shape)[0]) + ", " + std::to_string((*tensor.shape)[1]) + "]");
  }
  // The same rules as TensorData::validate and the JSON codec, minus the NaN/Inf check: protobuf
  // carries those.
  if (std::string problem = detail::tensor_structure_problem(tensor); !problem.empty()) fail(code, path, problem);
}

TensorData::Values dense_values(const TensorData& tensor) {
  if (!tensor.is_sparse()) return tensor.values;
  return std::visit([&](const auto& v) -> TensorData::Values { return expand_csr(v, tensor); }, tensor.values);
}

google::protobuf::ArenaOptions arena_options() {
  google::protobuf::ArenaOptions options;
  // Thousands of small sub-messages per request: start big enough that the arena does not
  // spend its time in malloc. (Bytes fields keep their payload on the heap either way.)
  options.start_block_size = 16 * 1024;
  options.max_block_size = 1024 * 1024;
  return options;
}

std::string serialize(const google::protobuf::MessageLite& message, std::string_view type_name) {
  const std::size_t size = message.ByteSizeLong();
  if (size > static_cast<std::size_t>(INT_MAX)) {
    fail(errc::invalid_argument, Path(type_name),
         "encoded size " + std::to_string(size) + " bytes exceeds the 2 GiB protobuf limit");
  }
  std::string out(size, '\0');
  google::protobuf::io::ArrayOutputStream array(out.data(), static_cast<int>(size));
  google::protobuf::io::CodedOutputStream stream(&array);
  stream.SetSerializationDeterministic(true);
  message.SerializeWithCachedSizes(&stream);
  stream.Trim();
  if (stream.HadError() || static_cast<std::size_t>(stream.ByteCount()) != size) {
    fail(errc::invalid_argument, Path(type_name), "protobuf serialization failed");
  }
  return out;
}

void parse(google::protobuf::MessageLite& message, std::string_view bytes, std::string_view type_name) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
    decode_fail(Path(type_name), std::to_string(bytes.size()) + " bytes exceed the 2 GiB protobuf limit");
  }
  if (!message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    decode_fail(Path(type_name), "malformed protobuf message (" + std::to_string(bytes.size()) + " bytes)");
  }
}

}  // namespace tinker::wire::proto
