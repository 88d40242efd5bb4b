// The pieces of the export commands (export_support.hpp).
#include "programs/cli/export_support.hpp"

#include "programs/cli/hub_access.hpp"
#include "programs/cli/progress_bar.hpp"

#include <tinker/async.hpp>
#include <tinker/download.hpp>
#include <tinker/error.hpp>
#include <tinker/hub_download.hpp>
#include <tinker/hub_upload.hpp>
#include <tinker/model_name.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

namespace tinker::cli {
namespace {

namespace fs = std::filesystem;

// The files of a model repo besides its weights: configs, tokenizers, chat templates, custom
// code (trust_remote_code models) and the licence. Other weight formats (*.bin, *.pth, *.gguf)
// and original/ checkpoints stay on the Hub.
const std::vector<std::string> small_file_patterns = {"*.json",  "*.model", "*.tiktoken", "*.txt",
                                                      "*.jinja", "*.py",    "LICENSE*",   "NOTICE*"};

std::string index_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

// The shards model.safetensors.index.json names; empty without an index.
std::vector<std::string> indexed_shards(const fs::path& snapshot) {
  const fs::path index = snapshot / "model.safetensors.index.json";
  std::error_code ec;
  if (!fs::exists(index, ec)) return {};
  boost::system::error_code parse_error;
  const boost::json::value value = boost::json::parse(index_text(index), parse_error);
  const auto* map = !parse_error && value.is_object() ? value.as_object().if_contains("weight_map") : nullptr;
  if (map == nullptr || !map->is_object()) throw CliError(index.string() + ": not a safetensors index (no weight_map)");
  std::set<std::string> shards;
  for (const auto& entry : map->as_object()) {
    if (!entry.value().is_string())
      throw CliError(index.string() + ": weight_map value of '" + std::string(entry.key()) + "' is not a file name");
    shards.insert(std::string(entry.value().as_string()));
  }
  return {shards.begin(), shards.end()};
}

// "reading adapter" -> "Reading adapter".
std::string stage_label(std::string_view stage) {
  std::string label(stage.empty() ? std::string_view("Exporting") : stage);
  label[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(label[0])));
  return label;
}

ProgressBar::Style progress_style(const Context& context) {
  return context.env.error_is_terminal ? ProgressBar::Style::bar : ProgressBar::Style::lines;
}

void stop_if_interrupted(const Context& context) {
  if (context.interrupted()) throw error(errc::cancelled, "interrupted");
}

std::string message_of(const error& e) {
  return e.diag().message.empty() ? std::string(e.what()) : e.diag().message;
}

}  // namespace

void split_format_values(const std::vector<std::string>& values, const std::vector<std::string>& choices,
                         std::string& chosen, std::optional<Format>& output) {
  for (const std::string& value : values) {
    if (value == "table" || value == "json") {
      output = value == "json" ? Format::json : Format::table;
    } else if (std::find(choices.begin(), choices.end(), value) == choices.end()) {
      std::string listed;
      for (const std::string& choice : choices) listed += (listed.empty() ? "" : ", ") + choice;
      throw UsageError("--format " + value + " is none of " + listed + " (nor the output format table or json)");
    } else if (!chosen.empty() && chosen != value) {
      throw UsageError("--format " + chosen + " and --format " + value + ": choose one");
    } else {
      chosen = value;
    }
  }
}

TemporaryDirectory::TemporaryDirectory(const std::string& prefix) {
  std::string pattern = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) throw CliError("cannot create a temporary directory in " + pattern);
  path = pattern;
}

TemporaryDirectory::~TemporaryDirectory() {
  std::error_code ignored;
  fs::remove_all(path, ignored);
}

boost::asio::awaitable<fs::path> download_checkpoint_into(Context& context, std::string path, fs::path parent) {
  DownloadOptions options{std::move(parent)};
  auto bar = std::make_shared<ProgressBar>(context.err, context.env.error_is_terminal, "Downloading");
  options.on_progress = [bar](const DownloadProgress& progress) {
    bar->update(progress.bytes_done, progress.bytes_total);
  };
  DownloadResult result;
  try {
    result = co_await context.rest().async_download_checkpoint(path, options, use_awaitable);
  } catch (...) {
    bar->finish();  // the error goes on a line of its own
    throw;
  }
  bar->finish();
  co_return result.path;
}

boost::asio::awaitable<std::string> checkpoint_base_model(Context& context, std::string path) {
  const WeightsInfoResponse info = co_await context.rest().async_get_weights_info(path, use_awaitable);
  if (info.base_model.empty()) {
    throw CliError("the Tinker API does not name the base model of " + path +
                   "; pass it with --base (a directory or a Hugging Face id)");
  }
  co_return info.base_model;
}

