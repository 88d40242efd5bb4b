// The Hugging Face tokenizer.json backend of tinker::Tokenizer: added tokens, normalizer,
// pre-tokenizer, BPE model and post-processor for encode; decoder for decode. Immutable once
// built; every method may run from many threads at once (scratch buffers are per thread).
#pragma once

#include "text/hf/added_vocabulary.hpp"
#include "text/hf/bpe_model.hpp"
#include "text/hf/decoders.hpp"
#include "text/hf/post_processors.hpp"
#include "text/pre_tokenizer.hpp"

#include <tinker/tokenizer.hpp>

#include <memory>

namespace tinker::tokenizer_detail::hf {

/// What a tokenizer.json describes. Null components are absent from the file.
class HfParts {
 public:
  HfParts() = default;

  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  std::unique_ptr<BpeModel> model;  // required
  AddedVocabulary added;
  std::unique_ptr<PostProcessor> post_processor;
  std::unique_ptr<Decoder> decoder;
};

class HfTokenizer final : public Tokenizer {
 public:
  HfTokenizer(std::string id, std::filesystem::path file, TokenizerConfig config, HfParts parts);

 private:
  std::vector<TokenId> do_encode(std::string_view text, const EncodeOptions& options) const override;
  std::string do_decode(std::span<const TokenId> tokens, bool skip_special_tokens) const override;
  std::string do_decode_ordinary(std::span<const TokenId> tokens) const override;
  int do_vocab_size() const noexcept override { return vocab_size_; }
  std::optional<TokenId> do_bos_id() const noexcept override { return bos_; }
  std::optional<TokenId> do_eos_id() const noexcept override { return eos_; }
  std::optional<TokenId> do_pad_id() const noexcept override { return pad_; }
  std::optional<TokenId> do_unk_id() const noexcept override { return unk_; }
  std::optional<TokenId> do_token_to_id(std::string_view token) const override;
  std::string do_id_to_token(TokenId id) const override;
  bool do_is_special(TokenId id) const override { return parts_.added.is_special_id(id); }

  /// Normalizes a section of plain text (between raw-matched added tokens) and encodes it;
  /// `skip_special` as in AddedVocabulary.
  void encode_section(std::string_view text, bool starts_input, bool skip_special, std::vector<TokenId>& ids) const;
  /// Pre-tokenizes normalized text and runs the model on every piece.
  void encode_normalized(std::string_view text, bool starts_input, std::vector<TokenId>& ids) const;
  std::optional<std::string_view> token_text(TokenId id) const noexcept;
  std::optional<TokenId> named_token(const std::optional<std::string>& name) const;

  HfParts parts_;
  int vocab_size_ = 0;
  std::optional<TokenId> bos_, eos_, pad_, unk_;
};

}  // namespace tinker::tokenizer_detail::hf
