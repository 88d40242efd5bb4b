// build_gguf_adapter: Tinker's adapter -> PEFT names (convert_to_peft) -> llama.cpp's names and
// conventions (gguf_export.hpp lists them) -> one GGUF file, written under a temporary name.
#include "weights/gguf_export.hpp"

#include "weights/gguf_names.hpp"

#include <tinker/error.hpp>
#include <tinker/model_name.hpp>
#include <tinker/safetensors.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

namespace tinker::weights {
namespace detail {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view gguf_peft_prefix = "base_model.model.";
constexpr std::uint32_t gguf_quantization_version = 2;  // gguf-py's GGML_QUANT_VERSION, written by every converter

[[noreturn]] void gguf_refuse(const std::string& message) {
  throw error(errc::invalid_argument, message);
}

std::string gguf_shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// Splits "base_model.model.<module>.lora_A.weight" into {<module>, 'A'}.
std::optional<std::pair<std::string, char>> gguf_split_peft_key(std::string_view key) {
  if (!key.starts_with(gguf_peft_prefix)) return std::nullopt;
  key.remove_prefix(gguf_peft_prefix.size());
  for (const char side : {'A', 'B'}) {
    const std::string suffix = std::string(".lora_") + side + ".weight";
    if (key.ends_with(suffix) && key.size() > suffix.size()) {
      return std::pair{std::string(key.substr(0, key.size() - suffix.size())), side};
    }
  }
  return std::nullopt;
}

// config.json's integer `key` (top level), or nullopt.
std::optional<std::int64_t> gguf_config_int(const ModelLayout& model, std::string_view key) {
  boost::system::error_code ec;
  const boost::json::value config = boost::json::parse(model.config_json, ec);
  if (ec || !config.is_object()) return std::nullopt;
  const boost::json::value* value = config.as_object().if_contains(key);
  if (value == nullptr || !value->is_number()) return std::nullopt;
  const auto number = value->to_number<std::int64_t>(ec);
  return ec ? std::nullopt : std::optional<std::int64_t>(number);
}

// llama.cpp's converter reorders the rows of Llama's q and k projections, head by head, from Hugging
// Face's rotary layout (the first halves of all rotary pairs, then the second halves) to ggml's
// (the two halves of each pair next to each other): row (h, j, k) of the result, j < d/2, k in {0, 1},
// is row (h, k, j) of the input. A LoRA's lora_B carries the rows, so it is permuted the same way.
FloatTensor gguf_permute_rotary_rows(const FloatTensor& b, std::int64_t heads, const std::string& module) {
  const std::int64_t rows = b.shape[0];
  const std::int64_t columns = b.shape[1];
  if (heads <= 0 || heads > rows || rows % heads != 0 || (rows / heads) % 2 != 0) {
    gguf_refuse("GGUF export: " + module + " has " + std::to_string(rows) + " rows, not a multiple of 2 x " +
                std::to_string(heads) + " heads (config.json), so llama.cpp's rotary reordering does not apply");
  }
  const std::int64_t head_dim = rows / heads;
  const std::int64_t half = head_dim / 2;
  FloatTensor out{b.shape, std::vector<float>(b.values.size())};
  for (std::int64_t h = 0; h < heads; ++h) {
    for (std::int64_t j = 0; j < half; ++j) {
      for (std::int64_t k = 0; k < 2; ++k) {
        const std::int64_t to = h * head_dim + j * 2 + k;
        const std::int64_t from = h * head_dim + k * half + j;
        std::copy_n(b.values.begin() + from * columns, columns, out.values.begin() + to * columns);
      }
    }
  }
  return out;
}

// The head count whose rotary layout a projection's rows follow: q uses the attention heads, k
// the key-value heads when the model has fewer of them (grouped-query attention).
std::int64_t gguf_rotary_heads(const ModelLayout& model, std::string_view projection) {
  const auto heads = gguf_config_int(model, "num_attention_heads");
  if (!heads) gguf_refuse("GGUF export: " + (model.directory / "config.json").string() + " has no num_attention_heads");
  if (projection == "k_proj") {
    if (const auto kv_heads = gguf_config_int(model, "num_key_value_heads")) return *kv_heads;
  }
  return *heads;
}

void gguf_check_shapes(const GgufLoraPair& pair, const std::string& peft_key, const TensorLayout& base) {
  const FloatTensor& a = *pair.a;
  const FloatTensor& b = *pair.b;
  const bool fits = a.shape.size() == 2 && b.shape.size() == 2 && base.shape.size() == 2 && a.shape[0] == b.shape[1] &&
                    a.shape[1] == base.shape[1] && b.shape[0] == base.shape[0] && a.shape[0] > 0;
  if (!fits) {
    gguf_refuse("GGUF export: adapter tensor '" + peft_key + "': lora_A " + gguf_shape_text(a.shape) + " and lora_B " +
                gguf_shape_text(b.shape) + " do not fit base tensor '" + pair.peft_module + ".weight' " +
                gguf_shape_text(base.shape));
  }
}

using GgufPeftEntry = std::pair<std::string, std::shared_ptr<const FloatTensor>>;

// A module's lora_A and lora_B entries of a PeftAdapter.
struct GgufPeftSides {
  const GgufPeftEntry* a = nullptr;
  const GgufPeftEntry* b = nullptr;
};

// One PEFT module as llama.cpp stores it: its GGUF name, checked against the base, lora_B permuted
// where llama.cpp permutes the weight.
GgufLoraPair gguf_plan_pair(const std::string& module, const GgufPeftSides& sides, const ModelLayout& model,
                            const std::string& architecture) {
  const GgufPeftEntry* any = sides.a != nullptr ? sides.a : sides.b;
  if (sides.a == nullptr || sides.b == nullptr) {
    gguf_refuse("GGUF export: adapter tensor '" + any->first + "' has no " +
                (sides.a == nullptr ? "lora_A" : "lora_B") + " partner");
  }
  const std::string hf_name = module + ".weight";
  if (hf_name == "model.embed_tokens.weight") {
    gguf_refuse("GGUF export: adapter tensor '" + any->first +
                "' adapts the unembedding, which this base ties to the token embeddings (no lm_head.weight); "
                "llama.cpp has no separate output matrix to apply it to. Export --format merged instead, or "
                "train without the unembedding LoRA");
  }
  const auto gguf_name = gguf_tensor_name(architecture, hf_name);
  if (!gguf_name) {
    gguf_refuse("GGUF export: adapter tensor '" + any->first + "': llama.cpp's " + architecture +
                " architecture has no tensor for '" + hf_name + "'");
  }
  const auto base = model.tensors.find(hf_name);
  if (base == model.tensors.end()) {
    gguf_refuse("GGUF export: adapter tensor '" + any->first + "': base tensor '" + hf_name + "' is not in " +
                model.directory.string());
  }
  GgufLoraPair pair{*gguf_name, module, sides.a->second, sides.b->second};
  gguf_check_shapes(pair, any->first, base->second);
  if (gguf_permutes_qk(architecture)) {
    for (const std::string_view projection : {"q_proj", "k_proj"}) {
      if (module.ends_with("self_attn." + std::string(projection))) {
        pair.b = std::make_shared<const FloatTensor>(
            gguf_permute_rotary_rows(*pair.b, gguf_rotary_heads(model, projection), module));
      }
    }
  }
  return pair;
}

// Decoder layers by number, then the weights outside them, each group by name.
std::tuple<int, long long, std::string> gguf_pair_order(const GgufLoraPair& pair) {
  constexpr std::string_view block = "blk.";
  if (pair.name.starts_with(block)) {
    long long layer = 0;
    const char* first = pair.name.data() + block.size();
    std::from_chars(first, pair.name.data() + pair.name.size(), layer);
    return {0, layer, pair.name};
  }
  return {1, 0, pair.name};
}

void gguf_report(const ProgressCallback& progress, std::string_view stage, std::uint64_t bytes_done,
                 std::uint64_t bytes_total, std::size_t tensors_done, std::size_t tensors_total) {
  if (progress) progress(ExportProgress{stage, bytes_done, bytes_total, tensors_done, tensors_total});
}

// Writes `tensor` as `type` in bounded pieces, so converting never holds a second copy of a large
// tensor.
void gguf_write_values(GgufWriter& writer, std::size_t index, const FloatTensor& tensor, GgmlType type) {
  constexpr std::size_t piece = std::size_t{1} << 18;
  const safetensors::Dtype dtype = type == GgmlType::f32   ? safetensors::Dtype::f32
                                   : type == GgmlType::f16 ? safetensors::Dtype::f16
                                                           : safetensors::Dtype::bf16;
  const std::size_t element = ggml_type_size(type);
  std::vector<std::byte> buffer(std::min(piece, tensor.values.size()) * element);
  for (std::size_t start = 0; start < tensor.values.size(); start += piece) {
    const std::size_t count = std::min(piece, tensor.values.size() - start);
    const std::span<std::byte> out(buffer.data(), count * element);
    safetensors::from_f32(dtype, std::span<const float>(tensor.values).subspan(start, count), out);
    writer.write(index, out);
  }
}

}  // namespace

std::string require_gguf_architecture(const ModelLayout& model) {
  std::string architecture = gguf_architecture_for(model);
  if (architecture.empty()) {
    const std::string declared = model.architectures.empty() ? "none" : model.architectures.front();
    gguf_refuse("GGUF export: " + (model.directory / "config.json").string() + ": model_type '" + model.model_type +
                "' (architecture " + declared + ") has no llama.cpp LoRA export; supported: " +
                std::string(gguf_supported_families()) + ". Export --format peft or merged instead");
  }
  return architecture;
}

GgufAdapterPlan plan_gguf_adapter(const PeftAdapter& peft, const ModelLayout& model) {
  GgufAdapterPlan plan;
  plan.architecture = require_gguf_architecture(model);
  plan.lora_alpha = peft.lora_alpha;
  if (!(peft.lora_alpha > 0) || !std::isfinite(peft.lora_alpha)) {
    // llama.cpp reads alpha 0 as "no scaling" (scale 1), which is not what PEFT means by it.
    gguf_refuse("GGUF export: lora_alpha " + std::to_string(peft.lora_alpha) + " is not a positive number");
  }
  std::map<std::string, GgufPeftSides> modules;
  for (const GgufPeftEntry& entry : peft.tensors) {
    const auto split = gguf_split_peft_key(entry.first);
    if (!split) gguf_refuse("GGUF export: adapter tensor '" + entry.first + "' is not a PEFT lora_A/lora_B weight");
    GgufPeftSides& sides = modules[split->first];
    (split->second == 'A' ? sides.a : sides.b) = &entry;
  }
  for (const auto& [module, sides] : modules)
    plan.pairs.push_back(gguf_plan_pair(module, sides, model, plan.architecture));
  std::sort(plan.pairs.begin(), plan.pairs.end(),
            [](const GgufLoraPair& x, const GgufLoraPair& y) { return gguf_pair_order(x) < gguf_pair_order(y); });
  return plan;
}

GgmlType gguf_out_type(std::string_view out_type) {
  if (out_type == "f32") return GgmlType::f32;
  if (out_type == "f16") return GgmlType::f16;
  if (out_type == "bf16") return GgmlType::bf16;
  gguf_refuse("GGUF export: out_type '" + std::string(out_type) + "' is not one of f32, f16, bf16");
}

std::uint64_t write_gguf_adapter(const GgufAdapterPlan& plan, const std::string& name, GgmlType type,
                                 const fs::path& output, const ProgressCallback& progress) {
  GgufWriter writer(output);
  writer.add("general.architecture", std::string(plan.architecture));
  writer.add("general.type", std::string("adapter"));
  writer.add("general.name", name + " LoRA");
  writer.add("general.base_model.count", std::uint32_t{1});
  writer.add("general.base_model.0.name", std::string(name));
  writer.add("adapter.type", std::string("lora"));
  writer.add("adapter.lora.alpha", static_cast<float>(plan.lora_alpha));
  writer.add("general.quantization_version", gguf_quantization_version);

  std::vector<const FloatTensor*> sources;
  for (const GgufLoraPair& pair : plan.pairs) {
    // lora_a right before its lora_b: gguf-py counts an adapter's parameters pair by pair in that order.
    writer.add_tensor(pair.name + ".lora_a", pair.a->shape, type);
    writer.add_tensor(pair.name + ".lora_b", pair.b->shape, type);
    sources.push_back(pair.a.get());
    sources.push_back(pair.b.get());
  }
  std::uint64_t bytes_total = 0;
  for (std::size_t i = 0; i < sources.size(); ++i) bytes_total += writer.byte_size(i);

  std::uint64_t bytes_done = 0;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    gguf_write_values(writer, i, *sources[i], type);
    bytes_done += writer.byte_size(i);
    gguf_report(progress, "writing", bytes_done, bytes_total, i + 1, sources.size());
  }
  writer.finish();
  return writer.file_size();
}

}  // namespace detail

