// The Kimi-shaped tokenizer of the Kimi renderer tests and Kimi's original split pattern
// (support/kimi_tokenizer.hpp).
#include "support/kimi_tokenizer.hpp"

#include "support/tokenizer_reference.hpp"
#include "support/tokenizer_test_support.hpp"

#include <string>
#include <utility>
#include <vector>

namespace tinker::test {

std::shared_ptr<const Tokenizer> kimi_shaped_tokenizer() {
  static const std::shared_ptr<const Tokenizer> loaded = [] {
    const TempDir dir;
    const auto ranks = dir.path() / "tiktoken.model";
    run_node_script(reference_script("tiktoken_reference.js"), {"ranks", "cl100k_base", ranks.string()});
    const std::vector<std::pair<std::string, TokenId>> specials{{"[BOS]", 0},
                                                                {"[EOS]", 1},
                                                                {"<|im_end|>", 2},
                                                                {"<|im_user|>", 3},
                                                                {"<|im_assistant|>", 4},
                                                                {"<|im_system|>", 10},
                                                                {"<|tool_calls_section_begin|>", 11},
                                                                {"<|tool_calls_section_end|>", 12},
                                                                {"<|tool_call_begin|>", 13},
                                                                {"<|tool_call_argument_begin|>", 14},
                                                                {"<|tool_call_end|>", 15},
                                                                {"<|im_middle|>", 17},
                                                                {"<|media_begin|>", 18},
                                                                {"<|media_content|>", 19},
                                                                {"<|media_end|>", 20},
                                                                {"<|media_pad|>", 21},
                                                                {"<think>", 22},
                                                                {"</think>", 23},
                                                                {"[UNK]", 254},
                                                                {"[PAD]", 255}};
    std::string decoder;
    for (const auto& [content, offset] : specials) {
      if (!decoder.empty()) decoder += ",\n";
      const bool special = content != "<think>" && content != "</think>";
      decoder += "\"" + std::to_string(kimi_shaped_base + offset) + "\": {\"content\": \"" + content +
                 "\", \"lstrip\": false, \"normalized\": false, \"rstrip\": false, \"single_word\": false, "
                 "\"special\": " +
                 (special ? "true" : "false") + "}";
    }
    write_file(dir.path() / "tokenizer_config.json",
               "{\"added_tokens_decoder\": {\n" + decoder +
                   "\n}, \"bos_token\": \"[BOS]\", \"eos_token\": \"[EOS]\", \"pad_token\": \"[PAD]\", "
                   "\"unk_token\": \"[UNK]\"}\n");
    return load_tiktoken_tokenizer(ranks, "kimi-shaped", TiktokenOptions::kimi_k2());
  }();
  return loaded;
}

std::string kimi_original_pattern() {
  return R"([\p{Han}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+)"
         R"((?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+)"
         R"([\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|)"
         R"(\s*[\r\n]+|\s+(?!\S)|\s+)";
}

}  // namespace tinker::test
