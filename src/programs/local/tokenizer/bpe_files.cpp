// The Hugging Face files of the byte-level BPE tokenizer, written by hand (strings escaped by the
// SDK's own JSON writer, no DOM) so their bytes depend on nothing but the trained model: the
// snapshot's revision is a hash of them and must be the same on every machine.
#include "programs/local/tokenizer/bpe_training.hpp"

#include <tinker/error.hpp>

#include "core/wire/json_writer.hpp"
#include "text/pre_tokenizer.hpp"

#include <algorithm>

namespace tinker::local::detail {
namespace {

// Qwen2.5's short ChatML template (no tools, no system default): Jinja source whose string
// literals hold the two characters '\' 'n', which Jinja reads as a line break.
constexpr std::string_view chat_template =
    R"({%- for message in messages %}{{- '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %})";
// The vision tokenizer's: the same, with the generation prompt opening a thinking block as
// Qwen3.5's template does (text content only; the qwen3_5 renderer is the full format).
constexpr std::string_view thinking_chat_template =
    R"({%- for message in messages %}{{- '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n<think>\n' }}{%- endif %})";

bool has_thinking_markup(const ByteLevelBpe& bpe) {
  return std::find(bpe.special_tokens.begin(), bpe.special_tokens.end(), "<think>") != bpe.special_tokens.end();
}

// The token's bytes in the byte-level alphabet (GPT-2's stand-in characters).
std::string byte_level_text(std::string_view bytes) {
  std::string text;
  for (const char c : bytes) text += tokenizer_detail::byte_level_char(static_cast<unsigned char>(c));
  return text;
}

// Qwen3's ByteLevel settings, used by its pre-tokenizer, post-processor and decoder alike.
constexpr std::string_view byte_level_fields =
    R"("add_prefix_space": false, "trim_offsets": false, "use_regex": false)";

std::string special_token_fields(std::string_view content) {
  return "\"content\": " + json_string(content) +
         ", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, \"normalized\": false, \"special\": " +
         (is_marked_special(content) ? "true" : "false");
}

// The special ones but <|endoftext|>, as Qwen's tokenizer_config.json lists them.
std::string additional_special_tokens(const ByteLevelBpe& bpe) {
  std::string list;
  for (const std::string& token : bpe.special_tokens) {
    if (token == bpe_endoftext || !is_marked_special(token)) continue;
    list += (list.empty() ? "" : ", ") + json_string(token);
  }
  return "[" + list + "]";
}

void append_added_tokens(std::string& json, const ByteLevelBpe& bpe) {
  json += "  \"added_tokens\": [\n";
  for (std::size_t i = 0; i < bpe.special_tokens.size(); ++i) {
    json += "    {\"id\": " + std::to_string(bpe.tokens.size() + i) + ", " +
            special_token_fields(bpe.special_tokens[i]) + "}";
    json += i + 1 < bpe.special_tokens.size() ? ",\n" : "\n";
  }
  json += "  ],\n";
}

void append_pipeline(std::string& json) {
  json += "  \"normalizer\": {\"type\": \"NFC\"},\n";
  json += "  \"pre_tokenizer\": {\n    \"type\": \"Sequence\",\n    \"pretokenizers\": [\n";
  json += "      {\"type\": \"Split\", \"pattern\": {\"Regex\": " + json_string(bpe_split_pattern) +
          "}, \"behavior\": \"Isolated\", \"invert\": false},\n";
  json += "      {\"type\": \"ByteLevel\", " + std::string(byte_level_fields) + "}\n    ]\n  },\n";
  json += "  \"post_processor\": {\"type\": \"ByteLevel\", " + std::string(byte_level_fields) + "},\n";
  json += "  \"decoder\": {\"type\": \"ByteLevel\", " + std::string(byte_level_fields) + "},\n";
}

void append_model(std::string& json, const ByteLevelBpe& bpe) {
  json += "  \"model\": {\n";
  json += "    \"type\": \"BPE\",\n    \"dropout\": null,\n    \"unk_token\": null,\n";
  json += "    \"continuing_subword_prefix\": \"\",\n    \"end_of_word_suffix\": \"\",\n";
  json += "    \"fuse_unk\": false,\n    \"byte_fallback\": false,\n    \"ignore_merges\": false,\n";
  json += "    \"vocab\": {\n";
  for (std::size_t id = 0; id < bpe.tokens.size(); ++id) {
    json += "      " + json_string(byte_level_text(bpe.tokens[id])) + ": " + std::to_string(id);
    json += id + 1 < bpe.tokens.size() ? ",\n" : "\n";
  }
  json += "    },\n    \"merges\": [\n";
  for (std::size_t i = 0; i < bpe.merges.size(); ++i) {
    const auto& [left, right] = bpe.merges[i];
    json += "      [" + json_string(byte_level_text(left)) + ", " + json_string(byte_level_text(right)) + "]";
    json += i + 1 < bpe.merges.size() ? ",\n" : "\n";
  }
  json += "    ]\n  }\n";
}

}  // namespace

std::string json_string(std::string_view text) {
  std::string out;
  wire::JsonWriter writer(out);
  if (!writer.string(text)) throw error(errc::invalid_argument, "tokenizer.json text is not valid UTF-8");
  return out;
}

std::string bpe_tokenizer_json(const ByteLevelBpe& bpe) {
  std::string json = "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n";
  append_added_tokens(json, bpe);
  append_pipeline(json);
  append_model(json, bpe);
  json += "}\n";
  return json;
}

std::string bpe_tokenizer_config_json(const ByteLevelBpe& bpe, std::string_view fingerprint) {
  std::string json = "{\n  \"add_bos_token\": false,\n  \"add_prefix_space\": false,\n";
  json += "  \"added_tokens_decoder\": {\n";
  for (std::size_t i = 0; i < bpe.special_tokens.size(); ++i) {
    json +=
        "    \"" + std::to_string(bpe.tokens.size() + i) + "\": {" + special_token_fields(bpe.special_tokens[i]) + "}";
    json += i + 1 < bpe.special_tokens.size() ? ",\n" : "\n";
  }
  json += "  },\n";
  json += "  \"additional_special_tokens\": " + additional_special_tokens(bpe) + ",\n";
  json += "  \"bos_token\": null,\n";
  json +=
      "  \"chat_template\": " + json_string(has_thinking_markup(bpe) ? thinking_chat_template : chat_template) + ",\n";
  json += "  \"clean_up_tokenization_spaces\": false,\n";
  json += "  \"eos_token\": " + json_string(bpe_im_end) + ",\n";
  json += "  \"errors\": \"replace\",\n  \"model_max_length\": 2048,\n";
  json += "  \"pad_token\": " + json_string(bpe_endoftext) + ",\n";
  json += "  \"split_special_tokens\": false,\n";
  json += "  \"tinker_local_training_fingerprint\": " + json_string(fingerprint) + ",\n";
  json += "  \"tokenizer_class\": \"Qwen2Tokenizer\",\n  \"unk_token\": null\n}\n";
  return json;
}

}  // namespace tinker::local::detail
