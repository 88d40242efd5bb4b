// `tinker checkpoint export` and `checkpoint push-hf --format peft` against tinker-local: a LoRA
// trained one step, exported as a PEFT adapter and as a merged model against tinker-local's own
// base model written as a Hugging Face directory (tinker/local/model_dir.hpp), the base taken
// from a directory or from tinker-local's Hub emulation (then reused from the hub cache, and found
// there offline), the converted adapter pushed with its model card, and the mistakes a user makes.
#include "integration/programs/cli/cli_support.hpp"
#include "support/temp_files.hpp"

#include <tinker/download.hpp>
#include <tinker/error.hpp>
#include <tinker/hub_upload.hpp>
#include <tinker/local/model_dir.hpp>
#include <tinker/safetensors.hpp>

#include <gmock/gmock.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>

namespace tinker::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr const char* q_proj = "model.layers.0.self_attn.q_proj.weight";

boost::json::object json_file(const fs::path& file) {
  return boost::json::parse(read_file(file)).as_object();
}

// W + (alpha / r) B A, from the Tinker checkpoint's adapter, as the merge must compute it.
std::vector<float> expected_merge(const fs::path& adapter_dir, const std::vector<float>& base,
                                  const std::string& module) {
  const boost::json::object config = json_file(adapter_dir / "adapter_config.json");
  const double scale = config.at("lora_alpha").to_number<double>() / config.at("r").to_number<double>();
  const auto adapter = safetensors::SafetensorsFile::open(adapter_dir / "adapter_model.safetensors");
  const auto& a_info = adapter.at("base_model.model." + module + ".lora_A.weight");
  const auto& b_info = adapter.at("base_model.model." + module + ".lora_B.weight");
  const std::vector<float> a = adapter.read_f32(a_info);
  const std::vector<float> b = adapter.read_f32(b_info);
  const auto rank = static_cast<std::size_t>(a_info.shape[0]);
  const auto in = static_cast<std::size_t>(a_info.shape[1]);
  const auto out = static_cast<std::size_t>(b_info.shape[0]);
  std::vector<float> merged = base;
  for (std::size_t o = 0; o < out; ++o) {
    for (std::size_t i = 0; i < in; ++i) {
      double delta = 0;
      for (std::size_t k = 0; k < rank; ++k) delta += static_cast<double>(b[o * rank + k]) * a[k * in + i];
      merged[o * in + i] = static_cast<float>(base[o * in + i] + scale * delta);
    }
  }
  return merged;
}

class CliExport : public CliTest {
 protected:
  /// A training checkpoint after one optimizer step (an untrained LoRA adds nothing).
  std::string trained_checkpoint(const std::string& model = std::string(tiny_model)) {
    sync::TrainingClient training = service().create_lora_training_client(model, 4);
    training.forward_backward(tiny_cross_entropy_input()).get();
    training.optim_step(AdamParams(1e-2)).get();
    return training.save_state("trained").get().path;
  }

  /// tinker-local's tiny model as a Hugging Face directory (written once per test).
  const fs::path& base_dir() {
    if (!fs::exists(scratch / "base")) local::export_model(server_options(), tiny_model, scratch / "base");
    return base;
  }

  std::map<std::string, std::string> hub_variables() const {
    std::map<std::string, std::string> vars = variables();
    vars["HF_ENDPOINT"] = server->base_url();
    vars["HF_TOKEN"] = std::string(test_api_key);
    vars["HF_HUB_CACHE"] = (scratch / "hub").string();
    return vars;
  }

  CliResult run(std::vector<std::string> args, std::map<std::string, std::string> extra = {}) const {
    std::map<std::string, std::string> vars = hub_variables();
    for (auto& [name, value] : extra) vars[name] = value;
    CliResult result = run_cli(std::move(args), "", vars, false, {}, error_is_terminal);
    EXPECT_THAT(result.out + result.err, Not(HasSubstr(std::string(test_api_key))));
    return result;
  }

