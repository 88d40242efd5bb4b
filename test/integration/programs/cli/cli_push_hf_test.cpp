// `tinker checkpoint push-hf` against tinker-local's Hub emulation (HF_ENDPOINT = the server,
// HF_TOKEN = an API key of it): a trained checkpoint pushed, then read back through the Hub's
// download path (tinker/hub_upload.hpp), in both output formats; private/public, --revision,
// --create-pr, the default repo id, allow/ignore patterns, and the failures a user meets.
#include "integration/programs/cli/cli_support.hpp"
#include "support/temp_files.hpp"

#include <tinker/download.hpp>
#include <tinker/error.hpp>
#include <tinker/hub_upload.hpp>

#include <gmock/gmock.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace tinker::test {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class CliPushHf : public CliTest {
 protected:
  void SetUp() override { CliTest::SetUp(); }

  HubOptions hub(std::string token = std::string(test_api_key)) const {
    HubOptions options;
    options.endpoint = server->base_url();
    options.token = Secret(std::move(token));
    return options;
  }
  std::string account() const { return hub_whoami(hub()); }

  /// `tinker <args>` with HF_ENDPOINT and HF_TOKEN (unless `with_token` is false).
  CliResult push(std::vector<std::string> args, bool with_token = true) const {
    std::map<std::string, std::string> vars = variables();
    vars["HF_ENDPOINT"] = server->base_url();
    if (with_token) vars["HF_TOKEN"] = std::string(test_api_key);
    const CliResult result = run_cli(std::move(args), "", vars);
    EXPECT_THAT(result.out + result.err, Not(HasSubstr(std::string(test_api_key))));
    return result;
  }

  /// The checkpoint's files as `tinker checkpoint download` writes them.
  fs::path downloaded(const std::string& path) {
    const CliResult result = cli({"checkpoint", "download", path, "-o", scratch.string(), "--force"});
    EXPECT_EQ(result.code, cli::exit_ok) << result.err;
    return scratch / download_target_name(path);
  }

  static std::string read(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    return bytes.str();
  }

  std::string file_at(const std::string& repo, const std::string& revision, const std::string& file) const {
    return hub_read_file(hub(), repo, revision, file).value_or("<missing>");
  }

  std::vector<local::RequestRecord> requests_to(std::string_view prefix) const {
    std::vector<local::RequestRecord> found;
    for (const local::RequestRecord& record : server->audit().requests) {
      if (record.path.starts_with(prefix)) found.push_back(record);
    }
    return found;
  }

  const TempDir scratch_dir{"tinker-cli-push-hf"};
  const fs::path scratch = scratch_dir.path();
};

std::vector<std::string> strings(const boost::json::value& array) {
  std::vector<std::string> out;
  for (const auto& item : array.as_array()) out.emplace_back(item.as_string());
  return out;
}

