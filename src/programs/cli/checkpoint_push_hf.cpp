// `tinker checkpoint push-hf PATH [--repo ID] [--public] [--revision REV] [--commit-message MSG]
// [--create-pr] [--allow-pattern P]... [--ignore-pattern P]... [--no-model-card]` (doc/cli.md):
// the Python SDK's push-hf. The checkpoint comes down through the SDK's resumable download into a
// temporary directory, becomes a PEFT adapter repository with a model card (hub_export.hpp), and
// goes up through the Hub's HTTP API (tinker/hub_upload.hpp) with HF_TOKEN.
#include "programs/cli/checkpoint_support.hpp"
#include "programs/cli/context.hpp"
#include "programs/cli/hub_export.hpp"
#include "programs/cli/output.hpp"
#include "programs/cli/transfer.hpp"

#include <tinker/async.hpp>
#include <tinker/download.hpp>
#include <tinker/error.hpp>
#include <tinker/hub_upload.hpp>

#include <CLI/CLI.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <ostream>

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
};

// A private directory under the system's temporary one, removed with everything in it.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    std::string pattern = (fs::temp_directory_path() / "tinker-push-hf-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw CliError("cannot create a temporary directory in " + pattern);
    path = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  fs::path path;
};

EnvLookup lookup_of(const Context& context) {
  if (context.env.lookup) return context.env.lookup;
  return [](std::string_view) { return std::optional<std::string>(); };
}

// Where `hf auth login` stores the token, as huggingface_hub looks for it: $HF_TOKEN_PATH, else
// $HF_HOME/token, else $XDG_CACHE_HOME/huggingface/token, else ~/.cache/huggingface/token.
std::optional<fs::path> token_file(const EnvLookup& lookup) {
  auto set = [&lookup](const char* name) -> std::optional<std::string> {
    auto value = lookup(name);
    if (value && value->empty()) value.reset();
    return value;
  };
  if (auto path = set("HF_TOKEN_PATH")) return fs::path(*path);
  if (auto home = set("HF_HOME")) return fs::path(*home) / "token";
  if (auto cache = set("XDG_CACHE_HOME")) return fs::path(*cache) / "huggingface" / "token";
  if (auto home = set("HOME")) return fs::path(*home) / ".cache" / "huggingface" / "token";
  return std::nullopt;
}

// The token of the file, without surrounding white space; empty when there is none.
std::string stored_token(const EnvLookup& lookup) {
  const auto file = token_file(lookup);
  if (!file) return "";
  std::ifstream in(*file, std::ios::binary);
  std::string token;
  std::getline(in, token);
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back())) != 0) token.pop_back();
  return token;
}

// The token is checked before anything is requested: without one nothing could be uploaded.
HubOptions hub_options(Context& context) {
  const EnvLookup lookup = lookup_of(context);
  HubOptions options = HubOptions::from_environment(lookup);
  if (options.token.empty()) options.token = Secret(stored_token(lookup));
  if (options.token.empty()) {
    throw CliError(
        "HF_TOKEN is not set (nor a token saved by `hf auth login`): push-hf needs a Hugging Face token with write "
        "access (set HF_TOKEN)");
  }
  const HubOptions with_client = HubOptions::from_environment(lookup, context.client_options());
  options.tls = with_client.tls;
  options.connect_timeout = with_client.connect_timeout;
  options.read_timeout = with_client.read_timeout;
  return options;
}

// Runs one Hub call; its failure becomes the command's in the Hub's words (the status and the
// Hub's request id on the second line), not in the Tinker API's ("check TINKER_API_KEY").
template <class Call>
auto on_hub(Call&& call) -> decltype(call()) {
  try {
    return call();
  } catch (const error& e) {
    const diagnostics& d = e.diag();
    std::string message = d.message.empty() ? std::string(e.what()) : d.message;
    if (d.http_status == 0 &&
        (e.code() == errc::connection_failed || e.code() == errc::timeout || e.code() == errc::tls_error)) {
      message = "cannot reach the Hugging Face Hub (HF_ENDPOINT): " + message;
    }
    throw CliError(message, d);
  }
}

asio::awaitable<AdapterFacts> adapter_facts(Context& context, std::string path) {
  AdapterFacts facts;
  try {
    const WeightsInfoResponse info = co_await context.rest().async_get_weights_info(path, use_awaitable);
    facts.base_model = info.base_model;
    facts.lora_rank = info.lora_rank;
    facts.train_mlp = info.train_mlp;
    facts.train_attn = info.train_attn;
    facts.train_unembed = info.train_unembed;
  } catch (const error&) {
    // As the Python SDK: the model card then says "unknown".
  }
  co_return facts;
}

asio::awaitable<fs::path> download_into(Context& context, std::string path, fs::path parent) {
  DownloadOptions options{parent};
  auto bar = std::make_shared<ProgressBar>(context.err, context.env.error_is_terminal, "Downloading");
  options.on_progress = [bar](const DownloadProgress& progress) {
    bar->update(progress.bytes_done, progress.bytes_total);
  };
  DownloadResult result = co_await context.rest().async_download_checkpoint(path, options, use_awaitable);
  bar->finish();
  co_return result.path;
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
  const HubOptions hub = hub_options(context);
  const EnvLookup lookup = lookup_of(context);
  const std::string account = on_hub([&] { return hub_whoami(hub, lookup); });
  const TinkerPath parsed = TinkerPath::parse(command.path);

  TemporaryDirectory temporary;
  const fs::path folder = co_await download_into(context, command.path, temporary.path);
  check_peft_layout(folder);
  const AdapterFacts facts = co_await adapter_facts(context, command.path);
  complete_adapter_config(folder, facts.base_model);

  std::string repo_id = command.repo_id;
  std::string revision = command.revision;
  if (repo_id.empty()) {
    repo_id = account + "/" + default_repo_name(parsed, facts.base_model);
    if (revision.empty() && !command.create_pr) revision = default_revision(parsed);
  }
  if (!command.no_model_card && !fs::exists(folder / "README.md")) {
    std::ofstream(folder / "README.md", std::ios::binary) << model_card(command.path, repo_id, facts);
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
  if (!options.repo_id.empty()) {
    if (auto problem = hub_repo_id_problem(options.repo_id); !problem.empty()) {
      throw UsageError("--repo '" + options.repo_id + "' is not a Hugging Face repo id: " + problem);
    }
  }
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
}

}  // namespace tinker::cli