  HubOptions hub() const {
    HubOptions options;
    options.endpoint = server->base_url();
    options.token = Secret(std::string(test_api_key));
    return options;
  }

  /// A model directory (default: base_dir()) pushed to the Hub emulation as a public repo; returns its id.
  std::string push_base_to_hub(const std::string& name, std::optional<fs::path> dir = std::nullopt) {
    const std::string repo = hub_create_repo(hub(), hub_whoami(hub()) + "/" + name, false, false);
    HubCommitRequest request;
    request.repo_id = repo;
    request.summary = "the tiny base model";
    for (const auto& entry : fs::directory_iterator(dir ? *dir : base_dir())) {
      request.files.emplace_back(entry.path().filename().string(), entry.path());
    }
    hub_commit(hub(), request);
    return repo;
  }

  std::size_t hub_file_requests() const {
    std::size_t count = 0;
    for (const local::RequestRecord& record : server->audit().requests) {
      if (record.path.find("/resolve/") != std::string::npos) ++count;
    }
    return count;
  }

  /// The checkpoint's own files, as `tinker checkpoint download` writes them.
  fs::path downloaded(const std::string& path) {
    const CliResult result = cli({"checkpoint", "download", path, "-o", (scratch / "downloads").string()});
    EXPECT_EQ(result.code, cli::exit_ok) << result.err;
    return scratch / "downloads" / download_target_name(path);
  }

  const TempDir scratch_dir{"tinker-cli-export"};
  const fs::path scratch = scratch_dir.path();
  const fs::path base = scratch / "base";
};

TEST_F(CliExport, PeftAndMergedAgainstALocalBaseDirectory) {
  const std::string path = trained_checkpoint();
  const fs::path peft = scratch / "peft";
  const CliResult exported =
      run({"checkpoint", "export", path, "--format", "peft", "--base", base_dir().string(), "-o", peft.string()});
  ASSERT_EQ(exported.code, cli::exit_ok) << exported.err;
  EXPECT_THAT(exported.out, StartsWith("Wrote the PEFT adapter " + peft.string() + ": "));
  EXPECT_THAT(exported.out, HasSubstr(" tensors ("));
  const boost::json::object config = json_file(peft / "adapter_config.json");
  EXPECT_EQ(config.at("peft_type").as_string(), "LORA");
  EXPECT_EQ(config.at("base_model_name_or_path").as_string(), tiny_model);  // the Tinker API's name
  EXPECT_EQ(config.at("r").to_number<int>(), 4);
  const auto adapter = safetensors::SafetensorsFile::open(peft / "adapter_model.safetensors");
  EXPECT_NE(adapter.find("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"), nullptr);

  const fs::path merged = scratch / "merged";
  const CliResult merge = run({"checkpoint", "export", path, "--format", "merged", "--base", base_dir().string(), "-o",
                               merged.string(), "--threads", "2", "--format", "json"});
  ASSERT_EQ(merge.code, cli::exit_ok) << merge.err;
  const boost::json::object summary = merge.json().as_object();
  EXPECT_EQ(summary.at("format").as_string(), "merged");
  EXPECT_EQ(summary.at("output").as_string(), merged.string());
  EXPECT_GT(summary.at("tensors_written").to_number<int>(), summary.at("tensors_changed").to_number<int>());
  EXPECT_GE(summary.at("tensors_changed").to_number<int>(), 4);  // q, v, up, down (and lm_head)
  EXPECT_GT(summary.at("bytes_written").to_number<double>(), 0);

  // The merged weights are W + (alpha / r) B A; tensors without an adapter are copied unchanged.
  const auto base_weights = safetensors::SafetensorsModel::open(base_dir());
  const auto merged_weights = safetensors::SafetensorsModel::open(merged);
  const auto base_q = base_weights.find(q_proj);
  const auto merged_q = merged_weights.find(q_proj);
  ASSERT_NE(merged_q.tensor, nullptr);
  const std::vector<float> expected =
      expected_merge(downloaded(path), base_q.file->read_f32(*base_q.tensor), "model.layers.0.self_attn.q_proj");
  const std::vector<float> got = merged_q.file->read_f32(*merged_q.tensor);
  ASSERT_EQ(got.size(), expected.size());
  double largest_change = 0;
  const std::vector<float> before = base_q.file->read_f32(*base_q.tensor);
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], expected[i], 1e-5 + 1e-5 * std::abs(expected[i])) << i;
    largest_change = std::max(largest_change, static_cast<double>(std::abs(got[i] - before[i])));
  }
  EXPECT_GT(largest_change, 1e-4);  // the step did train something
  for (const std::string& name : base_weights.tensor_names()) {
    if (name.find("k_proj") == std::string::npos) continue;
    const auto from = base_weights.find(name);
    const auto to = merged_weights.find(name);
    ASSERT_NE(to.tensor, nullptr) << name;
    const auto a = from.file->data(*from.tensor);
    const auto b = to.file->data(*to.tensor);
    EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << name;
  }
  EXPECT_TRUE(fs::exists(merged / "config.json"));
  EXPECT_EQ(read_file(merged / "config.json"), read_file(base_dir() / "config.json"));
}