TEST_F(CliPushHf, PushesAPrivatePeftRepositoryWithAModelCard) {
  const RunWithCheckpoints run = make_run({"a"});
  const std::string path = run.training_paths[0];
  const std::string repo = account() + "/my-adapter";

  const CliResult result = push({"-f", "json", "checkpoint", "push-hf", path, "--repo", repo});
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_EQ(result.err, "");
  const boost::json::value value = result.json();
  EXPECT_EQ(value.at("checkpoint_path").as_string(), path);
  EXPECT_EQ(value.at("repo_id").as_string(), repo);
  EXPECT_FALSE(value.as_object().contains("revision"));
  EXPECT_FALSE(value.at("public").as_bool());
  EXPECT_FALSE(value.as_object().contains("pr_url"));
  EXPECT_THAT(std::string(value.at("commit_url").as_string()),
              StartsWith(server->base_url() + "/" + repo + "/commit/"));
  EXPECT_THAT(strings(value.at("files")), ElementsAre("README.md", "adapter_config.json", "adapter_model.safetensors"));

  // The files as the checkpoint holds them; checkpoint_complete stays behind.
  const fs::path local = downloaded(path);
  EXPECT_EQ(file_at(repo, "main", "adapter_model.safetensors"), read(local / "adapter_model.safetensors"));
  EXPECT_EQ(file_at(repo, "main", "adapter_config.json"), read(local / "adapter_config.json"));
  EXPECT_THAT(file_at(repo, "main", "adapter_config.json"),
              HasSubstr("\"base_model_name_or_path\":\"" + std::string(tiny_model) + "\""));
  EXPECT_EQ(hub_read_file(hub(), repo, "main", "checkpoint_complete"), std::nullopt);
  EXPECT_NE(hub_read_file(hub(), repo, "main", ".gitattributes"), std::nullopt);  // the repo's first commit

  const std::string card = file_at(repo, "main", "README.md");
  EXPECT_THAT(card, StartsWith("---\nbase_model: " + std::string(tiny_model) + "\nlibrary_name: peft\ntags:\n"));
  EXPECT_THAT(card, HasSubstr("- base_model:adapter:" + std::string(tiny_model) + "\n"));
  EXPECT_THAT(card, HasSubstr("tinker_path: " + path + "\n---\n\n# Tinker LoRA Adapter\n"));
  EXPECT_THAT(card, HasSubstr("adapter_id = \"" + repo + "\""));
  EXPECT_THAT(card, HasSubstr("- LoRA rank: 4\n"));

  // Private: the owner's token reads it, no token gets 401, another account's 404.
  const HubRepoInfo info = hub_repo_info(hub(), repo);
  EXPECT_TRUE(info.is_private);
  EXPECT_EQ(info.sha, std::string(value.at("commit_oid").as_string()));
  try {
    hub_read_file(hub(""), repo, "main", "README.md");
    ADD_FAILURE() << "an anonymous read of a private repo succeeded";
  } catch (const error& e) {
    EXPECT_EQ(e.diag().http_status, 401);
  }
  EXPECT_EQ(hub_read_file(hub("tml-someone-else"), repo, "main", "README.md"), std::nullopt);

  // The weights went up through LFS, without the token (an upload URL is a capability).
  const auto uploads = requests_to("/_hub_lfs/");
  ASSERT_EQ(uploads.size(), 1u);
  EXPECT_EQ(uploads[0].method, "PUT");
  EXPECT_FALSE(uploads[0].credentials);
  EXPECT_EQ(requests_to("/api/models/" + repo + "/commit/main").size(), 1u);
}

TEST_F(CliPushHf, TableOutputPublicRepoOnABranchWithACommitMessage) {
  const RunWithCheckpoints run = make_run({"a"});
  const std::string path = run.training_paths[0];
  const std::string repo = account() + "/public-adapter";

  const CliResult result = push(
      {"checkpoint", "push-hf", path, "-r", repo, "--public", "--revision", "dev", "--commit-message", "first upload"});
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  const std::vector<std::string> lines = result.lines();
  EXPECT_EQ(cells(lines.at(0)), (std::vector<std::string>{"Property", "Value"}));
  EXPECT_THAT(result.out, HasSubstr("Checkpoint Path  " + path));
  EXPECT_EQ(cells(lines.at(2)), (std::vector<std::string>{"Repo ID", repo}));
  EXPECT_EQ(cells(lines.at(3)), (std::vector<std::string>{"Revision", "dev"}));
  EXPECT_EQ(cells(lines.at(4)), (std::vector<std::string>{"Public", "Yes"}));
  EXPECT_THAT(result.out, HasSubstr("README.md, adapter_config.json, adapter_model.safetensors"));

  EXPECT_FALSE(hub_repo_info(hub(), repo).is_private);
  // Public: readable without a token, on the branch only.
  EXPECT_NE(hub_read_file(hub(""), repo, "dev", "adapter_config.json"), std::nullopt);
  EXPECT_EQ(hub_read_file(hub(""), repo, "main", "adapter_config.json"), std::nullopt);

  // Pushing the same checkpoint again is fine; another checkpoint into its repo is refused.
  EXPECT_EQ(push({"checkpoint", "push-hf", path, "-r", repo, "--revision", "dev"}).code, cli::exit_ok);
  const RunWithCheckpoints other = make_run({"b"});
  const CliResult refused = push({"checkpoint", "push-hf", other.training_paths[0], "-r", repo, "--revision", "dev"});
  EXPECT_EQ(refused.code, cli::exit_failure);
  EXPECT_THAT(refused.err, HasSubstr("appears to contain a different Tinker checkpoint: found " + path));
}

TEST_F(CliPushHf, DerivesTheRepoAndBranchFromTheRun) {
  const RunWithCheckpoints run = make_run({"step-1"});
  const std::string path = run.training_paths[0];
  const CliResult result = push({"-f", "json", "checkpoint", "push-hf", path});
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  const boost::json::value value = result.json();
  const std::string repo(value.at("repo_id").as_string());
  EXPECT_THAT(repo, StartsWith(account() + "/tinker-tiny-lm-"));
  EXPECT_EQ(hub_repo_id_problem(repo), "");
  EXPECT_EQ(value.at("revision").as_string(), "weights-step-1");
  EXPECT_NE(hub_read_file(hub(), repo, "weights-step-1", "adapter_model.safetensors"), std::nullopt);
}

