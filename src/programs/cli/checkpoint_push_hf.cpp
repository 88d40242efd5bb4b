// `tinker checkpoint push-hf PATH [--repo ID] [--public] [--revision REV] [--commit-message MSG]
// [--create-pr] [--allow-pattern P]... [--ignore-pattern P]... [--no-model-card] [--format raw|peft]
// [--base DIR_OR_HUB_ID]` (doc/cli.md): the Python SDK's push-hf. The checkpoint comes down through
// the SDK's resumable download into a temporary directory, becomes an adapter repository with a
// model card (hub_export.hpp): Tinker's files as they are (raw, the Python SDK's behaviour), or
// converted to a standard PEFT adapter against its base model (peft, export_support.hpp); and goes
// up through the Hub's HTTP API (tinker/hub_upload.hpp) with HF_TOKEN.
#include "programs/cli/checkpoint_support.hpp"
#include "programs/cli/context.hpp"
#include "programs/cli/export_support.hpp"
#include "programs/cli/hub_access.hpp"
#include "programs/cli/hub_export.hpp"
#include "programs/cli/output.hpp"
#include "programs/cli/transfer.hpp"

#include <tinker/async.hpp>
#include <tinker/download.hpp>
#include <tinker/error.hpp>
#include <tinker/hub_upload.hpp>
#include <tinker/model_name.hpp>

#include <CLI/CLI.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <fstream>
#include <memory>
#include <optional>
#include <ostream>
#include <vector>

