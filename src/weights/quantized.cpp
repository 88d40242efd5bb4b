// Which base tensors hold a quantized weight, whether their headers agree, and the dispatch of a
// decode or encode to the format's arithmetic (quantized_mxfp4.cpp, quantized_int4.cpp).
#include "weights/quantized.hpp"

#include "weights/quantized_codecs.hpp"

#include <tinker/error.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <cstring>
#include <optional>
#include <string_view>

// The work is done in a namespace of its own, so that file-local names cannot meet those of the
// layer's other files in a unity build; the functions of quantized.hpp forward to it.
namespace tinker::weights::detail::quantized_impl {
namespace {

namespace codecs = quantized_codecs;
using safetensors::Dtype;

constexpr std::string_view mx_blocks_suffix = "_blocks";
constexpr std::string_view mx_scales_suffix = "_scales";
constexpr std::int64_t mx_block_values = 32;
constexpr std::int64_t mx_block_bytes = 16;
constexpr std::string_view packed_suffix = ".weight_packed";
constexpr std::string_view packed_scale_suffix = ".weight_scale";
constexpr std::string_view packed_shape_suffix = ".weight_shape";
constexpr std::string_view packed_zero_point_suffix = ".weight_zero_point";
constexpr std::int64_t int4_per_word = 8;

// What find_quantized_weights needs from config.json's quantization_config.
struct QuantizationConfig {
  std::string quant_method;
  std::string format;
  std::int64_t group_size = 0;  // 0: not given
  std::int64_t num_bits = 4;
  std::string type = "int";
  bool symmetric = true;
};

std::string model_label(const ModelLayout& layout) {
  return layout.directory.empty() ? std::string("base model") : layout.directory.string();
}

std::string tensor_label(const ModelLayout& layout, std::string_view tensor) {
  return model_label(layout) + ": tensor '" + std::string(tensor) + "'";
}

[[noreturn]] void fail_tensor(const ModelLayout& layout, std::string_view tensor, const std::string& problem,
                              errc code = errc::invalid_file) {
  throw error(code, tensor_label(layout, tensor) + ": " + problem);
}

std::string describe(const TensorLayout& tensor) {
  std::string text(safetensors::to_string(tensor.dtype));
  text += " [";
  for (std::size_t i = 0; i < tensor.shape.size(); ++i) text += (i == 0 ? "" : ", ") + std::to_string(tensor.shape[i]);
  return text + "]";
}

const TensorLayout& part_layout(const ModelLayout& layout, const std::string& name, std::string_view owner,
                                std::string_view role) {
  const auto it = layout.tensors.find(name);
  if (it == layout.tensors.end()) {
    fail_tensor(layout, owner, "its " + std::string(role) + " tensor '" + name + "' is not in the model");
  }
  return it->second;
}

// a * b, or nullopt when it overflows (shapes of a layout built in memory are not bounded by a file).
std::optional<std::int64_t> checked_product(std::int64_t a, std::int64_t b) {
  std::int64_t product = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

std::int64_t product_of(const ModelLayout& layout, std::string_view tensor, std::span<const std::int64_t> dims) {
  std::int64_t product = 1;
  for (const auto dim : dims) {
    const auto next = checked_product(product, dim);
    if (!next) fail_tensor(layout, tensor, "its shape is negative or too large");
    product = *next;
  }
  return product;
}

// ---- config.json ----

std::string string_field(const boost::json::object& object, std::string_view key) {
  const auto* value = object.if_contains(key);
  return value != nullptr && value->is_string() ? std::string(value->get_string()) : std::string();
}

std::optional<std::int64_t> integer_field(const boost::json::object& object, std::string_view key) {
  const auto* value = object.if_contains(key);
  if (value == nullptr) return std::nullopt;
  if (value->is_int64()) return value->get_int64();
  if (value->is_uint64() && value->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) {
    return static_cast<std::int64_t>(value->get_uint64());
  }
  return std::nullopt;
}

// The weights scheme of config_groups: num_bits, type and symmetric from the first group that has
// one; the group size is the first positive one of any group, as the cookbook reads it.
void read_config_groups(const boost::json::object& quantization, QuantizationConfig& config) {
  const auto* groups = quantization.if_contains("config_groups");
  if (groups == nullptr || !groups->is_object()) return;
  bool have_scheme = false;
  for (const auto& [name, group] : groups->get_object()) {
    const auto* weights = group.is_object() ? group.get_object().if_contains("weights") : nullptr;
    if (weights == nullptr || !weights->is_object()) continue;
    const auto& scheme = weights->get_object();
    if (!have_scheme) {
      have_scheme = true;
      config.num_bits = integer_field(scheme, "num_bits").value_or(config.num_bits);
      if (const auto type = string_field(scheme, "type"); !type.empty()) config.type = type;
      if (const auto* symmetric = scheme.if_contains("symmetric"); symmetric != nullptr && symmetric->is_bool()) {
        config.symmetric = symmetric->get_bool();
      }
    }
    if (const auto size = integer_field(scheme, "group_size"); config.group_size == 0 && size && *size > 0) {
      config.group_size = *size;
    }
  }
}

// quantization_config at the top level, else under text_config (Kimi K2.5 nests it there).
QuantizationConfig read_quantization_config(const ModelLayout& layout) {
  QuantizationConfig config;
  if (layout.config_json.empty()) return config;
  boost::json::parse_options options;
  options.max_depth = 64;
  boost::system::error_code ec;
  const auto root = boost::json::parse(layout.config_json, ec, {}, options);
  if (ec || !root.is_object()) {
    throw error(errc::invalid_file, (layout.directory / "config.json").string() + ": not a JSON object");
  }
  const boost::json::object* quantization = nullptr;
  if (const auto* top = root.get_object().if_contains("quantization_config"); top != nullptr && top->is_object()) {
    quantization = &top->get_object();
  } else if (const auto* text = root.get_object().if_contains("text_config"); text != nullptr && text->is_object()) {
    const auto* nested = text->get_object().if_contains("quantization_config");
    if (nested != nullptr && nested->is_object()) quantization = &nested->get_object();
  }
  if (quantization == nullptr) return config;
  config.quant_method = string_field(*quantization, "quant_method");
  config.format = string_field(*quantization, "format");
  read_config_groups(*quantization, config);
  return config;
}

// ---- MXFP4 ----

// The blocks [batch..., rows, n_blocks, 16] and scales [batch..., rows, n_blocks] of a weight.
struct MxGeometry {
  std::vector<std::int64_t> batch;  // leading axes (gpt-oss: the experts)
  std::int64_t rows = 0;
  std::int64_t n_blocks = 0;

  std::vector<std::int64_t> logical_shape() const {
    auto shape = batch;
    shape.push_back(n_blocks * mx_block_values);
    shape.push_back(rows);
    return shape;
  }
};

MxGeometry mx_geometry(const ModelLayout& layout, const QuantizedWeight& weight) {
  if (weight.parts.size() != 2) fail_tensor(layout, weight.parts.at(0), "MXFP4 needs 2 parts", errc::invalid_argument);
  const auto& blocks_name = weight.parts[0];
  const auto& blocks = part_layout(layout, blocks_name, blocks_name, "blocks");
  const auto& scales = part_layout(layout, weight.parts[1], blocks_name, "scales");
  const auto rank = blocks.shape.size();
  if (blocks.dtype != Dtype::u8 || rank < 3 || blocks.shape.back() != mx_block_bytes) {
    fail_tensor(layout, blocks_name, "MXFP4 blocks must be U8 [..., rows, blocks, 16], not " + describe(blocks));
  }
  const std::vector<std::int64_t> expected_scales(blocks.shape.begin(), blocks.shape.end() - 1);
  if ((scales.dtype != Dtype::u8 && scales.dtype != Dtype::f8_e8m0) || scales.shape != expected_scales) {
    fail_tensor(layout, weight.parts[1],
                "MXFP4 scales must be U8 (or F8_E8M0) of the blocks' shape without the last axis, not " +
                    describe(scales) + " for blocks " + describe(blocks));
  }
  // Every axis non-negative, and the logical size (two values a byte) within int64.
  if (!checked_product(product_of(layout, blocks_name, blocks.shape), 2)) {
    fail_tensor(layout, blocks_name, "its shape is negative or too large");
  }
  MxGeometry geometry;
  geometry.batch.assign(blocks.shape.begin(), blocks.shape.end() - 3);
  geometry.rows = blocks.shape[rank - 3];
  geometry.n_blocks = blocks.shape[rank - 2];
  return geometry;
}

void find_mxfp4_weights(ModelLayout& layout) {
  for (const auto& [name, tensor] : layout.tensors) {
    if (!name.ends_with(mx_blocks_suffix)) continue;
    const auto logical_name = name.substr(0, name.size() - mx_blocks_suffix.size());
    if (layout.tensors.contains(logical_name)) continue;  // a plain tensor of that name is the target
    QuantizedWeight weight;
    weight.kind = QuantizedKind::mxfp4;
    weight.parts = {name, logical_name + std::string(mx_scales_suffix)};
    weight.group_size = mx_block_values;
    weight.logical = {Dtype::bf16, mx_geometry(layout, weight).logical_shape()};
    layout.quantized.insert_or_assign(logical_name, std::move(weight));
  }
}

// ---- packed INT4 ----

struct Int4Geometry {
  std::int64_t rows = 0;
  std::int64_t packed_cols = 0;
  std::int64_t cols = 0;
  std::int64_t groups = 0;
  Dtype scale_dtype = Dtype::bf16;
  Dtype shape_dtype = Dtype::i32;
};

// `values_per_word` is 8 but for the (unsupported) other bit widths find_quantized_weights records.
Int4Geometry int4_geometry(const ModelLayout& layout, const QuantizedWeight& weight,
                           std::int64_t values_per_word = int4_per_word) {
  if (weight.parts.size() != 3) fail_tensor(layout, weight.parts.at(0), "INT4 needs 3 parts", errc::invalid_argument);
  const auto& packed_name = weight.parts[0];
  const auto& packed = part_layout(layout, packed_name, packed_name, "packed weight");
  const auto& scale = part_layout(layout, weight.parts[1], packed_name, "scale");
  const auto& shape = part_layout(layout, weight.parts[2], packed_name, "shape");
  if (packed.dtype != Dtype::i32 || packed.shape.size() != 2) {
    fail_tensor(layout, packed_name, "a packed weight must be I32 [rows, cols / 8], not " + describe(packed));
  }
  if ((shape.dtype != Dtype::i32 && shape.dtype != Dtype::i64) || shape.shape != std::vector<std::int64_t>{2}) {
    fail_tensor(layout, weight.parts[2], "weight_shape must be I32 or I64 [2], not " + describe(shape));
  }
  product_of(layout, packed_name, packed.shape);
  Int4Geometry geometry;
  geometry.rows = packed.shape[0];
  geometry.packed_cols = packed.shape[1];
  const auto cols = checked_product(geometry.packed_cols, values_per_word);
  if (!cols) fail_tensor(layout, packed_name, "its shape is too large");
  geometry.cols = *cols;
  geometry.scale_dtype = scale.dtype;
  geometry.shape_dtype = shape.dtype;
  const auto group = weight.group_size;
  const bool float_scale = scale.dtype == Dtype::bf16 || scale.dtype == Dtype::f16 || scale.dtype == Dtype::f32;
  if (group <= 0 || geometry.cols % group != 0 || !float_scale ||
      scale.shape != std::vector<std::int64_t>{geometry.rows, geometry.cols / group}) {
    fail_tensor(layout, weight.parts[1],
                "a scale must be BF16, F16 or F32 [rows, cols / group_size] = [" + std::to_string(geometry.rows) +
                    ", " + std::to_string(geometry.cols) + " / " + std::to_string(group) + "], not " + describe(scale));
  }
  geometry.groups = geometry.cols / group;
  return geometry;
}

std::string int4_unsupported_reason(const QuantizationConfig& config, bool has_zero_point) {
  if (!config.symmetric || has_zero_point) {
    return "asymmetric pack-quantized weights (zero points) are not supported: the cookbook merges symmetric "
           "INT4 only";
  }
  if (config.num_bits != 4) {
    return "pack-quantized weights of " + std::to_string(config.num_bits) +
           " bits are not supported: the cookbook merges 4-bit only";
  }
  if (config.type != "int") return "pack-quantized weights of type '" + config.type + "' are not supported";
  return {};
}

void find_packed_int4_weights(ModelLayout& layout, const QuantizationConfig& config) {
  const std::int64_t values_per_word =
      config.num_bits >= 1 && config.num_bits <= 8 ? 32 / config.num_bits : int4_per_word;
  for (const auto& [name, tensor] : layout.tensors) {
    if (!name.ends_with(packed_suffix)) continue;
    const auto base = name.substr(0, name.size() - packed_suffix.size());
    const auto logical_name = base + ".weight";
    if (layout.tensors.contains(logical_name)) continue;  // a plain tensor of that name is the target
    QuantizedWeight weight;
    weight.kind = QuantizedKind::packed_int4;
    weight.parts = {name, base + std::string(packed_scale_suffix), base + std::string(packed_shape_suffix)};
    weight.unsupported =
        int4_unsupported_reason(config, layout.tensors.contains(base + std::string(packed_zero_point_suffix)));
    weight.group_size = config.group_size;
    if (weight.group_size == 0) {
      // No group size in the config (a per-channel scheme): the scale's columns say it.
      const auto& scale = part_layout(layout, weight.parts[1], name, "scale");
      const auto& packed = tensor;
      if (scale.shape.size() == 2 && packed.shape.size() == 2 && scale.shape[1] > 0) {
        const auto cols = checked_product(packed.shape[1], values_per_word).value_or(0);
        if (cols % scale.shape[1] == 0) weight.group_size = cols / scale.shape[1];
      }
    }
    const auto geometry = int4_geometry(layout, weight, values_per_word);
    weight.logical = {Dtype::bf16, {geometry.rows, geometry.cols}};
    layout.quantized.insert_or_assign(logical_name, std::move(weight));
  }
}

// ---- decode / encode ----

void check_part_bytes(const QuantizedWeight& weight, QuantizedPartBytes parts, const ModelLayout& layout) {
  if (parts.size() != weight.parts.size()) {
    fail_tensor(layout, weight.parts.at(0),
                std::to_string(parts.size()) + " parts given for " + std::to_string(weight.parts.size()),
                errc::invalid_argument);
  }
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto& tensor = part_layout(layout, weight.parts[i], weight.parts[0], "part");
    const auto elements = product_of(layout, weight.parts[i], tensor.shape);
    const auto bytes = checked_product(elements, static_cast<std::int64_t>(safetensors::dtype_size(tensor.dtype)));
    if (!bytes || static_cast<std::uint64_t>(*bytes) != parts[i].size()) {
      fail_tensor(layout, weight.parts[i],
                  std::to_string(parts[i].size()) + " bytes for " + describe(tensor) + " (" +
                      std::to_string(bytes.value_or(-1)) + " bytes)");
    }
  }
}

void check_supported(const QuantizedWeight& weight, const ModelLayout& layout) {
  if (weight.parts.empty()) {
    throw error(errc::invalid_argument, model_label(layout) + ": a quantized weight has no parts");
  }
  if (!weight.unsupported.empty()) fail_tensor(layout, weight.parts[0], weight.unsupported, errc::invalid_argument);
}

void check_logical_shape(const QuantizedWeight& weight, const ModelLayout& layout,
                         const std::vector<std::int64_t>& from_parts) {
  if (weight.logical.shape != from_parts) {
    fail_tensor(layout, weight.parts[0],
                "the logical shape " + describe(weight.logical) + " does not match the parts' " +
                    describe({weight.logical.dtype, from_parts}),
                errc::invalid_argument);
  }
}

struct AxisRange {
  std::int64_t first = 0;
  std::int64_t last = 0;
  std::int64_t inner = 1;  // values per index of the first axis
};

AxisRange resolve_range(const QuantizedWeight& weight, const ModelLayout& layout, std::int64_t first, std::int64_t last,
                        std::size_t value_count, bool whole_only) {
  const auto& shape = weight.logical.shape;
  const std::int64_t length = shape.empty() ? 0 : shape[0];
  if (last < 0) last = length;
  const bool bad = first < 0 || first > last || last > length || (whole_only && (first != 0 || last != length));
  if (bad) {
    fail_tensor(layout, weight.parts[0],
                "cannot work on [" + std::to_string(first) + ", " + std::to_string(last) + ") of " +
                    describe(weight.logical) + (whole_only ? " (a 2-D MXFP4 weight goes whole)" : ""),
                errc::invalid_argument);
  }
  AxisRange range{first, last, 1};
  for (std::size_t i = 1; i < shape.size(); ++i) range.inner *= shape[i];
  if (static_cast<std::uint64_t>((last - first) * range.inner) != value_count) {
    fail_tensor(layout, weight.parts[0],
                std::to_string(value_count) + " values for " + std::to_string((last - first) * range.inner),
                errc::invalid_argument);
  }
  return range;
}

// The matrices [first, last) of an MXFP4 weight for the range of its first logical axis.
codecs::MxMatrices mx_matrices(const MxGeometry& geometry, const AxisRange& range) {
  if (geometry.batch.empty()) return {geometry.rows, geometry.n_blocks, 0, 1};  // one matrix, whole
  std::int64_t per_index = 1;  // matrices under one index of the first axis
  for (std::size_t i = 1; i < geometry.batch.size(); ++i) per_index *= geometry.batch[i];
  return {geometry.rows, geometry.n_blocks, range.first * per_index, range.last * per_index};
}

// weight_shape's values must be the logical shape: a padded weight (cols not a multiple of 8) is
// not something the cookbook merges either.
void check_weight_shape(const QuantizedWeight& weight, const ModelLayout& layout, const Int4Geometry& geometry,
                        std::span<const std::byte> bytes) {
  std::int64_t dims[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    if (geometry.shape_dtype == Dtype::i32) {
      std::int32_t dim = 0;
      std::memcpy(&dim, bytes.data() + i * 4, 4);
      dims[i] = dim;
    } else {
      std::memcpy(&dims[i], bytes.data() + i * 8, 8);
    }
  }
  if (dims[0] != geometry.rows || dims[1] != geometry.cols) {
    fail_tensor(layout, weight.parts[2],
                "says [" + std::to_string(dims[0]) + ", " + std::to_string(dims[1]) + "] but '" + weight.parts[0] +
                    "' holds [" + std::to_string(geometry.rows) + ", " + std::to_string(geometry.cols) + "]");
  }
}

}  // namespace

void find_all(ModelLayout& layout) {
  layout.quantized.clear();
  const auto config = read_quantization_config(layout);
  if (config.quant_method == "mxfp4") find_mxfp4_weights(layout);
  if (config.format == "pack-quantized") find_packed_int4_weights(layout, config);
}

void decode_range(const QuantizedWeight& weight, QuantizedPartBytes parts, const ModelLayout& layout,
                  std::span<float> out, std::int64_t first, std::int64_t last) {
  check_supported(weight, layout);
  if (weight.kind == QuantizedKind::mxfp4) {
    const auto geometry = mx_geometry(layout, weight);
    check_logical_shape(weight, layout, geometry.logical_shape());
    check_part_bytes(weight, parts, layout);
    const auto range = resolve_range(weight, layout, first, last, out.size(), geometry.batch.empty());
    codecs::decode_mxfp4(mx_matrices(geometry, range), parts[0], parts[1], out);
    return;
  }
  const auto geometry = int4_geometry(layout, weight);
  check_logical_shape(weight, layout, {geometry.rows, geometry.cols});
  check_part_bytes(weight, parts, layout);
  check_weight_shape(weight, layout, geometry, parts[2]);
  const auto range = resolve_range(weight, layout, first, last, out.size(), false);
  const codecs::Int4Rows rows{geometry.packed_cols, geometry.groups, weight.group_size,
                              geometry.scale_dtype, range.first,     range.last};
  codecs::decode_int4(rows, parts[0], parts[1], out);
}

std::vector<float> decode_whole(const QuantizedWeight& weight, QuantizedPartBytes parts, const ModelLayout& layout) {
  std::int64_t count = 1;
  for (const auto dim : weight.logical.shape) {
    const auto next = checked_product(count, dim);
    if (!next) fail_tensor(layout, weight.parts.empty() ? "?" : weight.parts[0], "its logical shape is too large");
    count = *next;
  }
  std::vector<float> values(static_cast<std::size_t>(count));
  decode_range(weight, parts, layout, values, 0, -1);
  return values;
}

std::vector<EncodedPart> encode_range(const QuantizedWeight& weight, std::span<const float> values,
                                      const ModelLayout& layout, std::int64_t first, std::int64_t last) {
  check_supported(weight, layout);
  const auto label = tensor_label(layout, weight.parts[0]);
  std::vector<EncodedPart> pieces(2);
  pieces[0].part = 0;
  pieces[1].part = 1;
  if (weight.kind == QuantizedKind::mxfp4) {
    const auto geometry = mx_geometry(layout, weight);
    check_logical_shape(weight, layout, geometry.logical_shape());
    const auto range = resolve_range(weight, layout, first, last, values.size(), geometry.batch.empty());
    const auto matrices = mx_matrices(geometry, range);
    const auto scale_count =
        static_cast<std::size_t>((matrices.last - matrices.first) * geometry.rows * geometry.n_blocks);
    const auto scale_offset = static_cast<std::uint64_t>(matrices.first * geometry.rows * geometry.n_blocks);
    pieces[0].offset = scale_offset * mx_block_bytes;
    pieces[0].bytes.resize(scale_count * mx_block_bytes);
    pieces[1].offset = scale_offset;
    pieces[1].bytes.resize(scale_count);
    codecs::encode_mxfp4(matrices, values, weight.logical.dtype, pieces[0].bytes, pieces[1].bytes, label);
    return pieces;
  }
  const auto geometry = int4_geometry(layout, weight);
  check_logical_shape(weight, layout, {geometry.rows, geometry.cols});
  const auto range = resolve_range(weight, layout, first, last, values.size(), false);
  const auto row_count = static_cast<std::size_t>(range.last - range.first);
  const auto packed_row_bytes = static_cast<std::size_t>(geometry.packed_cols) * 4;
  const auto scale_row_bytes =
      static_cast<std::size_t>(geometry.groups) * safetensors::dtype_size(geometry.scale_dtype);
  pieces[0].offset = static_cast<std::uint64_t>(range.first) * packed_row_bytes;
  pieces[0].bytes.resize(row_count * packed_row_bytes);
  pieces[1].offset = static_cast<std::uint64_t>(range.first) * scale_row_bytes;
  pieces[1].bytes.resize(row_count * scale_row_bytes);
  const codecs::Int4Rows rows{geometry.packed_cols, geometry.groups, weight.group_size,
                              geometry.scale_dtype, range.first,     range.last};
  codecs::encode_int4(rows, values, weight.logical.dtype, pieces[0].bytes, pieces[1].bytes, label);
  return pieces;
}

}  // namespace tinker::weights::detail::quantized_impl

namespace tinker::weights::detail {

void find_quantized_weights(ModelLayout& layout) {
  quantized_impl::find_all(layout);
}

void dequantize(const QuantizedWeight& weight, QuantizedPartBytes parts, const ModelLayout& layout,
                std::span<float> out, std::int64_t first, std::int64_t last) {
  quantized_impl::decode_range(weight, parts, layout, out, first, last);
}

std::vector<float> dequantize(const QuantizedWeight& weight, QuantizedPartBytes parts, const ModelLayout& layout) {
  return quantized_impl::decode_whole(weight, parts, layout);
}

std::vector<EncodedPart> encode(const QuantizedWeight& weight, std::span<const float> values, const ModelLayout& layout,
                                std::int64_t first, std::int64_t last) {
  return quantized_impl::encode_range(weight, values, layout, first, last);
}

}  // namespace tinker::weights::detail
