// read_tokenizer_config: the special token names and chat template of tokenizer_config.json.
//
// As transformers: a special token is a string or an object with "content"; chat_template is a
// string, or a list of {"name", "template"} of which "default" is taken; a chat_template.jinja
// file beside the config replaces the config's template.
#include "text/hf/json_reader.hpp"

#include <tinker/tokenizer.hpp>

namespace tinker {
namespace {

namespace hf = tokenizer_detail::hf;

std::optional<std::string> token_name(const hf::JsonObject& root, std::string_view key) {
  const auto* value = root.find(key);
  if (value == nullptr) return std::nullopt;
  if (value->is_string()) return std::string(value->get_string());
  if (value->is_object()) return std::string(hf::JsonObject(root.file(), *value, root.path_of(key)).string("content"));
  root.fail_at(key,
               std::string("expected a string or an object with \"content\", found ") + hf::json_kind_name(*value));
}

std::optional<std::string> chat_template(const hf::JsonObject& root) {
  const auto* value = root.find("chat_template");
  if (value == nullptr) return std::nullopt;
  if (value->is_string()) return std::string(value->get_string());
  const auto& templates = hf::json_array(root.file(), *value, "chat_template");
  for (std::size_t i = 0; i < templates.size(); ++i) {
    const hf::JsonObject entry(root.file(), templates[i], hf::json_path("chat_template", i));
    if (entry.string("name") == "default") return std::string(entry.string("template"));
  }
  return std::nullopt;
}

}  // namespace

TokenizerConfig read_tokenizer_config(const std::filesystem::path& file) {
  TokenizerConfig config;
  {
    const hf::JsonFile json(file);
    const hf::JsonObject root(json, json.root(), "");
    config.bos_token = token_name(root, "bos_token");
    config.eos_token = token_name(root, "eos_token");
    config.pad_token = token_name(root, "pad_token");
    config.unk_token = token_name(root, "unk_token");
    config.chat_template = chat_template(root);
  }
  const auto jinja = file.parent_path() / "chat_template.jinja";
  std::error_code ec;
  if (std::filesystem::is_regular_file(jinja, ec)) config.chat_template = hf::read_text_file(jinja);
  return config;
}

}  // namespace tinker