namespace tinker::cli {
namespace {
namespace asio = boost::asio;
namespace fs = std::filesystem;

class PushOptions {
 public:
  PushOptions() = default;
  std::string path;
  std::string repo_id;  // empty: derived from the run
  bool public_repo = false;
  std::string revision;  // empty: main (or derived with the repo id)
  std::string commit_message;
  bool create_pr = false;
  std::vector<std::string> allow_patterns;
  std::vector<std::string> ignore_patterns;
  bool no_model_card = false;
  std::vector<std::string> format_values;  // --format: raw or peft, and table/json for the output
  std::optional<Format> output_format;
  std::string format;  // raw: the checkpoint's files as Tinker wrote them; peft: converted
  std::string base;    // --format peft: the base model (default: the checkpoint's)
  std::string base_revision = "main";
};

// The token is checked before anything is requested: without one nothing could be uploaded.
HubOptions hub_options(Context& context) {
  HubOptions options = cli_hub_options(context);
  if (options.token.empty()) {
    throw CliError(
        "HF_TOKEN is not set (nor a token saved by `hf auth login`): push-hf needs a Hugging Face token with write "
        "access (set HF_TOKEN)");
  }
  return options;
}

asio::awaitable<AdapterFacts> adapter_facts(Context& context, std::string path) {
  AdapterFacts facts;
  try {
    const WeightsInfoResponse info = co_await context.rest().async_get_weights_info(path, use_awaitable);
    // The card and adapter_config.json name a Hugging Face repo: no ":peft:<context length>".
    facts.base_model = std::string(model_lookup_name(info.base_model));
    facts.lora_rank = info.lora_rank;
    facts.train_mlp = info.train_mlp;
    facts.train_attn = info.train_attn;
    facts.train_unembed = info.train_unembed;
  } catch (const error&) {
    // As the Python SDK: the model card then says "unknown".
  }
  co_return facts;
}

// --format peft: the downloaded checkpoint converted into `output` against the base model (--base,
// else the checkpoint's); returns the base model's name for the model card.
std::string convert_to_peft(Context& context, const PushOptions& command, const fs::path& checkpoint,
                            const fs::path& output, const std::string& api_base_model) {
  const bool api_knows = !api_base_model.empty() && api_base_model != "unknown";
  const std::string spec = command.base.empty() ? (api_knows ? api_base_model : "") : command.base;
  if (spec.empty()) {
    throw CliError("--format peft needs the base model, which the Tinker API does not name for " + command.path +
                   ": pass --base (a directory or a Hugging Face id)");
  }
  ExportRequest request;
  request.format = ExportFormat::peft;
  request.adapter_dir = checkpoint;
  request.base = resolve_base_model(context, spec, command.base_revision);
  request.base_model_name = !request.base.hub_id.empty() ? request.base.hub_id : (api_knows ? api_base_model : "");
  request.output = output;
  run_export(context, request);
  return request.base_model_name.empty() ? std::string("unknown") : request.base_model_name;
}

// The Hub refuses to overwrite a repo that holds another checkpoint (its model card names it).
void check_same_checkpoint(const HubOptions& hub, const EnvLookup& lookup, const std::string& repo_id,
                           const std::string& revision, const std::string& tinker_path) {
  std::optional<std::string> readme;
  try {
    readme = hub_read_file(hub, repo_id, revision, "README.md", lookup);
  } catch (const error&) {
    return;  // as the Python SDK: an unreadable README does not stop the upload
  }
  if (!readme) return;
  const auto existing = tinker_path_in(*readme);
  if (existing && *existing != tinker_path) {
    throw CliError("the repo " + repo_id + " appears to contain a different Tinker checkpoint: found " + *existing +
                   ", expected " + tinker_path);
  }
}

void print_result(Context& context, const PushOptions& command, const std::string& repo_id, const std::string& revision,
                  const HubCommitInfo& info, const std::vector<std::string>& files) {
  if (context.json()) {
    boost::json::object object;
    object["checkpoint_path"] = command.path;
    object["repo_id"] = repo_id;
    if (!revision.empty()) object["revision"] = revision;
    object["public"] = command.public_repo;
    object["commit_url"] = info.commit_url;
    object["commit_oid"] = info.commit_oid;
    if (info.pr_url) object["pr_url"] = *info.pr_url;
    boost::json::array uploaded;
    for (const std::string& file : files) uploaded.emplace_back(file);
    object["files"] = std::move(uploaded);
    print_json(context.out, object);
    return;
  }
  Properties rows = {{"Checkpoint Path", command.path}, {"Repo ID", repo_id}};
  if (!revision.empty()) rows.emplace_back("Revision", revision);
  rows.emplace_back("Public", yes_no(command.public_repo));
  rows.emplace_back("Commit", info.commit_url);
  if (info.pr_url) rows.emplace_back("Pull Request", *info.pr_url);
  std::string listed;
  for (const std::string& file : files) listed += (listed.empty() ? "" : ", ") + file;
  rows.emplace_back("Files", listed);
  print_properties(context.out, rows);
}

asio::awaitable<void> checkpoint_push_hf(Context& context, PushOptions command) {
  if (command.output_format) context.format = *command.output_format;
  const HubOptions hub = hub_options(context);
  const EnvLookup lookup = lookup_of(context);
  const std::string account = on_hub([&] { return hub_whoami(hub, lookup); });
  const TinkerPath parsed = TinkerPath::parse(command.path);

  TemporaryDirectory temporary("tinker-push-hf");
  const fs::path downloaded = co_await download_checkpoint_into(context, command.path, temporary.path);
  check_peft_layout(downloaded);
  AdapterFacts facts = co_await adapter_facts(context, command.path);
  fs::path folder = downloaded;
  if (command.format == "peft") {
    folder = temporary.path / "peft";
    facts.base_model = convert_to_peft(context, command, downloaded, folder, facts.base_model);
  } else {
    complete_adapter_config(folder, facts.base_model);
  }

  std::string repo_id = command.repo_id;
  std::string revision = command.revision;
  if (repo_id.empty()) {
    repo_id = account + "/" + default_repo_name(parsed, facts.base_model);
    if (revision.empty() && !command.create_pr) revision = default_revision(parsed);
  }
  if (!command.no_model_card && !fs::exists(folder / "README.md")) {
    std::ofstream(folder / "README.md", std::ios::binary)
        << (command.format == "peft" ? peft_model_card(command.path, repo_id, facts)
                                     : model_card(command.path, repo_id, facts));
  }
  repo_id = on_hub([&] { return hub_create_repo(hub, repo_id, !command.public_repo, true, lookup); });
  const std::string target = revision.empty() ? std::string("main") : revision;
  if (target != "main") on_hub([&] { hub_create_branch(hub, repo_id, target, true, lookup); });
  check_same_checkpoint(hub, lookup, repo_id, target, command.path);

  const std::vector<std::string> files = files_to_upload(folder, command.allow_patterns, command.ignore_patterns);
  if (files.empty()) throw CliError("no file of the checkpoint is left to upload after the allow/ignore patterns");
  HubCommitRequest request;
  request.repo_id = repo_id;
  request.revision = target;
  request.create_pr = command.create_pr;
  request.summary = command.commit_message.empty() ? "Upload " + command.path + " with tinker checkpoint push-hf"
                                                   : command.commit_message;
  for (const std::string& file : files) request.files.emplace_back(file, folder / file);
  auto bar = std::make_shared<ProgressBar>(context.err, context.env.error_is_terminal, "Uploading");
  request.on_progress = [bar](std::uint64_t done, std::uint64_t total) { bar->update(done, total); };
  HubCommitInfo info;
  try {
    info = on_hub([&] { return hub_commit(hub, request, lookup); });
  } catch (...) {
    bar->finish();  // the error goes on a line of its own
    throw;
  }
  bar->finish();
  print_result(context, command, repo_id, revision, info, files);
}

void check_options(PushOptions& options) {
  split_format_values(options.format_values, {"raw", "peft"}, options.format, options.output_format);
  if (options.format.empty()) options.format = "raw";
  if (!options.repo_id.empty()) {
    if (auto problem = hub_repo_id_problem(options.repo_id); !problem.empty()) {
      throw UsageError("--repo '" + options.repo_id + "' is not a Hugging Face repo id: " + problem);
    }
  }
  if (options.format != "peft" && !options.base.empty()) throw UsageError("--base applies to --format peft only");
  if (options.create_pr && !options.revision.empty() && options.revision != "main") {
    throw UsageError("--create-pr opens a pull request against main; it cannot be combined with --revision");
  }
}

}  // namespace

void add_checkpoint_push_hf_command(CLI::App& group, Action& action) {
  auto options = std::make_shared<PushOptions>();
  CLI::App& cmd = add_command(group, "push-hf", "Upload a checkpoint to the Hugging Face Hub as a PEFT adapter", action,
                              options, checkpoint_push_hf, check_options);
  add_tinker_path_argument(cmd, options->path);
  cmd.add_option("-r,--repo", options->repo_id,
                 "Hugging Face repo id (e.g. username/my-lora-adapter); default: <you>/tinker-<base>-<run id> on "
                 "the branch <kind>-<name>");
  cmd.add_flag("--public", options->public_repo, "Create the repo public (default: private)");
  cmd.add_option("--revision", options->revision, "Branch to upload to (created from main when missing)");
  cmd.add_option("--commit-message", options->commit_message, "Commit message of the upload");
  cmd.add_flag("--create-pr", options->create_pr, "Open a pull request instead of pushing to the branch");
  cmd.add_option("--allow-pattern", options->allow_patterns, "Only upload files matching this glob (repeatable)")
      ->allow_extra_args(false);
  cmd.add_option("--ignore-pattern", options->ignore_patterns, "Skip files matching this glob (repeatable)")
      ->allow_extra_args(false);
  cmd.add_flag("--no-model-card", options->no_model_card, "Do not write a README.md model card");
  cmd.add_option("--format", options->format_values,
                 "raw (default): the checkpoint's files as Tinker wrote them; peft: converted to a standard PEFT "
                 "adapter (Hugging Face parameter names) for vLLM, SGLang and transformers (table or json: the "
                 "output format, as -f)")
      ->allow_extra_args(false);
  cmd.add_option("--base", options->base,
                 "--format peft: the base model, a Hugging Face model directory or Hub id (default: the "
                 "checkpoint's base model)");
  cmd.add_option("--base-revision", options->base_revision, "--format peft: branch, tag or commit of a Hub base model")
      ->capture_default_str();
}

}  // namespace tinker::cli
