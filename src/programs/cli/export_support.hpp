// What `checkpoint export` and `checkpoint push-hf --format peft` share (doc/cli.md#checkpoint-export):
// a temporary directory, the checkpoint downloaded into it, the base model found (a directory,
// or a Hugging Face repo downloaded into the hub cache), and the conversion itself with its
// progress bar, Ctrl-C and error wording.
#pragma once

#include "programs/cli/context.hpp"

#include <tinker/weights.hpp>

#include <boost/asio/awaitable.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tinker::cli {

/// The values of a command's own `--format` (repeatable): the one of `choices` it names goes to
/// `chosen` (a second one is a UsageError), and `table` / `json` to `output`, so `--format json`
/// after the command still picks the output format as it does for every other command.
void split_format_values(const std::vector<std::string>& values, const std::vector<std::string>& choices,
                         std::string& chosen, std::optional<Format>& output);

/// A private directory under the system's temporary one, removed with everything in it.
class TemporaryDirectory {
 public:
  /// `prefix`: the start of its name ("tinker-export").
  explicit TemporaryDirectory(const std::string& prefix);
  ~TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;

  std::filesystem::path path;
};

/// Downloads and extracts the checkpoint `path` under `parent` (with the download progress bar);
/// returns the extracted directory.
boost::asio::awaitable<std::filesystem::path> download_checkpoint_into(Context& context, std::string path,
                                                                       std::filesystem::path parent);

/// The checkpoint's base model as the Tinker API names it ("Qwen/Qwen3-8B"). Throws CliError
/// saying to pass --base when the API cannot tell.
boost::asio::awaitable<std::string> checkpoint_base_model(Context& context, std::string path);

/// Throws CliError unless `dir` holds adapter_model.safetensors and adapter_config.json.
void check_adapter_dir(const std::filesystem::path& dir);

/// A base model found for an export.
class ResolvedBase {
 public:
  ResolvedBase() = default;
  std::filesystem::path dir;  ///< config.json + safetensors
  std::string hub_id;         ///< the Hugging Face repo it came from; empty for a local directory
};

/// `spec` as a directory when one exists there, else as a Hugging Face repo id downloaded at
/// `revision` into the hub cache (config, tokenizer and other small files first, then the weight
/// shards the index names, or every *.safetensors without an index), with a progress bar; blobs
/// already cached are not downloaded again. Throws CliError naming what is wrong.
ResolvedBase resolve_base_model(Context& context, const std::string& spec, const std::string& revision);

enum class ExportFormat { peft, merged, gguf };

/// One conversion (weights.hpp).
class ExportRequest {
 public:
  ExportRequest() = default;
  ExportFormat format = ExportFormat::peft;
  std::filesystem::path adapter_dir;
  ResolvedBase base;
  std::string base_model_name;  ///< for the PEFT config and GGUF metadata; empty: the library's default
  std::filesystem::path output;
  std::string out_type = "f16";  ///< GGUF only
  unsigned threads = 0;          ///< merged only; 0: every core
};

/// Runs the conversion with a progress bar (a terminal) or a line every 10 s (otherwise). Ctrl-C
/// stops it at the next progress report (nothing is left at the output). Throws CliError with the
/// library's message for a bad input.
weights::ExportSummary run_export(Context& context, const ExportRequest& request);

}  // namespace tinker::cli
