// JSON codec instantiations: model input, data and training endpoints; the capacity hint of the
// bulk requests.
#include "core/wire/json_api.hpp"

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <variant>

namespace tinker {

namespace wire {
namespace {

// Room for the keys, punctuation and small fields around each array or value (generous: the
// hint only has to be an upper bound for the common shapes; a body over it still encodes, with
// one more growth of the string).
constexpr std::size_t fields_room = 96;

std::size_t decimal_digits(std::uint64_t v) {
  std::size_t n = 1;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

// Characters of the integer and its comma.
std::size_t int_chars(std::int64_t v) {
  const std::uint64_t magnitude = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  return decimal_digits(magnitude) + (v < 0 ? 1 : 0) + 1;
}

// Characters of the float and its comma: integral values (weights, masks) are written as their
// digits ("1", "0"); others take at most 17 characters ("-1.2345678e-38"). Non-finite values are
// refused by the encoder; they count as anything.
std::size_t float_chars(float v) {
  const float magnitude = std::fabs(v);
  if (magnitude < 1e7f && magnitude == std::trunc(magnitude)) {
    return decimal_digits(static_cast<std::uint64_t>(magnitude)) + (std::signbit(v) ? 3 : 0) + 1;  // "-0.0"
  }
  return 18;
}

template <class T>
std::size_t int_array_chars(const std::vector<T>& values) {
  std::size_t n = 2;
  for (const T v : values) n += int_chars(v);
  return n;
}

std::size_t tensor_chars(const TensorData& t) {
  std::size_t n = fields_room;
  if (const auto* floats = std::get_if<std::vector<float>>(&t.values)) {
    n += 2;
    for (const float v : *floats) n += float_chars(v);
  } else {
    n += int_array_chars(std::get<std::vector<std::int64_t>>(t.values));
  }
  if (t.shape) n += int_array_chars(*t.shape) + fields_room;
  if (t.sparse_crow_indices) n += int_array_chars(*t.sparse_crow_indices) + fields_room;
  if (t.sparse_col_indices) n += int_array_chars(*t.sparse_col_indices) + fields_room;
  return n;
}

std::size_t chunk_chars(const ModelInputChunk& chunk) {
  return std::visit(
      [](const auto& c) -> std::size_t {
        using C = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<C, EncodedTextChunk>) {
          return int_array_chars(c.tokens) + fields_room;
        } else if constexpr (std::is_same_v<C, ImageChunk>) {
          return (c.data.size() + 2) / 3 * 4 + fields_room;  // base64
        } else if constexpr (std::is_same_v<C, ImageAssetPointerChunk>) {
          return 2 * c.location.size() + fields_room;  // room for escapes
        } else {
          return (c.dmel.size() + 2) / 3 * 4 + fields_room;
        }
      },
      chunk);
}

std::size_t provenance_chars(const std::optional<std::vector<ProvenanceSpan>>& spans) {
  if (!spans) return 0;
  std::size_t n = fields_room;
  for (const ProvenanceSpan& span : *spans) {
    n += fields_room + 2 * std::visit([](const auto& s) { return s.sequence_id.size(); }, span);
  }
  return n;
}

std::size_t input_chars(const ForwardBackwardInput& input) {
  std::size_t n = 2 * input.loss_fn.size() + fields_room;
  if (input.loss_fn_config) {
    for (const auto& [key, value] : *input.loss_fn_config) n += 2 * key.size() + 32;
  }
  for (const Datum& datum : input.data) {
    n += fields_room;
    for (const ModelInputChunk& chunk : datum.model_input.chunks) n += chunk_chars(chunk);
    for (const auto& [key, tensor] : datum.loss_fn_inputs) n += 2 * key.size() + tensor_chars(tensor);
    n += provenance_chars(datum.model_input_spans) + provenance_chars(datum.loss_fn_input_spans);
  }
  return n;
}

}  // namespace

std::size_t json_capacity_hint(const ForwardBackwardRequest& value) {
  return input_chars(value.forward_backward_input) + 2 * value.model_id.size() + fields_room;
}

std::size_t json_capacity_hint(const ForwardRequest& value) {
  return input_chars(value.forward_input) + 2 * value.model_id.size() + fields_room;
}

}  // namespace wire

TINKER_INSTANTIATE_JSON(ModelInput);
TINKER_INSTANTIATE_JSON(TensorData);
TINKER_INSTANTIATE_JSON(PromptProvenanceSpan);
TINKER_INSTANTIATE_JSON(SampledProvenanceSpan);
TINKER_INSTANTIATE_JSON(Datum);
TINKER_INSTANTIATE_JSON(ForwardBackwardInput);
TINKER_INSTANTIATE_JSON(ForwardBackwardOutput);
TINKER_INSTANTIATE_JSON(AdamParams);
TINKER_INSTANTIATE_JSON(LoraConfig);
TINKER_INSTANTIATE_JSON(CreateModelRequest);
TINKER_INSTANTIATE_JSON(CreateModelResponse);
TINKER_INSTANTIATE_JSON(GetInfoRequest);
TINKER_INSTANTIATE_JSON(ModelData);
TINKER_INSTANTIATE_JSON(GetInfoResponse);
TINKER_INSTANTIATE_JSON(UnloadModelRequest);
TINKER_INSTANTIATE_JSON(UnloadModelResponse);
TINKER_INSTANTIATE_JSON(ForwardBackwardRequest);
TINKER_INSTANTIATE_JSON(ForwardRequest);
TINKER_INSTANTIATE_JSON(OptimStepRequest);
TINKER_INSTANTIATE_JSON(OptimStepResponse);
TINKER_INSTANTIATE_JSON(SaveWeightsRequest);
TINKER_INSTANTIATE_JSON(SaveWeightsResponse);
TINKER_INSTANTIATE_JSON(LoadWeightsRequest);
TINKER_INSTANTIATE_JSON(LoadWeightsResponse);
TINKER_INSTANTIATE_JSON(SaveWeightsForSamplerRequest);
TINKER_INSTANTIATE_JSON(SaveWeightsForSamplerResponse);

}  // namespace tinker
