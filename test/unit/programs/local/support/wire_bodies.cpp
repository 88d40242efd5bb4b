#include "unit/programs/local/support/wire_bodies.hpp"

#include <zstd.h>
#include <boost/json/serialize.hpp>

#include <bit>
#include <cstring>
#include <stdexcept>

namespace tinker::local::test {

namespace json = boost::json;

static_assert(std::endian::native == std::endian::little, "the byte helpers assume a little-endian host");

std::string to_text(const json::value& value) {
  return json::serialize(value);
}

json::array int_array(const std::vector<std::int64_t>& values) {
  json::array array;
  for (std::int64_t v : values) array.emplace_back(v);
  return array;
}

json::array number_array(const std::vector<double>& values) {
  json::array array;
  for (double v : values) array.emplace_back(v);
  return array;
}

json::object model_input(const Tokens& tokens) {
  json::object chunk;
  chunk["tokens"] = int_array(tokens);
  chunk["type"] = "encoded_text";
  json::array chunks;
  chunks.emplace_back(std::move(chunk));
  json::object input;
  input["chunks"] = std::move(chunks);
  return input;
}

json::object int64_tensor(const Tokens& values) {
  json::object tensor;
  tensor["data"] = int_array(values);
  tensor["dtype"] = "int64";
  tensor["shape"] = int_array({static_cast<std::int64_t>(values.size())});
  return tensor;
}

json::object float32_tensor(const std::vector<double>& values) {
  json::object tensor;
  tensor["data"] = number_array(values);
  tensor["dtype"] = "float32";
  tensor["shape"] = int_array({static_cast<std::int64_t>(values.size())});
  return tensor;
}

json::object cross_entropy_datum(const Tokens& sequence) {
  if (sequence.size() < 2) throw std::invalid_argument("cross_entropy_datum: a sequence needs 2+ tokens");
  const Tokens input(sequence.begin(), sequence.end() - 1);
  const Tokens targets(sequence.begin() + 1, sequence.end());
  json::object inputs;
  inputs["target_tokens"] = int64_tensor(targets);
  inputs["weights"] = float32_tensor(std::vector<double>(targets.size(), 1.0));
  json::object datum;
  datum["model_input"] = model_input(input);
  datum["loss_fn_inputs"] = std::move(inputs);
  return datum;
}

json::object forward_backward_body(const std::string& model_id, std::int64_t seq_id, json::array data,
                                   std::string_view loss_fn, std::string_view input_key) {
  json::object input;
  input["data"] = std::move(data);
  input["loss_fn"] = loss_fn;
  json::object body;
  body[input_key] = std::move(input);
  body["model_id"] = model_id;
  body["seq_id"] = seq_id;
  return body;
}

json::object adam_params(double learning_rate) {
  json::object params;
  params["learning_rate"] = learning_rate;
  params["beta1"] = 0.9;
  params["beta2"] = 0.95;
  params["eps"] = 1e-12;
  params["weight_decay"] = 0.0;
  params["grad_clip_norm"] = 0.0;
  return params;
}

json::object optim_step_body(const std::string& model_id, std::int64_t seq_id, double learning_rate) {
  json::object body;
  body["adam_params"] = adam_params(learning_rate);
  body["model_id"] = model_id;
  body["seq_id"] = seq_id;
  body["type"] = "optim_step";
  return body;
}

double number(const json::value& value) {
  if (value.is_int64()) return static_cast<double>(value.get_int64());
  if (value.is_uint64()) return static_cast<double>(value.get_uint64());
  if (value.is_double()) return value.get_double();
  throw std::runtime_error("expected a JSON number, got " + json::serialize(value));
}

std::vector<double> numbers(const json::value& array) {
  if (!array.is_array()) throw std::runtime_error("expected a JSON array, got " + json::serialize(array));
  std::vector<double> out;
  for (const json::value& v : array.get_array()) out.push_back(number(v));
  return out;
}

std::vector<std::int64_t> integers(const json::value& array) {
  if (!array.is_array()) throw std::runtime_error("expected a JSON array, got " + json::serialize(array));
  std::vector<std::int64_t> out;
  for (const json::value& v : array.get_array()) {
    if (!v.is_int64() && !v.is_uint64()) throw std::runtime_error("expected a JSON integer, got " + json::serialize(v));
    out.push_back(v.to_number<std::int64_t>());
  }
  return out;
}

const json::value& field(const json::value& object, std::string_view key) {
  if (!object.is_object()) throw std::runtime_error("expected a JSON object, got " + json::serialize(object));
  const json::value* found = object.get_object().if_contains(key);
  if (found == nullptr) {
    throw std::runtime_error("missing key \"" + std::string(key) + "\" in " + json::serialize(object));
  }
  return *found;
}

json::value field(json::value&& object, std::string_view key) {
  const json::value& found = field(static_cast<const json::value&>(object), key);
  return found;
}

json::array items(const json::value& object, std::string_view key) {
  const json::value& found = field(object, key);
  if (!found.is_array()) {
    throw std::runtime_error("key \"" + std::string(key) + "\" is not an array in " + json::serialize(object));
  }
  return found.get_array();
}

std::string string_field(const json::value& object, std::string_view key) {
  const json::value& value = field(object, key);
  if (!value.is_string()) {
    throw std::runtime_error("key \"" + std::string(key) + "\" is not a string in " + json::serialize(object));
  }
  return std::string(value.get_string());
}

std::vector<std::vector<double>> json_logprobs(const json::value& output) {
  std::vector<std::vector<double>> out;
  const json::value& records = field(output, "loss_fn_outputs");
  if (!records.is_array()) throw std::runtime_error("loss_fn_outputs is not an array");
  for (const json::value& record : records.get_array()) {
    const json::value& logprobs = field(record, "logprobs");
    if (string_field(logprobs, "dtype") != "float32") throw std::runtime_error("logprobs dtype is not float32");
    out.push_back(numbers(field(logprobs, "data")));
  }
  return out;
}

namespace {

template <class T>
std::string to_le_bytes(const std::vector<T>& values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <class T>
std::vector<T> from_le_bytes(std::string_view bytes, const char* what) {
  if (bytes.size() % sizeof(T) != 0) {
    throw std::runtime_error(std::string(what) + ": " + std::to_string(bytes.size()) + " bytes is not a multiple of " +
                             std::to_string(sizeof(T)));
  }
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

}  // namespace

std::string int32_le(const std::vector<std::int32_t>& values) {
  return to_le_bytes(values);
}
std::string int64_le(const std::vector<std::int64_t>& values) {
  return to_le_bytes(values);
}
std::string float32_le(const std::vector<float>& values) {
  return to_le_bytes(values);
}
std::vector<std::int32_t> int32s_from_le(std::string_view bytes) {
  return from_le_bytes<std::int32_t>(bytes, "int32");
}
std::vector<std::int64_t> int64s_from_le(std::string_view bytes) {
  return from_le_bytes<std::int64_t>(bytes, "int64");
}
std::vector<float> floats_from_le(std::string_view bytes) {
  return from_le_bytes<float>(bytes, "float32");
}

tinker_public::Datum proto_cross_entropy_datum(const Tokens& sequence) {
  if (sequence.size() < 2) throw std::invalid_argument("proto_cross_entropy_datum: a sequence needs 2+ tokens");
  const std::vector<std::int32_t> input(sequence.begin(), sequence.end() - 1);
  const Tokens targets(sequence.begin() + 1, sequence.end());
  tinker_public::Datum datum;
  datum.add_model_input()->mutable_encoded_text()->set_tokens(int32_le(input));
  tinker_public::Tensor target_tensor;
  target_tensor.set_dense(int64_le(targets));
  target_tensor.set_dtype(tinker_public::DTYPE_INT64);
  target_tensor.add_shape(static_cast<std::int64_t>(targets.size()));
  tinker_public::Tensor weight_tensor;
  weight_tensor.set_dense(float32_le(std::vector<float>(targets.size(), 1.0f)));
  weight_tensor.set_dtype(tinker_public::DTYPE_FLOAT32);
  weight_tensor.add_shape(static_cast<std::int64_t>(targets.size()));
  (*datum.mutable_loss_fn_inputs())["target_tokens"] = target_tensor;
  (*datum.mutable_loss_fn_inputs())["weights"] = weight_tensor;
  return datum;
}

tinker_public::ForwardBackwardRequest proto_forward_backward(const std::string& model_id, std::int32_t seq_id,
                                                             const std::vector<Tokens>& sequences, bool forward_only) {
  tinker_public::ForwardBackwardRequest request;
  request.set_model_id(model_id);
  request.set_seq_id(seq_id);
  request.set_loss_fn("cross_entropy");
  request.set_forward_only(forward_only);
  for (const Tokens& sequence : sequences) *request.add_data() = proto_cross_entropy_datum(sequence);
  return request;
}

std::string zstd_compress(std::string_view bytes) {
  std::string out(ZSTD_compressBound(bytes.size()), '\0');
  const std::size_t size = ZSTD_compress(out.data(), out.size(), bytes.data(), bytes.size(), ZSTD_CLEVEL_DEFAULT);
  if (ZSTD_isError(size)) throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(size));
  out.resize(size);
  return out;
}

std::vector<std::vector<float>> batched_floats(const tinker_public::BatchedTensor& tensor, std::int64_t num_datums) {
  if (tensor.dtype() != tinker_public::DTYPE_FLOAT32) throw std::runtime_error("BatchedTensor dtype is not FLOAT32");
  const std::vector<std::int64_t> offsets = int64s_from_le(tensor.offsets());
  if (static_cast<std::int64_t>(offsets.size()) != num_datums + 1) {
    throw std::runtime_error("BatchedTensor has " + std::to_string(offsets.size()) + " offsets for " +
                             std::to_string(num_datums) + " datums");
  }
  if (offsets.front() != 0 || offsets.back() != static_cast<std::int64_t>(tensor.data().size())) {
    throw std::runtime_error("BatchedTensor offsets do not span data: first " + std::to_string(offsets.front()) +
                             ", last " + std::to_string(offsets.back()) + ", data " +
                             std::to_string(tensor.data().size()) + " bytes");
  }
  std::vector<std::vector<float>> out;
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
    const std::int64_t begin = offsets[i];
    const std::int64_t end = offsets[i + 1];
    if (end < begin || begin % 4 != 0 || end % 4 != 0) {
      throw std::runtime_error("BatchedTensor offsets are not increasing multiples of 4 (byte offsets)");
    }
    out.push_back(floats_from_le(std::string_view(tensor.data())
                                     .substr(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin))));
  }
  return out;
}

}  // namespace tinker::local::test