TEST_F(CliPushHf, CreatePrLeavesMainAlone) {
  const RunWithCheckpoints run = make_run({"a"});
  const std::string repo = account() + "/pr-adapter";
  const CliResult result =
      push({"-f", "json", "checkpoint", "push-hf", run.training_paths[0], "-r", repo, "--create-pr"});
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_EQ(result.json().at("pr_url").as_string(), server->base_url() + "/" + repo + "/discussions/1");
  EXPECT_EQ(hub_read_file(hub(), repo, "main", "adapter_config.json"), std::nullopt);
  EXPECT_NE(hub_read_file(hub(), repo, "refs/pr/1", "adapter_config.json"), std::nullopt);

  const CliResult both = push({"checkpoint", "push-hf", run.training_paths[0], "--create-pr", "--revision", "dev"});
  EXPECT_EQ(both.code, cli::exit_usage);
  EXPECT_THAT(both.err, HasSubstr("cannot be combined with --revision"));
}

TEST_F(CliPushHf, AllowAndIgnorePatternsChooseTheFiles) {
  const RunWithCheckpoints run = make_run({"a"});
  const std::string path = run.training_paths[0];
  const std::string owner = account();
  auto files_of = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"-f", "json", "checkpoint", "push-hf", path};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult result = push(args);
    EXPECT_EQ(result.code, cli::exit_ok) << result.err;
    return result.code == cli::exit_ok ? strings(result.json().at("files")) : std::vector<std::string>();
  };
  EXPECT_THAT(files_of({"-r", owner + "/allow", "--allow-pattern", "*.json"}), ElementsAre("adapter_config.json"));
  EXPECT_THAT(files_of({"-r", owner + "/allow2", "--allow-pattern", "adapter_*", "--allow-pattern", "check*",
                        "--no-model-card"}),
              ElementsAre("adapter_config.json", "adapter_model.safetensors", "checkpoint_complete"));
  EXPECT_THAT(files_of({"-r", owner + "/ignore", "--ignore-pattern", "*.safetensors"}),
              ElementsAre("README.md", "adapter_config.json"));
  EXPECT_EQ(hub_read_file(hub(), owner + "/ignore", "main", "adapter_model.safetensors"), std::nullopt);

  const CliResult nothing = push({"checkpoint", "push-hf", path, "-r", owner + "/none", "--allow-pattern", "*.txt"});
  EXPECT_EQ(nothing.code, cli::exit_failure);
  EXPECT_THAT(nothing.err, HasSubstr("no file of the checkpoint is left to upload"));
}

TEST_F(CliPushHf, MissingTokenAndBadRepoIdAreNamedBeforeAnyRequest) {
  const RunWithCheckpoints run = make_run({"a"});
  const std::string path = run.training_paths[0];
  const std::size_t before = server->audit().requests.size();

  const CliResult no_token = push({"checkpoint", "push-hf", path, "-r", "someone/adapter"}, false);
  EXPECT_EQ(no_token.code, cli::exit_failure);
  EXPECT_EQ(no_token.err,
            "Error: HF_TOKEN is not set (nor a token saved by `hf auth login`): push-hf needs a Hugging Face token "
            "with write access (set HF_TOKEN)\n");

  const CliResult bad = push({"checkpoint", "push-hf", path, "-r", "bad repo!"});
  EXPECT_EQ(bad.code, cli::exit_usage);
  EXPECT_THAT(bad.err, HasSubstr("--repo 'bad repo!' is not a Hugging Face repo id: the name has ' '"));
  const CliResult nested = push({"checkpoint", "push-hf", path, "-r", "a/b/c"});
  EXPECT_EQ(nested.code, cli::exit_usage);
  EXPECT_THAT(nested.err, HasSubstr("more than one '/'"));
  EXPECT_EQ(server->audit().requests.size(), before);
}

TEST_F(CliPushHf, ATokenSavedByHfAuthLoginIsUsed) {
  const RunWithCheckpoints run = make_run({"a"});
  std::ofstream(scratch / "token") << test_api_key << "\n";
  std::map<std::string, std::string> vars = variables();
  vars["HF_ENDPOINT"] = server->base_url();
  vars["HF_HOME"] = scratch.string();
  const CliResult result =
      run_cli({"checkpoint", "push-hf", run.training_paths[0], "-r", account() + "/saved"}, "", vars);
  EXPECT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_NE(hub_read_file(hub(), account() + "/saved", "main", "adapter_config.json"), std::nullopt);
}

