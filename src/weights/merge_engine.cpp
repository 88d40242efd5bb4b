// build_merged_model: adapter and base read and planned (adapter_loading.cpp, merge_planning.cpp),
// every target checked against the base's tensors before anything is written, then the shards
// streamed into a staging directory (merge_stream.cpp) next to copies of the base's other files.
#include "weights/merge_engine.hpp"

#include "weights/merge_apply.hpp"
#include "weights/merge_stream.hpp"

#include <tinker/error.hpp>
#include <tinker/safetensors.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <set>
#include <thread>

namespace tinker::weights::detail {
namespace merge_engine_impl {

namespace fs = std::filesystem;
namespace st = tinker::safetensors;

// Weights in other formats, and their indexes: the unmerged weights again, which a loader could
// pick instead of the merged safetensors. Never copied.
constexpr std::array<std::string_view, 10> other_weight_suffixes{
    ".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".gguf", ".h5", ".msgpack", ".onnx", ".index.json"};

bool is_other_weight_file(const std::string& name) {
  if (name == "model.safetensors.index.json") return false;
  return std::any_of(other_weight_suffixes.begin(), other_weight_suffixes.end(),
                     [&](std::string_view suffix) { return name.ends_with(suffix); });
}

void check_float_target(const std::string& name, const st::SafetensorsModel::Location& where) {
  const auto dtype = where.tensor->dtype;
  if (dtype == st::Dtype::f16 || dtype == st::Dtype::bf16 || dtype == st::Dtype::f32) return;
  throw error(errc::invalid_argument, where.file->path().string() + ": tensor '" + name + "': dtype " +
                                          std::string(st::to_string(dtype)) +
                                          " cannot receive a LoRA delta (only F16, BF16 and F32 weights, or the "
                                          "quantized forms the merge decodes)");
}

// Everything the stream would refuse, refused before the output directory exists.
void check_targets(const MergePlan& plan, const ModelLayout& layout, const st::SafetensorsModel& model) {
  for (const auto& [name, ops] : plan.ops) {
    if (ops.empty()) continue;
    if (const auto where = model.find(name); where.tensor != nullptr) {
      check_float_target(name, where);
      [[maybe_unused]] const TargetMerge fits(name, where.tensor->shape, ops);
      continue;
    }
    if (const auto quantized = layout.quantized.find(name); quantized != layout.quantized.end()) {
      if (!quantized->second.unsupported.empty()) {
        throw error(errc::invalid_argument, "adapter tensor '" + ops.front().adapter_name + "': base weight '" + name +
                                                "' cannot be merged: " + quantized->second.unsupported);
      }
      [[maybe_unused]] const TargetMerge fits(name, quantized->second.logical.shape, ops);
      continue;
    }
    throw error(errc::invalid_argument, "adapter tensor '" + ops.front().adapter_name + "': base tensor '" + name +
                                            "' is not in " + model.directory().string());
  }
}

struct CopiedFiles {
  std::uint64_t bytes = 0;
  std::size_t files = 0;
};

// The base directory's other regular files (config, tokenizer, generation config, chat template,
// model card, the safetensors index: the shards keep their names), symbolic links followed, as a
// Hugging Face cache snapshot holds links to its blobs. Subdirectories (".cache", "original/" with
// another copy of the weights) and weights in other formats are left out.
CopiedFiles copy_other_files(const fs::path& base, const fs::path& out, const st::SafetensorsModel& model,
                             const ProgressCallback& progress) {
  std::set<std::string> shard_names;
  for (const auto& shard : model.shards()) shard_names.insert(shard.path().filename().string());
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code status_ec;
    if (shard_names.contains(name) || !fs::is_regular_file(it->path(), status_ec) || is_other_weight_file(name)) {
      continue;
    }
    files.push_back(it->path());
  }
  if (ec) throw error(errc::io_error, base.string() + ": cannot list: " + ec.message());
  std::sort(files.begin(), files.end());
  CopiedFiles copied;
  for (const auto& file : files) {
    if (!fs::copy_file(file, out / file.filename(), ec) || ec) {
      throw error(errc::io_error, file.string() + ": cannot copy to " + (out / file.filename()).string() + ": " +
                                      (ec ? ec.message() : std::string("not copied")));
    }
    copied.bytes += fs::file_size(out / file.filename(), ec);
    ++copied.files;
    if (progress) progress(ExportProgress{"copying files", copied.bytes, 0, copied.files, files.size()});
  }
  return copied;
}

}  // namespace merge_engine_impl

ExportSummary merge_with_plan(const MergePlan& plan, const ModelLayout& layout, const MergedModelOptions& options,
                              const MergeEngineTuning& tuning) {
  const auto start = std::chrono::steady_clock::now();
  const auto model = safetensors::SafetensorsModel::open(options.base_model_dir);
  merge_engine_impl::check_targets(plan, layout, model);

  safetensors::StagedDirectory staging(options.output_dir);
  MergeStreamInput input;
  input.model = &model;
  input.plan = &plan;
  input.layout = &layout;
  input.output_dir = staging.staging_path();
  input.threads = options.threads != 0 ? options.threads : std::max(1U, std::thread::hardware_concurrency());
  input.chunk_bytes = tuning.chunk_bytes;
  input.progress = &options.progress;
  const MergeStreamTotals totals = stream_merged_shards(input);
  const auto copied =
      merge_engine_impl::copy_other_files(options.base_model_dir, staging.staging_path(), model, options.progress);
  staging.commit();

  ExportSummary summary;
  summary.output = options.output_dir;
  summary.family = plan.profile.family;
  summary.tensors_written = totals.tensors_written;
  summary.tensors_changed = totals.tensors_changed;
  summary.bytes_read = totals.bytes_read + copied.bytes;
  summary.bytes_written = totals.bytes_written + copied.bytes;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace tinker::weights::detail

namespace tinker::weights {

ExportSummary build_merged_model(const MergedModelOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(options.output_dir, ec))) {
    throw error(errc::invalid_argument, options.output_dir.string() + ": the output already exists");
  }
  if (options.progress) options.progress(ExportProgress{"reading adapter"});
  const detail::TinkerAdapter adapter = detail::load_tinker_adapter(options.adapter_dir);
  const detail::ModelLayout layout = detail::read_model_layout(options.base_model_dir);
  const detail::MergePlan plan = detail::plan_merge(adapter, layout);
  ExportSummary summary = detail::merge_with_plan(plan, layout, options);
  summary.bytes_read += adapter.bytes_read;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace tinker::weights
