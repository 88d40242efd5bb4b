// build_lora_adapter and describe_base_model (include/tinker/weights.hpp): a Tinker adapter
// written out as a PEFT adapter directory, built in a staging directory renamed into place at the
// end, and what the exporters make of a base model directory.
#include "core/wire/json_writer.hpp"
#include "weights/gguf_names.hpp"
#include "weights/lora_plan.hpp"
#include "weights/peft_convert.hpp"

#include <tinker/error.hpp>
#include <tinker/model_name.hpp>
#include <tinker/safetensors.hpp>
#include <tinker/weights.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>

namespace tinker::weights {
namespace {

using detail::PeftAdapter;

void report_progress(const ProgressCallback& progress, std::string_view stage, std::uint64_t bytes_done = 0,
                     std::uint64_t bytes_total = 0, std::size_t tensors_done = 0, std::size_t tensors_total = 0) {
  if (progress) progress(ExportProgress{stage, bytes_done, bytes_total, tensors_done, tensors_total});
}

/// A JSON number as Python's json.dumps writes the value the config held: integers without a
/// fraction ("32"), others in shortest round-trip form.
std::string json_number_text(double value) {
  if (std::floor(value) == value && std::fabs(value) < 9.007199254740992e15) {
    return std::to_string(static_cast<std::int64_t>(value));
  }
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string json_string_text(std::string_view text) {
  std::string out;
  wire::append_json_string(out, text);
  return out;
}

/// {"in_proj": 16} at the config's second level of indentation, as json.dumps(indent=2) writes it.
std::string json_int_map_text(const std::map<std::string, std::int64_t>& values) {
  if (values.empty()) return "{}";
  std::string text = "{";
  for (auto it = values.begin(); it != values.end(); ++it) {
    text +=
        (it == values.begin() ? "\n    " : ",\n    ") + json_string_text(it->first) + ": " + std::to_string(it->second);
  }
  return text + "\n  }";
}

std::string json_string_list_text(const std::vector<std::string>& values) {
  if (values.empty()) return "[]";
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) text += (i == 0 ? "\n    " : ",\n    ") + json_string_text(values[i]);
  return text + "\n  ]";
}

/// adapter_config.json with the cookbook's fields in the cookbook's order and layout
/// (json.dumps(indent=2) plus a newline). A fused module whose rank is a sum of ranks gets
/// rank_pattern and an alpha_pattern that keeps alpha / r at the adapter's scale.
std::string peft_config_json(const PeftAdapter& peft, std::string_view base_model_name) {
  std::map<std::string, std::int64_t> alpha_pattern;
  for (const auto& [module, rank] : peft.rank_pattern) {
    // int() of the Python original: truncated toward zero.
    alpha_pattern[module] =
        static_cast<std::int64_t>(peft.lora_alpha * static_cast<double>(rank) / static_cast<double>(peft.rank));
  }
  const std::pair<std::string_view, std::string> fields[] = {
      {"peft_type", "\"LORA\""},
      {"auto_mapping", "null"},
      {"base_model_name_or_path", json_string_text(base_model_name)},
      {"bias", "\"none\""},
      {"fan_in_fan_out", "false"},
      {"inference_mode", "true"},
      {"init_lora_weights", "true"},
      {"lora_alpha", json_number_text(peft.lora_alpha)},
      {"lora_dropout", "0.0"},
      {"modules_to_save", "null"},
      {"r", std::to_string(peft.rank)},
      {"rank_pattern", json_int_map_text(peft.rank_pattern)},
      {"alpha_pattern", json_int_map_text(alpha_pattern)},
      {"target_modules", json_string_list_text(peft.target_modules)},
      {"task_type", "\"CAUSAL_LM\""},
  };
  std::string text = "{";
  for (std::size_t i = 0; i < std::size(fields); ++i) {
    text += (i == 0 ? "\n  \"" : ",\n  \"") + std::string(fields[i].first) + "\": " + fields[i].second;
  }
  return text + "\n}\n";
}

/// The float type the written adapter uses: the Tinker file's, when all its tensors share bf16 or
/// f16 (so nothing is widened, and the values round-trip exactly), else f32.
safetensors::Dtype adapter_output_dtype(const std::filesystem::path& adapter_dir) {
  const auto file = safetensors::SafetensorsFile::open(adapter_dir / "adapter_model.safetensors");
  const auto& tensors = file.tensors();
  if (tensors.empty()) return safetensors::Dtype::f32;
  const safetensors::Dtype first = tensors.front().dtype;
  const bool uniform = std::all_of(tensors.begin(), tensors.end(), [&](const auto& t) { return t.dtype == first; });
  return uniform && (first == safetensors::Dtype::bf16 || first == safetensors::Dtype::f16) ? first
                                                                                            : safetensors::Dtype::f32;
}

void write_text_output(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (out) out.flush();
  if (!out) throw error(errc::io_error, path.string() + ": cannot write: " + std::strerror(errno));
}

/// Writes the tensors (in key order) to `path`; returns the file's size.
std::uint64_t write_peft_tensors(const std::filesystem::path& path, const PeftAdapter& peft, safetensors::Dtype dtype,
                                 const ProgressCallback& progress) {
  std::vector<safetensors::TensorDecl> decls;
  decls.reserve(peft.tensors.size());
  for (const auto& [name, tensor] : peft.tensors) decls.push_back(safetensors::TensorDecl{name, dtype, tensor->shape});
  // transformers refuses a safetensors file whose metadata lacks a known "format".
  safetensors::SafetensorsWriter writer(path, std::move(decls), {{"format", "pt"}});
  std::uint64_t done = 0;
  for (std::size_t i = 0; i < peft.tensors.size(); ++i) {
    const auto& values = peft.tensors[i].second->values;
    std::vector<std::byte> bytes(writer.byte_size(i));
    safetensors::from_f32(dtype, values, bytes);
    writer.write(i, bytes);
    done += bytes.size();
    report_progress(progress, "writing", done, writer.file_size(), i + 1, peft.tensors.size());
  }
  writer.finish();
  return writer.file_size();
}

std::string_view expert_layout_name(detail::ExpertLayout layout) {
  switch (layout) {
    case detail::ExpertLayout::separate: return "separate";
    case detail::ExpertLayout::fused_interleaved: return "fused_interleaved";
    case detail::ExpertLayout::fused_concatenated: return "fused_concatenated";
  }
  return "separate";
}

}  // namespace

ExportSummary build_lora_adapter(const LoraAdapterOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(options.output_dir, ec))) {
    throw error(errc::invalid_argument,
                options.output_dir.string() + ": already exists (choose a new output directory)");
  }
  report_progress(options.progress, "reading adapter");
  const detail::TinkerAdapter adapter = detail::load_tinker_adapter(options.adapter_dir);
  report_progress(options.progress, "reading base model");
  const detail::ModelLayout layout = detail::read_model_layout(options.base_model_dir);
  report_progress(options.progress, "converting");
  const PeftAdapter peft = detail::convert_to_peft(adapter, layout);
  const safetensors::Dtype dtype = adapter_output_dtype(options.adapter_dir);

  safetensors::StagedDirectory staging(options.output_dir);
  ExportSummary summary;
  summary.bytes_written =
      write_peft_tensors(staging.staging_path() / "adapter_model.safetensors", peft, dtype, options.progress);
  // A Tinker name's ":peft:<context length>" is no part of the Hugging Face id PEFT loads the base by.
  const std::string base_name = options.base_model_name.empty()
                                    ? options.base_model_dir.string()
                                    : std::string(model_lookup_name(options.base_model_name));
  const std::string config = peft_config_json(peft, base_name);
  write_text_output(staging.staging_path() / "adapter_config.json", config);
  summary.bytes_written += config.size();
  staging.commit();

  summary.output = options.output_dir;
  summary.family = peft.profile.family;
  summary.tensors_written = peft.tensors.size();
  summary.tensors_changed = peft.tensors.size() / 2;
  summary.bytes_read = adapter.bytes_read;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report_progress(options.progress, "done", summary.bytes_written, summary.bytes_written, summary.tensors_written,
                  summary.tensors_written);
  return summary;
}

BaseModelInfo describe_base_model(const std::filesystem::path& base_model_dir) {
  const detail::ModelLayout layout = detail::read_model_layout(base_model_dir);
  const detail::MergeProfile profile = detail::detect_merge_profile(layout);
  BaseModelInfo info;
  info.model_type = layout.model_type;
  info.architectures = layout.architectures;
  info.family = profile.family;
  info.expert_layout = std::string(expert_layout_name(profile.expert_layout));
  info.quantization = layout.quant_format.empty() ? layout.quant_method : layout.quant_format;
  info.tensors = layout.tensors.size();
  for (const auto& [name, tensor] : layout.tensors) {
    std::uint64_t elements = 1;
    for (const std::int64_t dim : tensor.shape) elements *= static_cast<std::uint64_t>(dim);
    info.bytes += elements * safetensors::dtype_size(tensor.dtype);
  }
  info.peft_refusal = std::string(detail::peft_refusal_reason(layout.model_type));
  info.peft_supported = info.peft_refusal.empty();
  info.gguf_architecture = detail::gguf_architecture_for(layout);
  info.gguf_supported = !info.gguf_architecture.empty();
  return info;
}

}  // namespace tinker::weights
