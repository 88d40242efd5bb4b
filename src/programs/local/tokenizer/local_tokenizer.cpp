// LocalTokenizer: a loaded SentencePiece model or byte-level BPE tokenizer.json behind a pimpl
// (the header stays free of sentencepiece). SentencePieceProcessor's Encode/Decode are const and
// touch no mutable state after loading, and the SDK's tinker::Tokenizer is immutable after
// loading, so one instance serves many threads without locking.
#include "programs/local/tokenizer/tokenizer_store.hpp"

#include "programs/local/tokenizer/tokenizer_training.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <sentencepiece_processor.h>

namespace tinker::local {

class LocalTokenizer::Impl {
 public:
  std::string id;
  TinyTokenizer kind = TinyTokenizer::sentencepiece;
  std::filesystem::path model_file;
  sentencepiece::SentencePieceProcessor processor;  // SentencePiece
  std::shared_ptr<const tinker::Tokenizer> bpe;     // byte-level BPE
  int vocab_size = 0;
};

LocalTokenizer::LocalTokenizer() : impl_(std::make_unique<Impl>()) {}
LocalTokenizer::~LocalTokenizer() = default;

const std::string& LocalTokenizer::id() const noexcept {
  return impl_->id;
}
TinyTokenizer LocalTokenizer::kind() const noexcept {
  return impl_->kind;
}
const std::filesystem::path& LocalTokenizer::model_file() const noexcept {
  return impl_->model_file;
}
int LocalTokenizer::vocab_size() const noexcept {
  return impl_->vocab_size;
}

std::vector<TokenId> LocalTokenizer::encode(std::string_view text) const {
  if (impl_->bpe) return impl_->bpe->encode(text, false);
  std::vector<int> ids;
  const auto status = impl_->processor.Encode(text, &ids);
  if (!status.ok()) {
    throw tinker::error(errc::invalid_argument,
                        "tokenizer " + impl_->id + ": cannot encode text: " + std::string(status.message()));
  }
  return std::vector<TokenId>(ids.begin(), ids.end());
}

std::string LocalTokenizer::decode(std::span<const TokenId> tokens) const {
  std::vector<int> ids;
  ids.reserve(tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= impl_->vocab_size) {
      throw tinker::error(errc::invalid_argument, "tokenizer " + impl_->id + ": tokens[" + std::to_string(i) + "] = " +
                                                      std::to_string(tokens[i]) + " is outside the vocabulary [0, " +
                                                      std::to_string(impl_->vocab_size) + ")");
    }
    ids.push_back(tokens[i]);
  }
  if (impl_->bpe) return impl_->bpe->decode(tokens, false);
  std::string text;
  const auto status = impl_->processor.Decode(ids, &text);
  if (!status.ok()) {
    throw tinker::error(errc::invalid_argument,
                        "tokenizer " + impl_->id + ": cannot decode tokens: " + std::string(status.message()));
  }
  return text;
}

std::shared_ptr<const LocalTokenizer> LocalTokenizer::load(std::string id, const std::filesystem::path& model_file,
                                                           TinyTokenizer kind) {
  std::shared_ptr<LocalTokenizer> tokenizer(new LocalTokenizer());
  Impl& impl = *tokenizer->impl_;
  impl.id = std::move(id);
  impl.kind = kind;
  impl.model_file = model_file;
  if (kind == TinyTokenizer::byte_level_bpe || kind == TinyTokenizer::byte_level_bpe_vl) {
    impl.bpe = tinker::load_tokenizer_json(model_file, impl.id);
    impl.vocab_size = impl.bpe->vocab_size();
    return tokenizer;
  }
  detail::require_usable_sentencepiece();
  const auto status = impl.processor.Load(model_file.string());
  if (!status.ok()) {
    throw tinker::error(errc::invalid_configuration, "cannot load SentencePiece model " + model_file.string() + ": " +
                                                         std::string(status.message()));
  }
  impl.vocab_size = impl.processor.GetPieceSize();
  return tokenizer;
}

}  // namespace tinker::local