TEST_F(CliExport, ABaseFromTheHubIsDownloadedOnceAndFoundOffline) {
  const std::string repo = push_base_to_hub("tiny-base");
  const std::string path = trained_checkpoint();
  const fs::path first = scratch / "first";
  const CliResult exported =
      run({"-f", "json", "checkpoint", "export", path, "--format", "peft", "--base", repo, "-o", first.string()});
  ASSERT_EQ(exported.code, cli::exit_ok) << exported.err;
  const boost::json::object summary = exported.json().as_object();
  EXPECT_EQ(summary.at("base_model").as_string(), repo);
  const fs::path snapshot(std::string(summary.at("base_model_dir").as_string()));
  EXPECT_EQ(snapshot.parent_path().parent_path(),
            scratch / "hub" / ("models--" + repo.substr(0, repo.find('/')) + "--tiny-base"));
  EXPECT_EQ(read_file(snapshot / "model.safetensors"), read_file(base_dir() / "model.safetensors"));
  EXPECT_EQ(json_file(first / "adapter_config.json").at("base_model_name_or_path").as_string(), repo);

  // The cache answers the second export: the listing only, no file.
  const std::size_t files = hub_file_requests();
  EXPECT_GT(files, 0u);
  const CliResult again =
      run({"checkpoint", "export", path, "--format", "merged", "--base", repo, "-o", (scratch / "again").string()});
  ASSERT_EQ(again.code, cli::exit_ok) << again.err;
  EXPECT_EQ(hub_file_requests(), files);

  // Offline: nothing is asked of the Hub (nor of Tinker: the checkpoint is a directory).
  const fs::path local = downloaded(path);
  const std::size_t before = server->audit().requests.size();
  const CliResult offline = run({"checkpoint", "export", local.string(), "--format", "peft", "--base", repo, "-o",
                                 (scratch / "offline").string()},
                                {{"HF_HUB_OFFLINE", "1"}});
  ASSERT_EQ(offline.code, cli::exit_ok) << offline.err;
  EXPECT_EQ(server->audit().requests.size(), before);

  const CliResult missing = run({"checkpoint", "export", local.string(), "--format", "peft", "--base",
                                 "someone/not-cached", "-o", (scratch / "never").string()},
                                {{"HF_HUB_OFFLINE", "1"}});
  EXPECT_EQ(missing.code, cli::exit_failure);
  EXPECT_THAT(missing.err, HasSubstr("HF_HUB_OFFLINE is set and the hub cache has no snapshot of someone/not-cached"));
  EXPECT_FALSE(fs::exists(scratch / "never"));
}

