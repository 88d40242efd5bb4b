// ForwardBackwardOutput <-> tinker_public.ForwardBackwardOutput (doc/protocol.md#protobuf).
//
// On the wire the per-datum outputs are transposed: one ArrayRecord holds, for each output key,
// one BatchedTensor with every datum's values concatenated and byte offsets delimiting them.
#include "core/wire/proto_codec_internal.hpp"

#include <string>

namespace tinker::wire::proto {
namespace {

using google::protobuf::Arena;

// Records without fields cost nothing on the wire per datum, so a hostile num_datums could make
// us allocate an empty map per claimed datum: cap the total. One output answers one chunk of a
// batch, at most fwdbwd_max_chunk_len datums (1024 on the real service); 64 times that is still
// only ~3 MB of empty outputs for a 7-byte body.
constexpr std::int64_t kMaxDatums = std::int64_t{1} << 16;

std::span<const std::int64_t> trailing_dims(const TensorData& tensor) {
  if (!tensor.shape || tensor.shape->empty()) return {};
  return std::span(*tensor.shape).subspan(1);
}

// A record needs the same keys, dtypes and trailing shapes for all its datums; a datum that
// differs starts a new record (a reader concatenates the records in order).
bool same_layout(const LossFnOutput& a, const LossFnOutput& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia->first != ib->first || ia->second.dtype() != ib->second.dtype()) return false;
    const auto ta = trailing_dims(ia->second);
    const auto tb = trailing_dims(ib->second);
    if (!std::equal(ta.begin(), ta.end(), tb.begin(), tb.end())) return false;
  }
  return true;
}

void check_outputs(const ForwardBackwardOutput& output) {
  check_utf8(output.loss_fn_output_type, Path("loss_fn_output_type"));
  const Path metrics_path("metrics");
  for (const auto& [key, value] : output.metrics) check_utf8(key, metrics_path.child(key));
  for (std::size_t i = 0; i < output.loss_fn_outputs.size(); ++i) {
    const Path datum_path("loss_fn_outputs", static_cast<std::int64_t>(i));
    for (const auto& [key, tensor] : output.loss_fn_outputs[i]) {
      const Path tensor_path = datum_path.child(key);
      check_utf8(key, tensor_path);
      check_tensor(tensor, errc::invalid_argument, tensor_path);
      // CSR outputs go on the wire dense: their dense size must be countable.
      if (tensor.is_sparse()) shape_product(*tensor.shape, errc::invalid_argument, tensor_path.child("shape"));
    }
  }
}

// All `datums` share `key`'s layout: concatenate their values.
void encode_field(std::span<const LossFnOutput> datums, const std::string& key, pb::BatchedTensor* out) {
  const TensorData& first = datums.front().at(key);
  out->set_dtype(wire_dtype(first.values));
  const auto trailing = trailing_dims(first);
  out->mutable_trailing_shape()->Add(trailing.begin(), trailing.end());

  const std::size_t item = item_size(wire_dtype(first.values));
  std::vector<std::int64_t> offsets;
  offsets.reserve(datums.size() + 1);
  offsets.push_back(0);
  for (const LossFnOutput& datum : datums) {
    const TensorData& tensor = datum.at(key);
    // A CSR tensor goes on the wire dense: its dense size is the shape's product.
    const std::size_t count =
        tensor.is_sparse() ? static_cast<std::size_t>((*tensor.shape)[0] * (*tensor.shape)[1]) : tensor.stored_size();
    offsets.push_back(offsets.back() + static_cast<std::int64_t>(count * item));
  }
  std::string* data = out->mutable_data();
  data->reserve(static_cast<std::size_t>(offsets.back()));
  for (const LossFnOutput& datum : datums) {
    const TensorData& tensor = datum.at(key);
    append_values(data, tensor.is_sparse() ? dense_values(tensor) : tensor.values);
  }
  assign_le(out->mutable_offsets(), std::span<const std::int64_t>(offsets));
}

