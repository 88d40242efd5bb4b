// The uploaded repository's layout and model card (hub_export.hpp), following the Python SDK's
// `_export_checkpoint_to_hub`.
#include "programs/cli/hub_export.hpp"

#include "programs/cli/context.hpp"
#include "programs/cli/output.hpp"

#include <tinker/hub_upload.hpp>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace tinker::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t max_repo_name = 96;

// huggingface_hub's DEFAULT_IGNORE_PATTERNS: never upload a .git folder or the hub's own cache.
const std::vector<std::string> default_ignore_patterns = {".git",
                                                          ".git/*",
                                                          "*/.git",
                                                          "**/.git/**",
                                                          ".cache/huggingface",
                                                          ".cache/huggingface/*",
                                                          "*/.cache/huggingface",
                                                          "**/.cache/huggingface/**"};

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

std::string optional_bool(const std::optional<bool>& value) {
  if (!value) return "None";
  return *value ? "True" : "False";
}

}  // namespace

void check_peft_layout(const fs::path& folder) {
  std::error_code ec;
  const bool weights = fs::is_regular_file(folder / "adapter_model.safetensors", ec) ||
                       fs::is_regular_file(folder / "adapter_model.bin", ec);
  if (!fs::is_regular_file(folder / "adapter_config.json", ec) || !weights) {
    throw CliError(
        "the checkpoint archive does not contain a PEFT adapter: expected adapter_config.json and "
        "adapter_model.safetensors (or adapter_model.bin)");
  }
  if (!fs::exists(folder / "checkpoint_complete", ec)) {
    throw CliError("the checkpoint archive has no 'checkpoint_complete': the adapter files may be incomplete");
  }
}

void complete_adapter_config(const fs::path& folder, const std::string& base_model) {
  const fs::path file = folder / "adapter_config.json";
  boost::system::error_code ec;
  boost::json::value config = boost::json::parse(read_text(file), ec);
  if (ec || !config.is_object()) return;
  const auto* named = config.as_object().if_contains("base_model_name_or_path");
  if (named != nullptr && named->is_string()) return;
  config.as_object()["base_model_name_or_path"] = base_model;
  // Sorted keys, as Python's json.dumps(sort_keys=True) writes them.
  std::vector<std::string> keys;
  for (const auto& entry : config.as_object()) keys.emplace_back(entry.key());
  std::sort(keys.begin(), keys.end());
  boost::json::object sorted;
  for (const std::string& key : keys) sorted[key] = config.as_object()[key];
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  print_json(out, sorted);
}

std::string sanitize_repo_name(std::string_view value) {
  std::string name;
  for (const char c : value) {
    const bool safe = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
    const char kept = safe ? c : '-';
    if (kept == '-' && !name.empty() && name.back() == '-') continue;
    name += kept;
  }
  auto trimmed = [](char c) { return c == '-' || c == '_' || c == ' ' || c == '.'; };
  while (!name.empty() && trimmed(name.back())) name.pop_back();
  const auto first = std::find_if_not(name.begin(), name.end(), trimmed);
  return std::string(first, name.end());
}

std::string default_repo_name(const TinkerPath& path, const std::string& base_model) {
  const std::string base_short =
      base_model == "unknown" ? std::string("adapter") : base_model.substr(base_model.rfind('/') + 1);
  std::string name = sanitize_repo_name("tinker-" + base_short + "-" + path.training_run_id);
  if (name.size() > max_repo_name) name = sanitize_repo_name(name.substr(0, max_repo_name));
  return name;
}

std::string default_revision(const TinkerPath& path) {
  std::string id = path.checkpoint_id();
  std::replace(id.begin(), id.end(), '/', '-');
  return sanitize_repo_name(id);
}