void check_adapter_dir(const fs::path& dir) {
  std::error_code ec;
  for (const char* name : {"adapter_model.safetensors", "adapter_config.json"}) {
    if (!fs::is_regular_file(dir / name, ec)) {
      throw CliError(dir.string() + " has no " + name +
                     ": not a Tinker checkpoint (tinker checkpoint download extracts one)");
    }
  }
}

ResolvedBase resolve_base_model(Context& context, const std::string& spec, const std::string& revision) {
  std::error_code ec;
  if (fs::is_directory(spec, ec)) {
    if (!fs::is_regular_file(fs::path(spec) / "config.json", ec)) {
      throw CliError("the base model directory " + spec + " has no config.json");
    }
    ResolvedBase local;
    local.dir = spec;
    return local;
  }
  // A Tinker name ("Qwen/Qwen3-8B:peft:131072") names its Hugging Face repo before the first ':'.
  const std::string repo_id(model_lookup_name(spec));
  if (auto problem = hub_repo_id_problem(repo_id); !problem.empty()) {
    throw CliError("the base model '" + spec + "' is neither a directory nor a Hugging Face repo id: " + problem);
  }
  const HubOptions hub = cli_hub_options(context);
  const EnvLookup lookup = lookup_of(context);
  ProgressBar bar(context.err, progress_style(context), "Downloading " + repo_id);
  const HubSnapshotProgressCallback progress = [&context, &bar](const HubSnapshotProgress& p) {
    stop_if_interrupted(context);
    bar.update(p.bytes_done, p.bytes_total > 0 ? std::optional<std::uint64_t>(p.bytes_total) : std::nullopt);
  };
  try {
    const fs::path small =
        on_hub([&] { return download_model_snapshot(repo_id, revision, hub, small_file_patterns, progress, lookup); });
    if (!fs::is_regular_file(small / "config.json", ec)) {
      throw CliError("the Hugging Face repo " + repo_id + " has no config.json: not a model repository");
    }
    // The weights at the commit the first call pinned, so both halves are of one commit.
    const std::string commit = small.filename().string();
    std::vector<std::string> shards = indexed_shards(small);
    if (shards.empty()) shards = {"*.safetensors"};
    const fs::path snapshot =
        on_hub([&] { return download_model_snapshot(repo_id, commit, hub, shards, progress, lookup); });
    bar.finish();
    ResolvedBase downloaded;
    downloaded.dir = snapshot;
    downloaded.hub_id = repo_id;
    return downloaded;
  } catch (...) {
    bar.finish();
    throw;
  }
}

weights::ExportSummary run_export(Context& context, const ExportRequest& request) {
  ProgressBar bar(context.err, progress_style(context), "Exporting");
  std::string stage;
  const weights::ProgressCallback progress = [&](const weights::ExportProgress& p) {
    stop_if_interrupted(context);
    if (p.stage != stage) {
      stage = p.stage;
      bar.set_label(stage_label(stage));
    }
    bar.update(p.bytes_done, p.bytes_total > 0 ? std::optional<std::uint64_t>(p.bytes_total) : std::nullopt);
  };
  try {
    weights::ExportSummary summary;
    switch (request.format) {
      case ExportFormat::peft: {
        weights::LoraAdapterOptions options;
        options.adapter_dir = request.adapter_dir;
        options.base_model_dir = request.base.dir;
        options.output_dir = request.output;
        options.base_model_name = request.base_model_name;
        options.progress = progress;
        summary = weights::build_lora_adapter(options);
        break;
      }
      case ExportFormat::merged: {
        weights::MergedModelOptions options;
        options.adapter_dir = request.adapter_dir;
        options.base_model_dir = request.base.dir;
        options.output_dir = request.output;
        options.threads = request.threads;
        options.progress = progress;
        summary = weights::build_merged_model(options);
        break;
      }
      case ExportFormat::gguf: {
        weights::GgufAdapterOptions options;
        options.adapter_dir = request.adapter_dir;
        options.base_model_dir = request.base.dir;
        options.output_file = request.output;
        options.out_type = request.out_type;
        options.base_model_name = request.base_model_name;
        options.progress = progress;
        summary = weights::build_gguf_adapter(options);
        break;
      }
    }
    bar.finish();
    return summary;
  } catch (const error& e) {
    bar.finish();
    if (e.code() == errc::cancelled) throw;
    throw CliError(message_of(e));
  } catch (...) {
    bar.finish();
    throw;
  }
}

}  // namespace tinker::cli