void encode_record(std::span<const LossFnOutput> datums, const std::string& type_tag, pb::ArrayRecord* out) {
  out->set_type_tag(type_tag);
  out->set_num_datums(static_cast<std::int64_t>(datums.size()));
  auto& fields = *out->mutable_fields();
  for (const auto& entry : datums.front()) encode_field(datums, entry.first, &fields[entry.first]);
}

// ---- decode --------------------------------------------------------------------------------

std::string_view bare_class_name(std::string_view type) {
  const std::size_t colon = type.rfind(':');
  return colon == std::string_view::npos ? type : type.substr(colon + 1);
}

std::vector<std::int64_t> read_offsets(const pb::BatchedTensor& field, std::int64_t datums, std::size_t item,
                                       const Path& path) {
  const Path offsets_path = path.child("offsets");
  std::vector<std::int64_t> offsets = read_le<std::int64_t>(field.offsets(), offsets_path);
  // With no datums the offsets may be [] or [x]; otherwise exactly one boundary per datum + 1.
  if (datums == 0 && offsets.size() <= 1) return {};
  if (offsets.size() != static_cast<std::size_t>(datums) + 1) {
    decode_fail(offsets_path,
                std::to_string(offsets.size()) + " offsets, expected num_datums + 1 = " + std::to_string(datums + 1));
  }
  const auto size = static_cast<std::int64_t>(field.data().size());
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    const std::int64_t o = offsets[i];
    const Path at = offsets_path.at(static_cast<std::int64_t>(i));
    if (o < 0 || o > size) decode_fail(at, std::to_string(o) + " outside data of " + std::to_string(size) + " bytes");
    if (o % static_cast<std::int64_t>(item) != 0) {
      decode_fail(at, std::to_string(o) + " is not a multiple of the item size " + std::to_string(item));
    }
    if (i > 0 && o < offsets[i - 1]) decode_fail(at, std::to_string(o) + " is below the previous offset");
  }
  return offsets;
}

// Slices one field of a record into `out[0 .. datums)`.
void decode_field(const std::string& name, const pb::BatchedTensor& field, std::int64_t datums, LossFnOutput* out,
                  const Path& path) {
  const std::size_t item = item_size(field.dtype());
  if (item == 0) {
    decode_fail(path.child("dtype"), "unsupported dtype " + std::to_string(field.dtype()) + " (" +
                                         std::string(dtype_name(field.dtype())) + ")");
  }
  const std::string& data = field.data();
  if (data.size() % item != 0) {
    decode_fail(path.child("data"),
                "byte length " + std::to_string(data.size()) + " is not a multiple of " + std::to_string(item));
  }
  const std::vector<std::int64_t> offsets = read_offsets(field, datums, item, path);
  const std::span<const std::int64_t> trailing(field.trailing_shape().data(),
                                               static_cast<std::size_t>(field.trailing_shape_size()));
  const std::int64_t per_row = shape_product(trailing, errc::decode_error, path.child("trailing_shape"));

  for (std::int64_t i = 0; i < datums && !offsets.empty(); ++i) {
    const auto begin = static_cast<std::size_t>(offsets[i]);
    const auto end = static_cast<std::size_t>(offsets[i + 1]);
    const auto elements = static_cast<std::int64_t>((end - begin) / item);
    if (per_row == 0 ? elements != 0 : elements % per_row != 0) {
      decode_fail(Path(path, "data", i),
                  std::to_string(elements) + " elements do not fill whole rows of the trailing shape");
    }
    std::vector<std::int64_t> shape;
    shape.reserve(trailing.size() + 1);
    shape.push_back(per_row == 0 ? 0 : elements / per_row);
    shape.insert(shape.end(), trailing.begin(), trailing.end());
    TensorData tensor;
    tensor.values = read_values(field.dtype(), std::string_view(data).substr(begin, end - begin), path.child("dtype"),
                                path.child("data"));
    tensor.shape = std::move(shape);
    out[i].insert_or_assign(name, std::move(tensor));
  }
}

