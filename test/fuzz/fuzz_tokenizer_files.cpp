// The tokenizer file loaders, over files as they come from the Hugging Face Hub or a cache: the first
// byte chooses 0 tokenizer.json, 1 a SentencePiece model, 2 a tiktoken rank file, 3 tokenizer_config.json;
// the rest is the file. A tokenizer that loads then encodes a fixed text (every id it returns must be
// in its vocabulary; failing is allowed only with invalid_argument, as for a tiktoken file lacking the
// rank of a byte) and decodes the first ids of its vocabulary.
#include "fuzz_support.hpp"

#include <tinker/tokenizer.hpp>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <vector>

namespace tinker::fuzz {
namespace {

// Short, but touching what normalizers and pre-tokenizers treat specially: spaces, digits, case,
// punctuation, newlines, multi-byte characters and an added-token look-alike.
constexpr std::string_view kText =
    "Hello, World! 12345 \n\t  na\xc3\xafve caf\xc3\xa9 \xe4\xbd\xa0\xe5\xa5\xbd <|im_end|> <s>";

void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void exercise(const Tokenizer& tokenizer) {
  for (const bool special : {false, true}) {
    const std::vector<TokenId> ids = tokenizer.encode(kText, special);
    for (const TokenId id : ids) {
      if (id < 0 || id >= tokenizer.vocab_size()) property_failed("encode returned an id outside the vocabulary");
    }
    (void)tokenizer.decode(ids, /*skip_special_tokens=*/special);
  }
  std::vector<TokenId> first;
  for (TokenId id = 0; id < std::min(tokenizer.vocab_size(), 64); ++id) first.push_back(id);
  (void)tokenizer.decode(first);
  if (!first.empty()) (void)tokenizer.id_to_token(first.back());
}

std::shared_ptr<const Tokenizer> load(std::size_t choice, const std::filesystem::path& dir, std::string_view bytes) {
  switch (choice) {
    case 0: write_file(dir / "tokenizer.json", bytes); return load_tokenizer_json(dir / "tokenizer.json", "fuzz/json");
    case 1:
      write_file(dir / "tokenizer.model", bytes);
      return load_sentencepiece_tokenizer(dir / "tokenizer.model", "fuzz/sp");
    case 2: {
      write_file(dir / "tiktoken.model", bytes);
      TiktokenOptions options = TiktokenOptions::cl100k_base();
      options.read_config = false;
      return load_tiktoken_tokenizer(dir / "tiktoken.model", "fuzz/tiktoken", options);
    }
    default:
      write_file(dir / "tokenizer_config.json", bytes);
      (void)read_tokenizer_config(dir / "tokenizer_config.json");
      return nullptr;
  }
}

}  // namespace
}  // namespace tinker::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tinker;
  const fuzz::Selected input(data, size, 4);
  const fuzz::TempDir dir;
  std::shared_ptr<const Tokenizer> tokenizer;
  try {
    tokenizer = fuzz::load(input.choice(), dir.path(), input.rest());
  } catch (const error& e) {
    if (e.code() != errc::invalid_configuration) fuzz::property_failed("a loader failed with an unexpected code");
    return 0;
  }
  if (!tokenizer) return 0;
  try {
    fuzz::exercise(*tokenizer);
  } catch (const error& e) {
    // By design: a tiktoken file without a rank for some byte cannot encode text holding that byte.
    if (e.code() != errc::invalid_argument) fuzz::property_failed("encoding failed with an unexpected code");
  }
  return 0;
}
