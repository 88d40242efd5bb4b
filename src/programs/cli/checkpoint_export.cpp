// `tinker checkpoint export TINKER_PATH_OR_DIR --format peft|merged|gguf [--base DIR_OR_HUB_ID]
// [--base-revision REV] -o OUT [--out-type f16|bf16|f32] [--threads N]` (doc/cli.md#checkpoint-export):
// a Tinker LoRA checkpoint turned into a PEFT adapter, a merged Hugging Face model or a llama.cpp
// GGUF adapter (tinker/weights.hpp). A tinker:// path is downloaded into a temporary directory
// first and its base model asked of the Tinker API; the base model is a directory or a Hugging
// Face repo downloaded into the hub cache (tinker/hub_download.hpp).
#include "programs/cli/checkpoint_support.hpp"
#include "programs/cli/context.hpp"
#include "programs/cli/export_support.hpp"
#include "programs/cli/output.hpp"

#include <tinker/async.hpp>
#include <tinker/error.hpp>

#include <CLI/CLI.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <ostream>
#include <vector>

namespace tinker::cli {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;

class ExportCommandOptions {
 public:
  ExportCommandOptions() = default;
  std::string source;                      // tinker:// path or directory
  std::vector<std::string> format_values;  // --format: one of export_formats, and table/json for the output
  std::string format;
  std::optional<Format> output_format;
  std::string base;  // empty: the checkpoint's base model
  std::string base_revision = "main";
  std::string output;
  std::string out_type;  // empty: f16 (gguf only)
  unsigned threads = 0;
};

const std::vector<std::string> export_formats = {"peft", "merged", "gguf"};

bool is_tinker_path(const std::string& source) {
  return source.starts_with("tinker://");
}

ExportFormat format_of(const std::string& name) {
  if (name == "merged") return ExportFormat::merged;
  if (name == "gguf") return ExportFormat::gguf;
  return ExportFormat::peft;
}

std::string what_was_written(ExportFormat format) {
  switch (format) {
    case ExportFormat::peft: return "PEFT adapter";
    case ExportFormat::merged: return "merged model";
    case ExportFormat::gguf: return "GGUF adapter";
  }
  return "export";
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", seconds);
  return text;
}

void print_summary(Context& context, const ExportCommandOptions& command, const ResolvedBase& base,
                   const weights::ExportSummary& summary, double total_seconds) {
  const ExportFormat format = format_of(command.format);
  if (context.json()) {
    boost::json::object object;
    object["source"] = command.source;
    object["format"] = command.format;
    object["base_model"] = base.hub_id.empty() ? base.dir.string() : base.hub_id;
    object["base_model_dir"] = base.dir.string();
    object["output"] = summary.output.string();
    object["family"] = summary.family;
    object["tensors_written"] = summary.tensors_written;
    object["tensors_changed"] = summary.tensors_changed;
    object["bytes_read"] = summary.bytes_read;
    object["bytes_written"] = summary.bytes_written;
    object["seconds"] = summary.seconds;
    object["total_seconds"] = total_seconds;
    print_json(context.out, object);
    return;
  }
  const std::string changed = format == ExportFormat::merged ? " merged" : " adapted";
  context.out << "Wrote the " << what_was_written(format) << " " << summary.output.string() << ": "
              << summary.tensors_written << " tensors (" << summary.tensors_changed << changed << "), "
              << display_size(static_cast<std::int64_t>(summary.bytes_written)) << ", in "
              << seconds_text(summary.seconds) << " (" << seconds_text(total_seconds) << " in all)\n";
}

// The name the output records for its base model: the Hub id it came from, else the Tinker API's.
asio::awaitable<std::string> base_model_name(Context& context, const ExportCommandOptions& command,
                                             const ResolvedBase& base) {
  if (!base.hub_id.empty() || !is_tinker_path(command.source)) co_return base.hub_id;
  try {
    co_return co_await checkpoint_base_model(context, command.source);
  } catch (const std::exception&) {
    co_return std::string();  // the library then names the directory
  }
}

asio::awaitable<void> checkpoint_export(Context& context, ExportCommandOptions command) {
  const auto started = std::chrono::steady_clock::now();
  if (command.output_format) context.format = *command.output_format;
  const fs::path output(command.output);
  std::error_code ec;
  if (fs::exists(fs::symlink_status(output, ec))) {
    throw CliError(command.output + " already exists; remove it or choose another output (-o)");
  }
  std::optional<TemporaryDirectory> temporary;
  fs::path adapter_dir;
  std::string base_spec = command.base;
  if (is_tinker_path(command.source)) {
    temporary.emplace("tinker-export");
    adapter_dir = co_await download_checkpoint_into(context, command.source, temporary->path);
    if (base_spec.empty()) base_spec = co_await checkpoint_base_model(context, command.source);
  } else {
    if (!fs::is_directory(command.source, ec)) {
      throw CliError(command.source + " is neither a tinker:// path nor a directory");
    }
    adapter_dir = command.source;
  }
  check_adapter_dir(adapter_dir);

  ExportRequest request;
  request.format = format_of(command.format);
  request.adapter_dir = adapter_dir;
  try {
    request.base = resolve_base_model(context, base_spec, command.base_revision);
  } catch (const CliError& e) {
    if (!command.base.empty()) throw;
    // The name came from the Tinker API: say where it came from and how to give another copy.
    throw CliError(std::string(e.what()) + " (the base model of " + command.source + "; --base DIR uses a local copy)",
                   e.status);
  }
  request.base_model_name = co_await base_model_name(context, command, request.base);
  request.output = output;
  if (!command.out_type.empty()) request.out_type = command.out_type;
  request.threads = command.threads;
  const weights::ExportSummary summary = run_export(context, request);
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  print_summary(context, command, request.base, summary, total);
}

void check_export_options(ExportCommandOptions& options) {
  split_format_values(options.format_values, export_formats, options.format, options.output_format);
  if (options.format.empty()) throw UsageError("--format peft|merged|gguf is required");
  if (is_tinker_path(options.source)) {
    if (auto problem = check_tinker_path(options.source); !problem.empty()) throw UsageError(problem);
  } else if (options.base.empty()) {
    throw UsageError(
        "--base is required to export a directory: the base model's directory or its Hugging Face id (e.g. --base "
        "Qwen/Qwen3-8B); a tinker:// path knows its base model");
  }
  if (!options.out_type.empty() && options.format != "gguf") {
    throw UsageError("--out-type applies to --format gguf only");
  }
  if (options.threads != 0 && options.format != "merged") {
    throw UsageError("--threads applies to --format merged only");
  }
}

}  // namespace

