// ForwardBackwardRequest <-> tinker_public.ForwardBackwardRequest (doc/protocol.md#protobuf).
//
// The SDK encodes it (Python SDK 0.25 always sends forward_backward as protobuf); tinker-local
// decodes it, so the decoder is strict: every length is checked and errors name the field.
#include "core/wire/proto_codec_internal.hpp"

#include <bit>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <variant>

namespace tinker::wire::proto {
namespace {

using google::protobuf::Arena;

// ---- encode --------------------------------------------------------------------------------
//
// The request is written straight into the output buffer instead of going through the
// generated classes: those first copy every datum's arrays into ~3 heap strings per datum
// (3,000 allocations, page faults and a second copy of every byte for a 1024-datum batch):
// 12.7 ms instead of 1.0 ms for benchmarks/codec_proto.cpp's 8 MB request. The bytes are
// exactly what the generated code writes with deterministic serialization (fields in number
// order, map entries sorted by key, key and value always present in an entry); the golden and
// round-trip tests compare the two.

constexpr std::size_t varint_size(std::uint64_t v) {
  return (static_cast<std::size_t>(std::bit_width(v | 1)) + 6) / 7;
}
// int32/int64 fields are varints of the value sign-extended to 64 bits.
constexpr std::uint64_t as_varint(std::int64_t v) {
  return static_cast<std::uint64_t>(v);
}
constexpr std::size_t tag_size(int field) {
  return varint_size(static_cast<std::uint64_t>(field) << 3);
}
// A length-delimited field that is always written (sub-messages, oneof members, map entries).
constexpr std::size_t len_field(int field, std::size_t payload) {
  return tag_size(field) + varint_size(payload) + payload;
}
// A proto3 bytes/string field without presence: omitted when empty.
constexpr std::size_t bytes_field(int field, std::size_t payload) {
  return payload == 0 ? 0 : len_field(field, payload);
}

// Appends to a string whose capacity was reserved for the whole message: appending into
// reserved capacity writes every byte once, where sizing the string first would zero-fill
// megabytes only to overwrite them. Given `borrowed`, the arrays of at least min_borrowed_run
// bytes are not copied but recorded there as runs of the caller's memory (borrowed_runs.hpp).
class WireWriter {
 public:
  explicit WireWriter(std::string& out, std::vector<BorrowedRun>* borrowed = nullptr)
      : out_(out), borrowed_(borrowed) {}