TEST_F(CliExport, WithoutBaseTheCheckpointsOwnBaseModelComesFromTheHub) {
  // A base model named like a Hub repo of ours, served by tinker-local and pushed to its Hub.
  const std::string model = hub_whoami(hub()) + "/tiny-hub-base";
  local::ServerOptions options = server_options();
  options.catalogue.emplace_back(model, 2048);
  start_server(options);
  local::export_model(options, model, scratch / "hub-base");
  ASSERT_EQ(push_base_to_hub("tiny-hub-base", scratch / "hub-base"), model);

  const std::string path = trained_checkpoint(model);
  const CliResult exported =
      run({"-f", "json", "checkpoint", "export", path, "--format", "peft", "-o", (scratch / "out").string()});
  ASSERT_EQ(exported.code, cli::exit_ok) << exported.err;
  EXPECT_EQ(exported.json().at("base_model").as_string(), model);
  EXPECT_EQ(json_file(scratch / "out" / "adapter_config.json").at("base_model_name_or_path").as_string(), model);

  // Another revision of it that the Hub does not have: the Hub's answer, and where the name came from.
  const CliResult missing = run(
      {"checkpoint", "export", path, "--format", "peft", "--base-revision", "v9", "-o", (scratch / "never").string()});
  EXPECT_EQ(missing.code, cli::exit_failure);
  EXPECT_THAT(missing.err, HasSubstr("HTTP 404 (RevisionNotFound)"));
  EXPECT_THAT(missing.err, HasSubstr("(the base model of " + path + "; --base DIR uses a local copy)"));
  EXPECT_FALSE(fs::exists(scratch / "never"));
}

TEST_F(CliExport, AnUnknownHubRepoIsTheHubsAnswer) {
  const std::string path = trained_checkpoint();
  const CliResult result = run({"checkpoint", "export", downloaded(path).string(), "--format", "peft", "--base",
                                "nobody/no-such-model", "-o", (scratch / "out").string()});
  EXPECT_EQ(result.code, cli::exit_failure);
  EXPECT_THAT(result.err, StartsWith("Error: listing the files of nobody/no-such-model at revision main: the Hugging "
                                     "Face Hub answered HTTP 40"));
  EXPECT_FALSE(fs::exists(scratch / "out"));
}

TEST_F(CliExport, PushHfFormatPeftUploadsTheConvertedAdapterWithItsModelCard) {
  const std::string path = trained_checkpoint();
  const std::string repo = hub_whoami(hub()) + "/converted";
  const CliResult pushed =
      run({"-f", "json", "checkpoint", "push-hf", path, "-r", repo, "--format", "peft", "--base", base_dir().string()});
  ASSERT_EQ(pushed.code, cli::exit_ok) << pushed.err;
  std::vector<std::string> files;
  const boost::json::value answer = pushed.json();
  for (const auto& file : answer.at("files").as_array()) files.emplace_back(file.as_string());
  EXPECT_EQ(files, (std::vector<std::string>{"README.md", "adapter_config.json", "adapter_model.safetensors"}));

  const std::string config = hub_read_file(hub(), repo, "main", "adapter_config.json").value_or("");
  EXPECT_EQ(boost::json::parse(config).at("base_model_name_or_path").as_string(), tiny_model);
  const std::string weights = hub_read_file(hub(), repo, "main", "adapter_model.safetensors").value_or("");
  const auto adapter = safetensors::SafetensorsFile::from_bytes(weights, "uploaded adapter");
  EXPECT_NE(adapter.find("base_model.model.model.layers.0.mlp.up_proj.lora_B.weight"), nullptr);

  const std::string card = hub_read_file(hub(), repo, "main", "README.md").value_or("");
  EXPECT_THAT(card, StartsWith("---\nbase_model: " + std::string(tiny_model) +
                               "\nlibrary_name: peft\npipeline_tag: text-generation\ntags:\n- tinker\n- peft\n- lora\n"
                               "- base_model:adapter:" +
                               std::string(tiny_model) + "\ntinker_path: " + path + "\n---\n\n# " + repo + "\n"));
  EXPECT_THAT(card, HasSubstr("PeftModel.from_pretrained(base, \"" + repo + "\")"));
  EXPECT_THAT(card, HasSubstr("- LoRA rank: 4\n"));

  // The default is still the checkpoint as Tinker wrote it; --format json after the command is
  // still the output format.
  const std::string raw = hub_whoami(hub()) + "/raw";
  const CliResult raw_push = run({"checkpoint", "push-hf", path, "-r", raw, "--format", "json"});
  ASSERT_EQ(raw_push.code, cli::exit_ok) << raw_push.err;
  EXPECT_EQ(raw_push.json().at("repo_id").as_string(), raw);
  EXPECT_THAT(hub_read_file(hub(), raw, "main", "README.md").value_or(""), HasSubstr("# Tinker LoRA Adapter"));
  const CliResult base_without_peft = run({"checkpoint", "push-hf", path, "-r", raw, "--base", "x/y"});
  EXPECT_EQ(base_without_peft.code, cli::exit_usage);
  EXPECT_THAT(base_without_peft.err, HasSubstr("--base applies to --format peft only"));
}

