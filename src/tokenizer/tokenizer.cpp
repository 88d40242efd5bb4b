// The backend-independent part of tinker::Tokenizer: id checks and special-token handling in
// decode, so every backend treats out-of-range ids and special tokens the same way.
#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <string>
#include <utility>

namespace tinker {

const char* to_string(TokenizerFormat format) noexcept {
  switch (format) {
    case TokenizerFormat::sentencepiece: return "sentencepiece";
    case TokenizerFormat::tokenizer_json: return "tokenizer.json";
    case TokenizerFormat::tiktoken: return "tiktoken";
  }
  return "unknown";
}

Tokenizer::Tokenizer(std::string id, std::filesystem::path file, TokenizerFormat format)
    : id_(std::move(id)), file_(std::move(file)), format_(format) {}

std::optional<std::string> Tokenizer::id_to_token(TokenId id) const {
  if (!in_vocabulary(id)) return std::nullopt;
  return do_id_to_token(id);
}

// Ordinary tokens are decoded in runs, so the backend sees whole words (SentencePiece joins
// pieces and turns "▁" into spaces); a special token ends a run and is written as its token text,
// as Hugging Face's slow tokenizers do.
std::string Tokenizer::decode(std::span<const TokenId> tokens, bool skip_special_tokens) const {
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!in_vocabulary(tokens[i])) {
      throw error(errc::invalid_argument, "decode: token id " + std::to_string(tokens[i]) + " at index " +
                                              std::to_string(i) + " is outside the vocabulary [0, " +
                                              std::to_string(vocab_size()) + ") of tokenizer " + id_);
    }
  }
  std::string text;
  std::size_t run_start = 0;
  for (std::size_t i = 0; i <= tokens.size(); ++i) {
    const bool at_end = i == tokens.size();
    if (!at_end && !do_is_special(tokens[i])) continue;
    if (i > run_start) text += do_decode_ordinary(tokens.subspan(run_start, i - run_start));
    if (!at_end && !skip_special_tokens) text += do_id_to_token(tokens[i]);
    run_start = i + 1;
  }
  return text;
}

}  // namespace tinker