std::string model_card(const std::string& tinker_path, const std::string& repo_id, const AdapterFacts& facts) {
  const std::string& base = facts.base_model;
  std::string card = "---\nbase_model: " + base + "\nlibrary_name: peft\ntags:\n- tinker\n- peft\n- lora\n";
  if (base != "unknown") card += "- base_model:adapter:" + base + "\n";
  card += "tinker_path: " + tinker_path + "\n---\n\n# Tinker LoRA Adapter\n\n";
  card += "This repository contains a LoRA adapter exported from Tinker.\n\n## Usage\n\n```python\n";
  card += "from transformers import AutoModelForCausalLM\n\n";
  card += "adapter_id = \"" + repo_id + "\"\nbase_model = \"" + base + "\"\n\n";
  card += "model = AutoModelForCausalLM.from_pretrained(adapter_id, device_map=\"auto\")\n```\n\n";
  card += "## Source\n\n```\n" + tinker_path + "\n```\n\n## Details\n\n- Base model: " + base + "\n";
  if (facts.lora_rank) card += "- LoRA rank: " + std::to_string(*facts.lora_rank) + "\n";
  if (facts.train_mlp || facts.train_attn || facts.train_unembed) {
    card += "- Trained modules: attn=" + optional_bool(facts.train_attn) + ", mlp=" + optional_bool(facts.train_mlp) +
            ", unembed=" + optional_bool(facts.train_unembed) + "\n";
  }
  return card;
}

std::string peft_model_card(const std::string& tinker_path, const std::string& repo_id, const AdapterFacts& facts) {
  const std::string& base = facts.base_model;
  const bool known = base != "unknown";
  std::string card = "---\nbase_model: " + base + "\nlibrary_name: peft\npipeline_tag: text-generation\ntags:\n";
  card += "- tinker\n- peft\n- lora\n";
  if (known) card += "- base_model:adapter:" + base + "\n";
  card += "tinker_path: " + tinker_path + "\n---\n\n# " + repo_id + "\n\n";
  card += "A LoRA adapter for " +
          (known ? "[" + base + "](https://huggingface.co/" + base + ")" : std::string("its base model"));
  card += ", trained with [Tinker](https://thinkingmachines.ai/tinker). `tinker checkpoint push-hf --format peft` ";
  card += "converted it from Tinker's checkpoint format to a standard PEFT adapter: the base model's own parameter ";
  card += "names, so PEFT, vLLM and SGLang load it as it is.\n\n## Usage\n\n";
  card += "With transformers and PEFT:\n\n```python\nfrom peft import PeftModel\n";
  card += "from transformers import AutoModelForCausalLM\n\n";
  card += "base = AutoModelForCausalLM.from_pretrained(\"" + base + "\", device_map=\"auto\")\n";
  card += "model = PeftModel.from_pretrained(base, \"" + repo_id + "\")\n```\n\n";
  card += "With vLLM, as a LoRA module (a local copy of this repository):\n\n```bash\n";
  card += "hf download " + repo_id + " --local-dir adapter\n";
  card += "vllm serve " + base + " --enable-lora --lora-modules adapter=./adapter\n```\n\n";
  card += "(vLLM needs `--max-lora-rank` at least the adapter's rank when that is above its default.)\n\n";
  card += "## Source\n\n```\n" + tinker_path + "\n```\n\n## Details\n\n- Base model: " + base + "\n";
  card += "- Format: LoRA adapter (PEFT)\n";
  if (facts.lora_rank) card += "- LoRA rank: " + std::to_string(*facts.lora_rank) + "\n";
  if (facts.train_mlp || facts.train_attn || facts.train_unembed) {
    card += "- Trained modules: attn=" + optional_bool(facts.train_attn) + ", mlp=" + optional_bool(facts.train_mlp) +
            ", unembed=" + optional_bool(facts.train_unembed) + "\n";
  }
  return card;
}

std::optional<std::string> tinker_path_in(std::string_view readme) {
  const auto start = readme.find("tinker://");
  if (start == std::string_view::npos) return std::nullopt;
  auto end = start;
  while (end < readme.size() && std::isspace(static_cast<unsigned char>(readme[end])) == 0 && readme[end] != '`') ++end;
  return std::string(readme.substr(start, end - start));
}

std::vector<std::string> files_to_upload(const fs::path& folder, const std::vector<std::string>& allow,
                                         std::vector<std::string> ignore) {
  if (allow.empty() && std::find(ignore.begin(), ignore.end(), "checkpoint_complete") == ignore.end()) {
    ignore.emplace_back("checkpoint_complete");
  }
  ignore.insert(ignore.end(), default_ignore_patterns.begin(), default_ignore_patterns.end());
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    if (entry.is_regular_file()) files.push_back(entry.path().lexically_relative(folder).generic_string());
  }
  std::sort(files.begin(), files.end());
  return hub_filter_paths(files, allow, ignore);
}

}  // namespace tinker::cli