// The datum count of a record without num_datums (older writers): that of its first field.
std::int64_t legacy_datum_count(const pb::ArrayRecord& record) {
  if (record.fields().empty()) return 0;
  const std::size_t offsets = record.fields().begin()->second.offsets().size() / sizeof(std::int64_t);
  return offsets == 0 ? 0 : static_cast<std::int64_t>(offsets - 1);
}

}  // namespace

std::string encode_output(const ForwardBackwardOutput& output) {
  check_outputs(output);
  Arena arena(arena_options());
  auto* msg = Arena::CreateMessage<pb::ForwardBackwardOutput>(&arena);
  msg->set_loss_fn_output_type(output.loss_fn_output_type);
  msg->mutable_metrics()->insert(output.metrics.begin(), output.metrics.end());

  const std::span<const LossFnOutput> datums(output.loss_fn_outputs);
  std::size_t begin = 0;
  while (begin < datums.size()) {
    std::size_t end = begin + 1;
    while (end < datums.size() && same_layout(datums[begin], datums[end])) ++end;
    encode_record(datums.subspan(begin, end - begin), output.loss_fn_output_type, msg->add_loss_fn_outputs());
    begin = end;
  }
  return serialize(*msg, "ForwardBackwardOutput");
}

ForwardBackwardOutput decode_output(std::string_view bytes) {
  Arena arena(arena_options());
  auto* msg = Arena::CreateMessage<pb::ForwardBackwardOutput>(&arena);
  parse(*msg, bytes, "ForwardBackwardOutput");

  ForwardBackwardOutput out;
  out.metrics.insert(msg->metrics().begin(), msg->metrics().end());
  // An empty type is "ArrayRecord" with or without records, and so is a type whose bare class name is
  // empty ("module::"): otherwise it would decode to "", and the same output sent back to
  // "ArrayRecord" (both found by fuzzing).
  const std::string_view type = msg->loss_fn_outputs().empty() ? std::string_view(msg->loss_fn_output_type())
                                                               : bare_class_name(msg->loss_fn_output_type());
  out.loss_fn_output_type = type.empty() ? std::string("ArrayRecord") : std::string(type);
  if (msg->loss_fn_outputs().empty()) return out;

  // Σ num_datums is authoritative (it survives writers that drop every field); 0 means an older
  // writer, whose records each count the datums of their first field.
  std::int64_t total = 0;
  for (int r = 0; r < msg->loss_fn_outputs_size(); ++r) {
    const std::int64_t n = msg->loss_fn_outputs(r).num_datums();
    const Path record_path("loss_fn_outputs", r);
    const Path path = record_path.child("num_datums");
    if (n < 0) decode_fail(path, "negative (" + std::to_string(n) + ")");
    if (n > kMaxDatums - total) decode_fail(path, "more than " + std::to_string(kMaxDatums) + " datums in total");
    total += n;
  }
  const bool legacy = total == 0;

  // Records are concatenated: record r holds the next num_datums datums. Each field is placed
  // within its own record (the Python SDK appends per field name across records instead, which
  // gives the same result whenever every record has the same fields, as writers produce).
  for (int r = 0; r < msg->loss_fn_outputs_size(); ++r) {
    const pb::ArrayRecord& record = msg->loss_fn_outputs(r);
    const Path record_path("loss_fn_outputs", r);
    const std::int64_t datums = legacy ? legacy_datum_count(record) : record.num_datums();
    const std::size_t first = out.loss_fn_outputs.size();
    out.loss_fn_outputs.resize(first + static_cast<std::size_t>(datums));
    const Path fields_path = record_path.child("fields");
    for (const auto& [name, field] : record.fields()) {
      decode_field(name, field, datums, out.loss_fn_outputs.data() + first, fields_path.child(name));
    }
  }
  return out;
}

}  // namespace tinker::wire::proto
