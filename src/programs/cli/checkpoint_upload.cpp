// `tinker checkpoint upload DIR --base-model M --rank R [--project P]` (doc/cli.md): a PEFT adapter
// directory (adapter_model.safetensors + adapter_config.json) uploaded as an external checkpoint
// through the SDK's external-weights upload (start, a PUT per file, finish); prints its path.
#include "programs/cli/context.hpp"
#include "programs/cli/output.hpp"

#include <tinker/async.hpp>
#include <tinker/error.hpp>
#include <tinker/rest_client.hpp>

#include <CLI/CLI.hpp>
#include <boost/json/object.hpp>

#include <memory>
#include <optional>
#include <ostream>

namespace tinker::cli {
namespace {
namespace asio = boost::asio;

class UploadCommandOptions {
 public:
  UploadCommandOptions() = default;
  std::string directory;
  std::string base_model;
  std::int64_t rank = 0;
  std::string project_id;  // empty: the caller's default project
};

asio::awaitable<void> checkpoint_upload(Context& context, UploadCommandOptions command) {
  const ExternalWeightsUploadStartRequest request(command.base_model, LoraConfig(command.rank));
  ExternalWeightsUploadOptions options;
  if (!command.project_id.empty()) options.destination_project_id = command.project_id;
  std::ostream* err = &context.err;
  const bool quiet = context.json();
  options.on_file = [err, quiet](const std::string& file) {
    if (!quiet) *err << "Uploading " << file << "\n";
  };
  const ExternalWeightsUploadFinishResponse done = co_await context.rest().async_upload_external_weights(
      std::filesystem::path(command.directory), request, options, use_awaitable);
  if (context.json()) {
    boost::json::object object;
    object["tinker_path"] = done.tinker_path;
    object["base_model"] = command.base_model;
    object["rank"] = command.rank;
    print_json(context.out, object);
    co_return;
  }
  const Properties rows = {{"Checkpoint Path", done.tinker_path},
                           {"Base Model", command.base_model},
                           {"LoRA Rank", std::to_string(command.rank)}};
  print_properties(context.out, rows);
}

}  // namespace

void add_checkpoint_upload_command(CLI::App& group, Action& action) {
  auto options = std::make_shared<UploadCommandOptions>();
  CLI::App& cmd = add_command(group, "upload", "Upload a PEFT adapter directory as an external checkpoint", action,
                              options, checkpoint_upload);
  cmd.add_option("DIR", options->directory, "Directory with adapter_model.safetensors and adapter_config.json")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd.add_option("--base-model", options->base_model, "The base model the adapter was trained on")->required();
  cmd.add_option("--rank", options->rank, "The adapter's LoRA rank")->required()->check(CLI::PositiveNumber);
  cmd.add_option("--project", options->project_id, "Project the checkpoint lands in (default: yours)");
}

}  // namespace tinker::cli