TEST_F(CliPushHf, ARefusedTokenIsNamedWithoutItsValue) {
  const RunWithCheckpoints run = make_run({"a"});
  std::map<std::string, std::string> vars = variables();
  vars["HF_ENDPOINT"] = server->base_url();
  vars["HF_TOKEN"] = "hf_not-a-key-of-this-server-5ecret";
  const CliResult result = run_cli({"checkpoint", "push-hf", run.training_paths[0], "-r", "x/y"}, "", vars);
  EXPECT_EQ(result.code, cli::exit_failure);
  EXPECT_THAT(result.err, HasSubstr("HTTP 401"));
  EXPECT_THAT(result.err, HasSubstr("the token in HF_TOKEN was refused"));
  EXPECT_THAT(result.err, Not(HasSubstr("5ecret")));
}

TEST_F(CliPushHf, AFailedUploadShowsTheHubsStatusAndRequestId) {
  const RunWithCheckpoints run = make_run({"a"});
  const std::string repo = account() + "/failing";
  local::FaultRule commit_fails("commit/main", local::FaultKind::status);
  commit_fails.status = 500;
  commit_fails.probability = 1.0;
  server->set_faults({commit_fails});
  const CliResult result = push({"checkpoint", "push-hf", run.training_paths[0], "-r", repo});
  EXPECT_EQ(result.code, cli::exit_failure);
  EXPECT_THAT(result.err, StartsWith("Error: the commit to " + repo + ": the Hugging Face Hub answered HTTP 500"));
  EXPECT_THAT(result.err, HasSubstr("HTTP status 500, request id "));
  EXPECT_THAT(result.err, Not(HasSubstr("request id \n")));
  EXPECT_EQ(requests_to("/api/models/" + repo + "/commit/main").size(), 1u);  // a commit is never retried

  // A transient answer before the commit is retried (the commit itself never is).
  local::FaultRule preupload_once("preupload/main", local::FaultKind::status);
  preupload_once.status = 503;
  preupload_once.on_calls = {1};
  server->set_faults({preupload_once});
  const CliResult retried = push({"checkpoint", "push-hf", run.training_paths[0], "-r", repo});
  EXPECT_EQ(retried.code, cli::exit_ok) << retried.err;
  const auto preuploads = requests_to("/api/models/" + repo + "/preupload/main");
  ASSERT_GE(preuploads.size(), 2u);
  EXPECT_EQ(preuploads[preuploads.size() - 2].fault, "status_503");
}

// The library under the command: a file over the emulation's 8 MiB part size goes up in parts
// (a PUT per part, then the completion), and a second commit of the same bytes uploads nothing.
TEST_F(CliPushHf, LargeFilesGoUpInPartsAndKnownObjectsAreNotResent) {
  const std::string repo = account() + "/large";
  ASSERT_EQ(hub_create_repo(hub(), repo, true, false), repo);
  std::string bytes(9u << 20, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 7919u) >> 5);
  const fs::path file = scratch / "weights.safetensors";
  std::ofstream(file, std::ios::binary) << bytes;

  HubCommitRequest request;
  request.repo_id = repo;
  request.summary = "large";
  request.files.emplace_back("weights.safetensors", file);
  std::uint64_t reported = 0;
  request.on_progress = [&reported](std::uint64_t done, std::uint64_t) { reported = done; };
  const HubCommitInfo first = hub_commit(hub(), request);
  EXPECT_EQ(first.lfs_files, std::vector<std::string>{"weights.safetensors"});
  EXPECT_EQ(first.lfs_bytes_sent, bytes.size());
  EXPECT_EQ(reported, bytes.size());
  const auto parts = requests_to("/_hub_lfs/");
  ASSERT_EQ(parts.size(), 3u);  // two parts and the completion
  EXPECT_EQ(parts[0].method, "PUT");
  EXPECT_EQ(parts[2].method, "POST");
  EXPECT_EQ(hub_read_file(hub(), repo, "main", "weights.safetensors"), bytes);

  request.summary = "again";
  const HubCommitInfo second = hub_commit(hub(), request);
  EXPECT_EQ(second.lfs_bytes_sent, 0u);
  EXPECT_EQ(requests_to("/_hub_lfs/").size(), 3u);
  EXPECT_NE(second.commit_oid, first.commit_oid);
}

}  // namespace
}  // namespace tinker::test
