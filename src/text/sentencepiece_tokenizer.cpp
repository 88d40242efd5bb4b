// The SentencePiece backend of tinker::Tokenizer.
//
// The processor is loaded once and never changed afterwards (no SetEncodeExtraOptions after
// load), so its const Encode/Decode/PieceToId methods may run from many threads at once.
#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <sentencepiece_processor.h>

#include <fstream>
#include <iterator>
#include <system_error>
#include <utility>

namespace tinker {
namespace {

std::optional<TokenId> optional_id(int id) {
  if (id < 0) return std::nullopt;
  return static_cast<TokenId>(id);
}

[[noreturn]] void fail_to_load(const std::filesystem::path& file, const std::string& problem) {
  throw error(errc::invalid_configuration, "cannot load SentencePiece tokenizer " + file.string() + ": " + problem);
}

// Reads the whole file, so a missing or unreadable file gets its own message rather than the
// library's parse error.
std::string read_model_file(const std::filesystem::path& file) {
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (!std::filesystem::exists(status)) fail_to_load(file, "no such file");
  if (std::filesystem::is_directory(status)) fail_to_load(file, "it is a directory, not a model file");
  std::ifstream in(file, std::ios::binary);
  if (!in) fail_to_load(file, "the file cannot be opened");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail_to_load(file, "the file cannot be read");
  if (bytes.empty()) fail_to_load(file, "the file is empty");
  return bytes;
}

class SentencePieceTokenizer final : public Tokenizer {
 public:
  SentencePieceTokenizer(std::string id, std::filesystem::path file, SentencePieceOptions options)
      : Tokenizer(std::move(id), std::move(file), TokenizerFormat::sentencepiece), options_(options) {
    const std::string bytes = read_model_file(this->file());
    if (const auto status = processor_.LoadFromSerializedProto(bytes); !status.ok()) {
      fail_to_load(this->file(), "not a valid SentencePiece model (" + status.ToString() + ")");
    }
    if (processor_.GetPieceSize() <= 0) fail_to_load(this->file(), "the model has no pieces");
  }

 private:
  // split_special_tokens changes nothing: SentencePiece never matches a control piece ("<s>")
  // written in the text, only user-defined pieces, which are not special.
  std::vector<TokenId> do_encode(std::string_view text, const EncodeOptions& options) const override {
    const bool add_special_tokens = options.add_special_tokens;
    std::vector<int> ids;
    if (const auto status = processor_.Encode(text, &ids); !status.ok()) {
      throw error(errc::invalid_argument, "encode with tokenizer " + id() + " failed: " + status.ToString());
    }
    std::vector<TokenId> tokens;
    tokens.reserve(ids.size() + 2);
    if (add_special_tokens && options_.add_bos && processor_.bos_id() >= 0) tokens.push_back(processor_.bos_id());
    tokens.insert(tokens.end(), ids.begin(), ids.end());
    if (add_special_tokens && options_.add_eos && processor_.eos_id() >= 0) tokens.push_back(processor_.eos_id());
    return tokens;
  }

  std::string do_decode_ordinary(std::span<const TokenId> tokens) const override {
    const std::vector<int> ids(tokens.begin(), tokens.end());
    std::string text;
    if (const auto status = processor_.Decode(ids, &text); !status.ok()) {
      throw error(errc::invalid_argument, "decode with tokenizer " + id() + " failed: " + status.ToString());
    }
    return text;
  }

  int do_vocab_size() const noexcept override { return processor_.GetPieceSize(); }
  std::optional<TokenId> do_bos_id() const noexcept override { return optional_id(processor_.bos_id()); }
  std::optional<TokenId> do_eos_id() const noexcept override { return optional_id(processor_.eos_id()); }
  std::optional<TokenId> do_pad_id() const noexcept override { return optional_id(processor_.pad_id()); }
  std::optional<TokenId> do_unk_id() const noexcept override { return optional_id(processor_.unk_id()); }

  // PieceToId answers unk_id for a piece it does not know; only "<unk>" itself maps to it.
  std::optional<TokenId> do_token_to_id(std::string_view token) const override {
    const int id = processor_.PieceToId(token);
    if (id < 0) return std::nullopt;
    if (processor_.IsUnknown(id) && processor_.IdToPiece(id) != token) return std::nullopt;
    return static_cast<TokenId>(id);
  }

  std::string do_id_to_token(TokenId id) const override { return processor_.IdToPiece(id); }

  bool do_is_special(TokenId id) const override { return processor_.IsControl(id) || processor_.IsUnknown(id); }

  sentencepiece::SentencePieceProcessor processor_;
  SentencePieceOptions options_;
};

}  // namespace

std::shared_ptr<const Tokenizer> load_sentencepiece_tokenizer(const std::filesystem::path& model_file, std::string id,
                                                              SentencePieceOptions options) {
  return std::make_shared<const SentencePieceTokenizer>(std::move(id), model_file, options);
}

}  // namespace tinker