  void varint(std::uint64_t v) {
    char bytes[10];
    std::size_t n = 0;
    while (v >= 0x80) {
      bytes[n++] = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    bytes[n++] = static_cast<char>(v);
    out_.append(bytes, n);
  }
  void tag(int field, WireType type) {
    varint((static_cast<std::uint64_t>(field) << 3) | static_cast<std::uint64_t>(type));
  }
  void len(int field, std::size_t payload) {
    tag(field, WireType::length_delimited);
    varint(payload);
  }
  void raw(const void* data, std::size_t n) { out_.append(static_cast<const char*>(data), n); }
  void len_bytes(int field, std::string_view bytes) {
    len(field, bytes.size());
    raw(bytes.data(), bytes.size());
  }
  void opt_bytes(int field, std::string_view bytes) {
    if (!bytes.empty()) len_bytes(field, bytes);
  }
  // A bytes field holding an array of the caller's: borrowed when large enough and asked for.
  void array_bytes(int field, std::string_view bytes) {
    if (borrowed_ == nullptr || bytes.size() < min_borrowed_run) return len_bytes(field, bytes);
    len(field, bytes.size());
    borrowed_->emplace_back(out_.size(), bytes);
    borrowed_bytes_ += bytes.size();
  }
  void opt_array_bytes(int field, std::string_view bytes) {
    if (!bytes.empty()) array_bytes(field, bytes);
  }
  template <class T>
  void opt_array(int field, std::span<const T> values) {
    opt_array_bytes(field, std::string_view(reinterpret_cast<const char*>(values.data()), values.size_bytes()));
  }
  void fixed64(int field, double value) {
    tag(field, WireType::fixed64);
    raw(&value, sizeof value);
  }
  /// The message's bytes so far, borrowed runs included.
  std::size_t written() const { return out_.size() + borrowed_bytes_; }

 private:
  std::string& out_;
  std::vector<BorrowedRun>* borrowed_;
  std::size_t borrowed_bytes_ = 0;
};

const char* format_text(ImageFormat format) {
  return format == ImageFormat::jpeg ? "jpeg" : "png";
}

std::size_t values_bytes(const TensorData::Values& values) {
  return std::visit([](const auto& v) { return v.size() * sizeof(v[0]); }, values);
}
std::string_view values_view(const TensorData::Values& values) {
  return std::visit(
      [](const auto& v) { return std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(v[0])); },
      values);
}
template <class T>
std::string_view array_view(const std::vector<T>& v) {
  return std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

std::size_t packed_varints(std::span<const std::int64_t> values) {
  std::size_t n = 0;
  for (const std::int64_t v : values) n += varint_size(as_varint(v));
  return n;
}

// Payload size of the Chunk message: its one oneof member, itself a message.
std::size_t chunk_size(const ModelInputChunk& chunk, const Path& path) {
  struct Visitor {
    const Path& path;
    std::size_t operator()(const EncodedTextChunk& text) const {
      // TokenId is int32, so every id fits the wire's int32 array as is.
      return len_field(1, bytes_field(1, text.tokens.size() * sizeof(TokenId)));
    }
    std::size_t operator()(const ImageChunk& image) const {
      std::size_t n = bytes_field(1, image.data.size()) + bytes_field(2, std::strlen(format_text(image.format)));
      if (image.expected_tokens) {
        n += tag_size(3) + varint_size(as_varint(to_int32(*image.expected_tokens, path.child("expected_tokens"))));
      }
      return len_field(2, n);
    }
    std::size_t operator()(const ImageAssetPointerChunk&) const {
      encode_fail(path,
                  "image_asset_pointer chunks cannot be encoded in protobuf (its schema has no such chunk); "
                  "send image bytes in an image chunk or use the JSON encoding");
    }
    std::size_t operator()(const DmelChunk& dmel) const { return len_field(3, bytes_field(1, dmel.dmel.size())); }
  };
  return std::visit(Visitor{path}, chunk);
}

void write_chunk(WireWriter& w, const ModelInputChunk& chunk, std::size_t size) {
  w.len(1, size);  // Datum.model_input
  if (const auto* text = std::get_if<EncodedTextChunk>(&chunk)) {
    w.len(1, bytes_field(1, text->tokens.size() * sizeof(TokenId)));
    w.opt_array(1, std::span(text->tokens));
  } else if (const auto* image = std::get_if<ImageChunk>(&chunk)) {
    const std::string_view format = format_text(image->format);
    std::size_t n = bytes_field(1, image->data.size()) + bytes_field(2, format.size());
    if (image->expected_tokens) n += tag_size(3) + varint_size(as_varint(*image->expected_tokens));
    w.len(2, n);
    w.opt_array(1, std::span(image->data));
    w.opt_bytes(2, format);
    if (image->expected_tokens) {
      w.tag(3, WireType::varint);
      w.varint(as_varint(*image->expected_tokens));
    }
  } else {
    const auto& dmel = std::get<DmelChunk>(chunk);
    w.len(3, bytes_field(1, dmel.dmel.size()));
    w.opt_array(1, std::span(dmel.dmel));
  }
}

std::size_t csr_size(const TensorData& t) {
  return bytes_field(1, values_bytes(t.values)) + bytes_field(2, t.sparse_crow_indices->size() * 8) +
         bytes_field(3, t.sparse_col_indices->size() * 8);
}

// Payload size of a Tensor message (checked before: see tensor_entry_size).
std::size_t tensor_size(const TensorData& t) {
  // The oneof member is written even when empty, so the receiver sees which encoding it is.
  std::size_t n = t.is_sparse() ? len_field(2, csr_size(t)) : len_field(1, values_bytes(t.values));
  n += tag_size(3) + varint_size(wire_dtype(t.values));
  if (t.shape && !t.shape->empty()) n += len_field(4, packed_varints(*t.shape));
  return n;
}

// Payload size of a loss_fn_inputs map entry {1: name, 2: tensor}.
std::size_t tensor_entry_size(const std::string& name, const TensorData& t) {
  return len_field(1, name.size()) + len_field(2, tensor_size(t));
}

void write_tensor_entry(WireWriter& w, const std::string& name, const TensorData& t) {
  w.len(2, tensor_entry_size(name, t));  // Datum.loss_fn_inputs
  w.len_bytes(1, name);
  w.len(2, tensor_size(t));
  if (t.is_sparse()) {
    w.len(2, csr_size(t));
    w.opt_array_bytes(1, values_view(t.values));
    w.opt_array_bytes(2, array_view(*t.sparse_crow_indices));
    w.opt_array_bytes(3, array_view(*t.sparse_col_indices));
  } else {
    w.array_bytes(1, values_view(t.values));
  }
  w.tag(3, WireType::varint);
  w.varint(wire_dtype(t.values));
  if (t.shape && !t.shape->empty()) {
    w.len(4, packed_varints(*t.shape));
    for (const std::int64_t d : *t.shape) w.varint(as_varint(d));
  }
}

// Payload size of a Datum message; checks everything the writer relies on.
std::size_t datum_size(const Datum& datum, const Path& path) {
  // The protobuf Datum has no provenance fields: refused rather than dropped (the SDK sends such
  // batches as JSON, doc/training.md#provenance).
  if (datum.model_input_spans)
    encode_fail(path.child("model_input_spans"), "the protobuf form cannot carry provenance");
  if (datum.loss_fn_input_spans) {
    encode_fail(path.child("loss_fn_input_spans"), "the protobuf form cannot carry provenance");
  }
  std::size_t n = 0;
  const Path chunks_path = path.child("model_input.chunks");
  const auto& chunks = datum.model_input.chunks;
  for (std::size_t j = 0; j < chunks.size(); ++j) {
    n += len_field(1, chunk_size(chunks[j], chunks_path.at(static_cast<std::int64_t>(j))));
  }
  const Path inputs_path = path.child("loss_fn_inputs");
  for (const auto& [name, tensor] : datum.loss_fn_inputs) {
    const Path tensor_path = inputs_path.child(name);
    check_utf8(name, tensor_path);
    check_tensor(tensor, errc::invalid_argument, tensor_path);
    n += len_field(2, tensor_entry_size(name, tensor));
  }
  return n;
}

void write_datum(WireWriter& w, const Datum& datum, std::size_t size, const Path& path) {
  w.len(3, size);  // ForwardBackwardRequest.data
  const Path chunks_path = path.child("model_input.chunks");
  for (std::size_t j = 0; j < datum.model_input.chunks.size(); ++j) {
    const ModelInputChunk& chunk = datum.model_input.chunks[j];
    write_chunk(w, chunk, chunk_size(chunk, chunks_path.at(static_cast<std::int64_t>(j))));
  }
  for (const auto& [name, tensor] : datum.loss_fn_inputs) write_tensor_entry(w, name, tensor);
}

std::size_t config_entry_size(const std::string& key) {
  return len_field(1, key.size()) + tag_size(2) + 8;
}

// ---- decode --------------------------------------------------------------------------------

ImageFormat parse_format(const std::string& text, const Path& path) {
  if (text == "png") return ImageFormat::png;
  if (text == "jpeg") return ImageFormat::jpeg;
  decode_fail(path, "unknown image format \"" + text + "\" (expected \"png\" or \"jpeg\")");
}

ModelInputChunk decode_chunk(const pb::Chunk& chunk, const Path& path) {
  switch (chunk.chunk_case()) {
    case pb::Chunk::kEncodedText:
      return EncodedTextChunk(read_le<TokenId>(chunk.encoded_text().tokens(), path.child("encoded_text.tokens")));
    case pb::Chunk::kImage: {
      const pb::ImageChunk& image = chunk.image();
      ImageChunk out;
      out.data.assign(image.data().begin(), image.data().end());
      out.format = parse_format(image.format(), path.child("image.format"));
      if (image.has_expected_tokens()) out.expected_tokens = image.expected_tokens();
      return out;
    }
    case pb::Chunk::kDmel: {
      const std::string& bytes = chunk.dmel().dmel();
      return DmelChunk(std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
    }
    case pb::Chunk::CHUNK_NOT_SET: break;
  }
  decode_fail(path, "chunk has no content (unknown chunk kind?)");
}

TensorData decode_tensor(const pb::Tensor& tensor, const Path& path) {
  TensorData out;
  if (tensor.shape_size() > 0) out.shape.emplace(tensor.shape().begin(), tensor.shape().end());
  const Path dtype_path = path.child("dtype");
  if (tensor.encoding_case() == pb::Tensor::kSparseCsr) {
    const pb::SparseCsr& csr = tensor.sparse_csr();
    const Path csr_path = path.child("sparse_csr");
    out.values = read_values(tensor.dtype(), csr.values(), dtype_path, csr_path.child("values"));
    out.sparse_crow_indices = read_le<std::int64_t>(csr.crow_indices(), csr_path.child("crow_indices"));
    out.sparse_col_indices = read_le<std::int64_t>(csr.col_indices(), csr_path.child("col_indices"));
  } else {
    // No encoding at all reads as an empty dense tensor (what an all-default message means).
    out.values = read_values(tensor.dtype(), tensor.dense(), dtype_path, path.child("dense"));
  }
  check_tensor(out, errc::decode_error, path);
  return out;
}

Datum decode_datum(const pb::Datum& datum, const Path& path) {
  Datum out;
  const Path chunks_path = path.child("model_input.chunks");
  auto& chunks = out.model_input.chunks;
  chunks.reserve(static_cast<std::size_t>(datum.model_input_size()));
  for (int j = 0; j < datum.model_input_size(); ++j) {
    chunks.push_back(decode_chunk(datum.model_input(j), chunks_path.at(j)));
  }
  const Path inputs_path = path.child("loss_fn_inputs");
  for (const auto& [name, tensor] : datum.loss_fn_inputs()) {
    out.loss_fn_inputs.emplace(name, decode_tensor(tensor, inputs_path.child(name)));
  }
  return out;
}

}  // namespace

std::string encode_request(const ForwardBackwardRequest& request, std::vector<BorrowedRun>* borrowed) {
  const ForwardBackwardInput& input = request.forward_backward_input;
  check_utf8(request.model_id, Path("model_id"));
  check_utf8(input.loss_fn, Path("loss_fn"));
  const std::int32_t seq_id = to_int32(request.seq_id, Path("seq_id"));

  // Pass 1: sizes (and every check), so that pass 2 writes into an exactly sized buffer.
  std::vector<std::size_t> datum_sizes(input.data.size());
  std::size_t total = bytes_field(1, request.model_id.size()) + bytes_field(4, input.loss_fn.size());
  if (seq_id != 0) total += tag_size(2) + varint_size(as_varint(seq_id));
  for (std::size_t i = 0; i < input.data.size(); ++i) {
    datum_sizes[i] = datum_size(input.data[i], Path("data", static_cast<std::int64_t>(i)));
    total += len_field(3, datum_sizes[i]);
  }
  if (input.loss_fn_config) {
    const Path config_path("loss_fn_config");
    for (const auto& [key, value] : *input.loss_fn_config) {
      check_utf8(key, config_path.child(key));
      total += len_field(5, config_entry_size(key));
    }
  }
  if (request.forward_only) total += tag_size(6) + 1;
  if (total > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    encode_fail(Path("ForwardBackwardRequest"),
                "encoded size " + std::to_string(total) + " bytes exceeds the 2 GiB protobuf limit");
  }

  // Pass 2: write, in field-number order, into one buffer of exactly the message's size; when
  // the arrays are borrowed, into one that grows as it must (tags and lengths: tens of bytes a
  // datum).
  std::string out;
  if (borrowed == nullptr) {
    out.reserve(total);
  } else {
    borrowed->clear();
    out.reserve(256 + 64 * input.data.size());
  }
  WireWriter w(out, borrowed);
  w.opt_bytes(1, request.model_id);
  if (seq_id != 0) {
    w.tag(2, WireType::varint);
    w.varint(as_varint(seq_id));
  }
  for (std::size_t i = 0; i < input.data.size(); ++i) {
    write_datum(w, input.data[i], datum_sizes[i], Path("data", static_cast<std::int64_t>(i)));
  }
  w.opt_bytes(4, input.loss_fn);
  if (input.loss_fn_config) {
    for (const auto& [key, value] : *input.loss_fn_config) {
      w.len(5, config_entry_size(key));
      w.len_bytes(1, key);
      w.fixed64(2, value);
    }
  }
  if (request.forward_only) {
    w.tag(6, WireType::varint);
    w.varint(1);
  }
  if (w.written() != total) {
    throw std::logic_error("encode_request: size computation and writer disagree");  // a bug here, not bad input
  }
  return out;
}

ForwardBackwardRequest decode_request(std::string_view bytes) {
  Arena arena(arena_options());
  auto* msg = Arena::CreateMessage<pb::ForwardBackwardRequest>(&arena);
  parse(*msg, bytes, "ForwardBackwardRequest");

  ForwardBackwardRequest out;
  out.model_id = msg->model_id();
  out.seq_id = msg->seq_id();
  out.forward_only = msg->forward_only();
  ForwardBackwardInput& input = out.forward_backward_input;
  input.loss_fn = msg->loss_fn();
  // The wire cannot tell an empty config from an absent one; absent is the JSON default.
  if (!msg->loss_fn_config().empty())
    input.loss_fn_config.emplace(msg->loss_fn_config().begin(), msg->loss_fn_config().end());
  input.data.reserve(static_cast<std::size_t>(msg->data_size()));
  for (int i = 0; i < msg->data_size(); ++i) input.data.push_back(decode_datum(msg->data(i), Path("data", i)));
  return out;
}

}  // namespace tinker::wire::proto
