// Reading the two inputs of every export: a Tinker adapter (adapter_model.safetensors +
// adapter_config.json) into memory, checked whole before anything is planned, and a base model's
// layout (config.json and the safetensors headers; no weight is read).
#include "core/files.hpp"
#include "weights/key_mapping.hpp"
#include "weights/lora_plan.hpp"
#include "weights/quantized.hpp"

#include <tinker/error.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

namespace tinker::weights::detail {
namespace {

constexpr std::string_view adapter_weights_file = "adapter_model.safetensors";
constexpr std::string_view adapter_config_file = "adapter_config.json";

boost::json::object parse_config_object(const std::string& text, const std::filesystem::path& path) {
  boost::system::error_code ec;
  boost::json::value value = boost::json::parse(text, ec);
  if (ec) throw error(errc::invalid_file, path.string() + ": not JSON: " + ec.message());
  if (!value.is_object()) throw error(errc::invalid_file, path.string() + ": not a JSON object");
  return std::move(value.as_object());
}

/// A number of the config as a double (JSON integers and reals alike), or nullopt.
std::optional<double> config_json_number(const boost::json::value& value) {
  if (value.is_int64()) return static_cast<double>(value.as_int64());
  if (value.is_uint64()) return static_cast<double>(value.as_uint64());
  if (value.is_double()) return value.as_double();
  return std::nullopt;
}

/// A config value for an error message: numbers as written in the file (Boost.JSON would write
/// 2.5 as 2.5E0), anything else as JSON.
std::string describe_config_value(const boost::json::value& value) {
  if (value.is_double()) {
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value.as_double());
    return std::string(buffer, result.ptr);
  }
  return boost::json::serialize(value);
}

struct AdapterConfigValues {
  double lora_alpha = 0;
  std::int64_t rank = 0;
};

AdapterConfigValues read_adapter_config(const std::filesystem::path& path) {
  const boost::json::object config = parse_config_object(tinker::detail::read_whole_file(path), path);
  for (const char* key : {"r", "lora_alpha"}) {
    if (!config.contains(key)) {
      throw error(errc::invalid_file, path.string() + ": missing required key '" + key + "'");
    }
  }
  const auto rank = config_json_number(config.at("r"));
  if (!rank || *rank < 1 || *rank > 1e9 || std::floor(*rank) != *rank) {
    throw error(errc::invalid_file,
                path.string() + ": 'r' is " + describe_config_value(config.at("r")) + ", not a positive integer");
  }
  const auto alpha = config_json_number(config.at("lora_alpha"));
  if (!alpha || !std::isfinite(*alpha)) {
    throw error(errc::invalid_file, path.string() + ": 'lora_alpha' is " +
                                        describe_config_value(config.at("lora_alpha")) + ", not a number");
  }
  return {*alpha, static_cast<std::int64_t>(*rank)};
}

/// Checks one A/B pair's shapes: 2-D [r, in] and [out, r], or 3-D [E, r, in] and [E, out, r] for
/// experts (E = 1 on one side: shared by every expert), r equal to the config's; both empty is
/// Tinker's placeholder for an expert projection the model lacks (Nemotron's w3).
void check_pair_shapes(const safetensors::TensorInfo& a, const safetensors::TensorInfo& b, std::int64_t rank,
                       const std::string& file) {
  const auto fail = [&](const safetensors::TensorInfo& tensor, const std::string& why) {
    throw error(errc::invalid_file, file + ": tensor '" + tensor.name + "': " + why);
  };
  const bool a_empty = a.element_count() == 0;
  const bool b_empty = b.element_count() == 0;
  if (a_empty || b_empty) {
    if (a_empty && b_empty && is_expert_name(a.name)) return;
    fail(a_empty ? a : b, "empty LoRA matrix " + format_shape((a_empty ? a : b).shape) + " (with " +
                              (a_empty ? b : a).name + " " + format_shape((a_empty ? b : a).shape) + ")");
  }
  const std::size_t dims = is_expert_name(a.name) ? 3 : 2;
  if (a.shape.size() != dims || b.shape.size() != dims) {
    fail(a, "lora_A " + format_shape(a.shape) + " and lora_B " + format_shape(b.shape) + " are not both " +
                (dims == 3 ? "3-D (routed experts: [experts, rank, in] and [experts, out, rank])"
                           : "2-D ([rank, in] and [out, rank])"));
  }
  const std::size_t lead = a.shape.size() - 2;  // 1 for experts: the expert axis comes first
  if (a.shape[lead] != rank) {
    fail(a, "rank " + std::to_string(a.shape[lead]) + " (lora_A " + format_shape(a.shape) + ") differs from " +
                std::string(adapter_config_file) + "'s r = " + std::to_string(rank));
  }
  if (b.shape[lead + 1] != rank) {
    fail(b, "rank " + std::to_string(b.shape[lead + 1]) + " (lora_B " + format_shape(b.shape) + ") differs from " +
                std::string(adapter_config_file) + "'s r = " + std::to_string(rank));
  }
  if (lead == 1) {
    const std::int64_t ea = a.shape[0];
    const std::int64_t eb = b.shape[0];
    if (ea == 1 && eb == 1) fail(a, "lora_A and lora_B both hold one expert: nothing says how many experts there are");
    if (ea != eb && ea != 1 && eb != 1) {
      fail(a, "lora_A has " + std::to_string(ea) + " experts, lora_B " + std::to_string(eb));
    }
  }
}

std::shared_ptr<const FloatTensor> read_float_tensor(const safetensors::SafetensorsFile& file,
                                                     const safetensors::TensorInfo& tensor) {
  auto out = std::make_shared<FloatTensor>();
  out->shape = tensor.shape;
  out->values = file.read_f32(tensor);
  return out;
}

std::string replace_first_of(std::string text, std::string_view from, std::string_view to) {
  if (const auto at = text.find(from); at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

}  // namespace

TinkerAdapter load_tinker_adapter(const std::filesystem::path& directory) {
  TinkerAdapter adapter;
  adapter.directory = directory;
  const auto config_path = directory / adapter_config_file;
  const auto weights_path = directory / adapter_weights_file;
  const AdapterConfigValues config = read_adapter_config(config_path);
  adapter.lora_alpha = config.lora_alpha;
  adapter.rank = config.rank;

  const auto file = safetensors::SafetensorsFile::open(weights_path);
  const std::string file_name = weights_path.string();
  std::map<std::string, const safetensors::TensorInfo*> b_by_name;
  std::vector<const safetensors::TensorInfo*> a_tensors;
  for (const auto& tensor : file.tensors()) {
    if (!safetensors::is_float(tensor.dtype)) {
      throw error(errc::invalid_file, file_name + ": tensor '" + tensor.name + "': dtype " +
                                          std::string(safetensors::to_string(tensor.dtype)) +
                                          "; a LoRA matrix is F32, F16 or BF16");
    }
    if (tensor.name.find(".lora_A") != std::string::npos) {
      a_tensors.push_back(&tensor);
    } else if (tensor.name.find(".lora_B") != std::string::npos) {
      b_by_name.emplace(tensor.name, &tensor);
    } else {
      // A Tinker adapter holds LoRA matrices only; anything else would be left out of every export.
      throw error(errc::invalid_file,
                  file_name + ": tensor '" + tensor.name + "' is not a LoRA matrix (.lora_A/.lora_B)");
    }
  }
  if (a_tensors.empty()) throw error(errc::invalid_file, file_name + ": no LoRA matrices (no .lora_A tensor)");
  // In name order, so the first bad pair reported does not depend on the file's data layout.
  std::sort(a_tensors.begin(), a_tensors.end(),
            [](const safetensors::TensorInfo* x, const safetensors::TensorInfo* y) { return x->name < y->name; });

  for (const safetensors::TensorInfo* a : a_tensors) {
    const std::string b_name = replace_first_of(a->name, ".lora_A", ".lora_B");
    const auto b_it = b_by_name.find(b_name);
    if (b_it == b_by_name.end()) {
      throw error(errc::invalid_file, file_name + ": tensor '" + a->name + "' has no lora_B ('" + b_name + "')");
    }
    const safetensors::TensorInfo* b = b_it->second;
    b_by_name.erase(b_it);
    check_pair_shapes(*a, *b, adapter.rank, file_name);
    adapter.pairs.push_back(AdapterPair{replace_first_of(a->name, ".lora_A", ""), read_float_tensor(file, *a),
                                        read_float_tensor(file, *b)});
    adapter.bytes_read += a->byte_size() + b->byte_size();
  }
  if (!b_by_name.empty()) {
    const std::string& orphan = b_by_name.begin()->first;
    throw error(errc::invalid_file, file_name + ": tensor '" + orphan + "' has no lora_A ('" +
                                        replace_first_of(orphan, ".lora_B", ".lora_A") + "')");
  }
  std::sort(adapter.pairs.begin(), adapter.pairs.end(),
            [](const AdapterPair& x, const AdapterPair& y) { return x.name < y.name; });
  for (std::size_t i = 1; i < adapter.pairs.size(); ++i) {
    if (adapter.pairs[i].name == adapter.pairs[i - 1].name) {
      throw error(errc::invalid_file, file_name + ": two LoRA pairs for module '" + adapter.pairs[i].name + "'");
    }
  }
  adapter.bytes_read += file.data_offset();
  return adapter;
}

namespace {

/// `key` of the config, or of its "text_config" when the top level lacks it: vision-language
/// configs (Qwen3.5, Kimi K2.5) keep the text model's facts there.
const boost::json::value* config_value_or_text_config(const boost::json::object& config, std::string_view key) {
  if (const auto* value = config.if_contains(key)) return value;
  if (const auto* text = config.if_contains("text_config"); text != nullptr && text->is_object()) {
    return text->as_object().if_contains(key);
  }
  return nullptr;
}

std::string config_string_or_empty(const boost::json::value* value) {
  return value != nullptr && value->is_string() ? std::string(value->as_string()) : std::string();
}

}  // namespace

ModelLayout read_model_layout(const std::filesystem::path& directory) {
  ModelLayout layout;
  layout.directory = directory;
  const auto config_path = directory / "config.json";
  layout.config_json = tinker::detail::read_whole_file(config_path);
  const boost::json::object config = parse_config_object(layout.config_json, config_path);

  layout.model_type = config_string_or_empty(config_value_or_text_config(config, "model_type"));
  if (const auto* archs = config_value_or_text_config(config, "architectures"); archs != nullptr && archs->is_array()) {
    for (const auto& name : archs->as_array()) {
      if (name.is_string()) layout.architectures.emplace_back(name.as_string());
    }
  }
  if (const auto* quant = config_value_or_text_config(config, "quantization_config");
      quant != nullptr && quant->is_object()) {
    layout.quant_method = config_string_or_empty(quant->as_object().if_contains("quant_method"));
    layout.quant_format = config_string_or_empty(quant->as_object().if_contains("format"));
  }

  const auto weights = safetensors::SafetensorsModel::open(directory);
  for (const std::string& name : weights.tensor_names()) {
    const auto location = weights.find(name);
    if (location.tensor == nullptr) continue;
    TensorLayout entry;
    entry.dtype = location.tensor->dtype;
    entry.shape = location.tensor->shape;
    layout.tensors.emplace(name, std::move(entry));
  }
  find_quantized_weights(layout);
  return layout;
}

}  // namespace tinker::weights::detail