void add_checkpoint_export_command(CLI::App& group, Action& action) {
  auto options = std::make_shared<ExportCommandOptions>();
  CLI::App& cmd = add_command(group, "export",
                              "Convert a checkpoint to a PEFT adapter, a merged Hugging Face model or a llama.cpp "
                              "GGUF adapter",
                              action, options, checkpoint_export, check_export_options);
  cmd.add_option("SOURCE", options->source,
                 "tinker://<run-id>/<weights|sampler_weights>/<name> (downloaded first), or a downloaded checkpoint "
                 "directory (adapter_model.safetensors + adapter_config.json)")
      ->required();
  cmd.add_option("--format", options->format_values,
                 "peft: a PEFT adapter (vLLM, SGLang, transformers); merged: the base model with the adapter "
                 "merged in; gguf: a llama.cpp LoRA adapter (table or json: the output format, as -f)")
      ->allow_extra_args(false);
  cmd.add_option("--base", options->base,
                 "The base model: a Hugging Face model directory, or a Hub id downloaded into the hub cache "
                 "(default: the checkpoint's base model, for a tinker:// path)");
  cmd.add_option("--base-revision", options->base_revision, "Branch, tag or commit of a Hub base model")
      ->capture_default_str();
  cmd.add_option("-o,--output", options->output,
                 "Where to write: a directory (peft, merged) or a file (gguf); it must not exist")
      ->required();
  cmd.add_option("--out-type", options->out_type, "GGUF tensor type: f16 (default), bf16 or f32")
      ->check(CLI::IsMember({"f16", "bf16", "f32"}));
  cmd.add_option("--threads", options->threads, "Merge threads (default: every core)");
}

}  // namespace tinker::cli