TEST_F(CliExport, BadInputIsNamedAndNothingIsWritten) {
  const std::string path = trained_checkpoint();
  const fs::path checkpoint = downloaded(path);
  const fs::path out = scratch / "out";

  const CliResult no_base = run({"checkpoint", "export", checkpoint.string(), "--format", "peft", "-o", out.string()});
  EXPECT_EQ(no_base.code, cli::exit_usage);
  EXPECT_THAT(no_base.err, HasSubstr("--base is required to export a directory"));

  const CliResult format = run({"checkpoint", "export", checkpoint.string(), "--format", "onnx", "--base",
                                base_dir().string(), "-o", out.string()});
  EXPECT_EQ(format.code, cli::exit_usage);
  EXPECT_THAT(format.err, HasSubstr("onnx"));

  const CliResult two = run({"checkpoint", "export", checkpoint.string(), "--format", "peft", "--format", "merged",
                             "--base", base_dir().string(), "-o", out.string()});
  EXPECT_EQ(two.code, cli::exit_usage);
  EXPECT_THAT(two.err, HasSubstr("--format peft and --format merged: choose one"));
  const CliResult output_only = run({"checkpoint", "export", checkpoint.string(), "--format", "json", "--base",
                                     base_dir().string(), "-o", out.string()});
  EXPECT_EQ(output_only.code, cli::exit_usage);
  EXPECT_THAT(output_only.err, HasSubstr("--format peft|merged|gguf is required"));

  const CliResult out_type = run({"checkpoint", "export", checkpoint.string(), "--format", "peft", "--base",
                                  base_dir().string(), "-o", out.string(), "--out-type", "f32"});
  EXPECT_EQ(out_type.code, cli::exit_usage);
  EXPECT_THAT(out_type.err, HasSubstr("--out-type applies to --format gguf only"));

  fs::create_directories(scratch / "exists");
  const CliResult exists = run({"checkpoint", "export", checkpoint.string(), "--format", "peft", "--base",
                                base_dir().string(), "-o", (scratch / "exists").string()});
  EXPECT_EQ(exists.code, cli::exit_failure);
  EXPECT_EQ(exists.err,
            "Error: " + (scratch / "exists").string() + " already exists; remove it or choose another output (-o)\n");

  const CliResult not_checkpoint = run({"checkpoint", "export", base_dir().string(), "--format", "peft", "--base",
                                        base_dir().string(), "-o", out.string()});
  EXPECT_EQ(not_checkpoint.code, cli::exit_failure);
  EXPECT_THAT(not_checkpoint.err, HasSubstr(base_dir().string() + " has no adapter_model.safetensors"));

  const CliResult nowhere = run({"checkpoint", "export", (scratch / "nowhere").string(), "--format", "peft", "--base",
                                 base_dir().string(), "-o", out.string()});
  EXPECT_EQ(nowhere.code, cli::exit_failure);
  EXPECT_THAT(nowhere.err, HasSubstr("is neither a tinker:// path nor a directory"));

  const CliResult bad_base = run(
      {"checkpoint", "export", checkpoint.string(), "--format", "peft", "--base", "./no/such/dir", "-o", out.string()});
  EXPECT_EQ(bad_base.code, cli::exit_failure);
  EXPECT_THAT(bad_base.err,
              HasSubstr("the base model './no/such/dir' is neither a directory nor a Hugging Face repo id"));

  // A base of other shapes: the library's error, one line, nothing at the output.
  local::ServerOptions other = server_options();
  local::CatalogueEntry& wide = other.catalogue.emplace_back("tinker-local/wide", 2048);
  wide.d_model = 48;
  local::export_model(other, "tinker-local/wide", scratch / "wide");
  const CliResult mismatch = run({"checkpoint", "export", checkpoint.string(), "--format", "merged", "--base",
                                  (scratch / "wide").string(), "-o", out.string()});
  EXPECT_EQ(mismatch.code, cli::exit_failure);
  EXPECT_THAT(mismatch.err, StartsWith("Error: "));
  EXPECT_EQ(std::count(mismatch.err.begin(), mismatch.err.end(), '\n'), 1) << mismatch.err;

  // llama.cpp has no architecture for tinker-local's model.
  const CliResult gguf = run({"checkpoint", "export", checkpoint.string(), "--format", "gguf", "--base",
                              base_dir().string(), "-o", (scratch / "adapter.gguf").string()});
  EXPECT_EQ(gguf.code, cli::exit_failure);
  EXPECT_THAT(gguf.err, StartsWith("Error: "));
  EXPECT_FALSE(fs::exists(scratch / "adapter.gguf"));
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(CliExport, GgufForALlamaShapedBase) {
  // tinker-local's weights under a Llama config: llama.cpp has that architecture.
  const fs::path llama = scratch / "llama";
  fs::copy(base_dir(), llama);
  boost::json::object config = json_file(llama / "config.json");
  config["model_type"] = "llama";
  config["architectures"] = boost::json::array{"LlamaForCausalLM"};
  config["num_attention_heads"] = 4;
  config["num_key_value_heads"] = 4;
  std::ofstream(llama / "config.json", std::ios::trunc) << boost::json::serialize(config);

  const std::string path = trained_checkpoint();
  const fs::path out = scratch / "adapter.gguf";
  const CliResult result = run({"checkpoint", "export", path, "--format", "gguf", "--base", llama.string(), "-o",
                                out.string(), "--out-type", "f32"});
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_THAT(result.out, StartsWith("Wrote the GGUF adapter " + out.string() + ": "));
  EXPECT_EQ(read_file(out).substr(0, 4), "GGUF");
}

TEST_F(CliExport, ATerminalGetsProgressBarsAndInterruptionStopsTheExport) {
  const std::string path = trained_checkpoint();
  error_is_terminal = true;
  const CliResult shown = run({"checkpoint", "export", path, "--format", "merged", "--base", base_dir().string(), "-o",
                               (scratch / "merged").string()});
  ASSERT_EQ(shown.code, cli::exit_ok) << shown.err;
  EXPECT_THAT(shown.err, StartsWith("\rDownloading  ["));
  EXPECT_THAT(shown.err, HasSubstr("100%"));

  std::map<std::string, std::string> vars = hub_variables();
  const CliResult stopped = run_cli({"checkpoint", "export", downloaded(path).string(), "--format", "merged", "--base",
                                     base_dir().string(), "-o", (scratch / "stopped").string()},
                                    "", vars, false, [] { return true; });
  EXPECT_EQ(stopped.code, cli::exit_interrupted);
  EXPECT_THAT(stopped.err, HasSubstr("Interrupted."));
  EXPECT_THAT(stopped.out, Not(HasSubstr("Wrote")));
  EXPECT_FALSE(fs::exists(scratch / "stopped"));
}

}  // namespace
}  // namespace tinker::test
