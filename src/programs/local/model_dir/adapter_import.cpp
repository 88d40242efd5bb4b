// Reading a PEFT LoRA adapter directory (adapter_config.json + adapter_model.safetensors), for
// ServerOptions::adapters / `tinker-local --adapter` (doc/local.md#model-directories).
//
// PEFT scales B A by lora_alpha / r, or by lora_alpha / sqrt(r) with use_rslora; the second is
// turned into the first (alpha * sqrt(r)) because the tiny model has one scale rule. What a single
// rank and alpha cannot express (rank_pattern, alpha_pattern) and DoRA's magnitude vectors are
// refused rather than served wrongly.
#include "core/files.hpp"
#include "programs/local/model_dir/model_dir.hpp"

#include <tinker/error.hpp>
#include <tinker/safetensors.hpp>

#include <boost/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tinker::local::hf_dir {
namespace {

[[noreturn]] void bad_adapter_config(const std::filesystem::path& path, std::string_view key, const std::string& what) {
  throw error(errc::invalid_file, path.string() + ": key '" + std::string(key) + "': " + what);
}

bool non_empty_object(const boost::json::object& config, std::string_view key) {
  const boost::json::value* value = config.if_contains(key);
  return value != nullptr && value->is_object() && !value->as_object().empty();
}

// r, lora_alpha (rsLoRA folded in) and the refusals, from adapter_config.json.
void read_adapter_scale(const std::filesystem::path& path, AdapterFiles& adapter) {
  boost::system::error_code ec;
  const boost::json::value parsed = boost::json::parse(tinker::detail::read_whole_file(path), ec);
  if (ec || !parsed.is_object()) throw error(errc::invalid_file, path.string() + ": not a JSON object");
  const boost::json::object& config = parsed.as_object();
  if (const auto* type = config.if_contains("peft_type");
      type != nullptr && (!type->is_string() || type->as_string() != "LORA")) {
    bad_adapter_config(path, "peft_type", "only LORA adapters are served, got " + boost::json::serialize(*type));
  }
  const boost::json::value* r = config.if_contains("r");
  if (r == nullptr || !r->is_int64() || r->as_int64() < 1 || r->as_int64() > 1024) {
    bad_adapter_config(path, "r", "expected an integer in [1, 1024]");
  }
  adapter.rank = static_cast<int>(r->as_int64());
  const boost::json::value* alpha = config.if_contains("lora_alpha");
  if (alpha == nullptr || !alpha->is_number() || !(alpha->to_number<double>() > 0.0) ||
      !std::isfinite(alpha->to_number<double>())) {
    bad_adapter_config(path, "lora_alpha", "expected a positive number");
  }
  adapter.lora_alpha = alpha->to_number<double>();
  if (const auto* rslora = config.if_contains("use_rslora");
      rslora != nullptr && rslora->is_bool() && rslora->as_bool()) {
    adapter.lora_alpha *= std::sqrt(static_cast<double>(adapter.rank));  // alpha / sqrt(r) = (alpha sqrt(r)) / r
  }
  if (const auto* dora = config.if_contains("use_dora"); dora != nullptr && dora->is_bool() && dora->as_bool()) {
    bad_adapter_config(path, "use_dora", "DoRA adapters are not served (LoRA only)");
  }
  for (const char* key : {"rank_pattern", "alpha_pattern"}) {
    if (non_empty_object(config, key)) {
      bad_adapter_config(path, key, "per-module ranks or alphas are not served (one rank, one alpha)");
    }
  }
}

}  // namespace

AdapterFiles read_peft_adapter(const std::filesystem::path& dir) {
  AdapterFiles adapter;
  read_adapter_scale(dir / "adapter_config.json", adapter);
  adapter.weights_file = dir / "adapter_model.safetensors";
  const safetensors::SafetensorsFile file = safetensors::SafetensorsFile::open(adapter.weights_file);
  for (const safetensors::TensorInfo& info : file.tensors()) {
    const std::string label = adapter.weights_file.string() + ": tensor '" + info.name + "'";
    if (!safetensors::is_float(info.dtype)) {
      throw error(errc::invalid_file,
                  label + ": dtype " + std::string(safetensors::to_string(info.dtype)) + ", expected a float type");
    }
    if (info.shape.size() != 2) {
      throw error(errc::invalid_file, label + ": " + std::to_string(info.shape.size()) + "-D, expected a matrix");
    }
    adapter.tensors.push_back(model::NamedTensor{info.name, info.shape, file.read_f32(info)});
  }
  return adapter;
}

}  // namespace tinker::local::hf_dir