namespace {

// The base model's name for the metadata: the caller's, else config.json's "_name_or_path", else the
// directory's name.
std::string gguf_base_name(const GgufAdapterOptions& options, const detail::ModelLayout& model) {
  if (!options.base_model_name.empty()) return std::string(model_lookup_name(options.base_model_name));
  boost::system::error_code ec;
  const boost::json::value config = boost::json::parse(model.config_json, ec);
  if (!ec && config.is_object()) {
    const boost::json::value* name = config.as_object().if_contains("_name_or_path");
    if (name != nullptr && name->is_string() && !name->as_string().empty()) return std::string(name->as_string());
  }
  const std::filesystem::path directory = options.base_model_dir.lexically_normal();
  return (directory.has_filename() ? directory.filename() : directory.parent_path().filename()).string();
}

}  // namespace

ExportSummary build_gguf_adapter(const GgufAdapterOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  if (std::filesystem::exists(std::filesystem::symlink_status(options.output_file))) {
    throw error(errc::invalid_argument, options.output_file.string() + ": the output already exists");
  }
  const detail::GgmlType type = detail::gguf_out_type(options.out_type);
  const detail::ModelLayout model = detail::read_model_layout(options.base_model_dir);
  detail::require_gguf_architecture(model);  // before reading the adapter: the cheap refusal first

  detail::gguf_report(options.progress, "reading adapter", 0, 0, 0, 0);
  const detail::TinkerAdapter adapter = detail::load_tinker_adapter(options.adapter_dir);
  const detail::PeftAdapter peft = detail::convert_to_peft(adapter, model);
  const detail::GgufAdapterPlan plan = detail::plan_gguf_adapter(peft, model);
  const std::uint64_t written =
      detail::write_gguf_adapter(plan, gguf_base_name(options, model), type, options.output_file, options.progress);

  ExportSummary summary;
  summary.output = options.output_file;
  summary.family = peft.profile.family;
  summary.tensors_written = plan.pairs.size() * 2;
  summary.tensors_changed = plan.pairs.size();
  summary.bytes_read = adapter.bytes_read;
  summary.bytes_written = written;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return summary;
}

}  // namespace tinker::weights
