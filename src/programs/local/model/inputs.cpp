// Model inputs resolved to positions: text ids checked against the vocabulary, images pooled
// (inputs.hpp).
#include "programs/local/model/inputs.hpp"

#include "programs/local/model/images.hpp"

#include <variant>

namespace tinker::local::model {
namespace {

std::string chunk_path(const std::string& input_path, std::size_t index) {
  return input_path + ".chunks[" + std::to_string(index) + "]";
}

void append_text(const EncodedTextChunk& text, const std::string& path, int vocab_size, InputSequence& sequence) {
  for (std::size_t k = 0; k < text.tokens.size(); ++k) {
    const TokenId token = text.tokens[k];
    if (token < 0 || token >= vocab_size) {
      throw UserError(path + ".tokens[" + std::to_string(k) + "]: token id " + std::to_string(token) +
                      " is outside the vocabulary [0, " + std::to_string(vocab_size) + ")");
    }
  }
  sequence.tokens.insert(sequence.tokens.end(), text.tokens.begin(), text.tokens.end());
  sequence.image_features.resize(sequence.tokens.size() * kImageFeatures, 0.0);
}

void append_image(const ImageChunk& image, const std::string& path, const Architecture& arch, InputSequence& sequence) {
  if (!arch.vision) {
    throw UserError(path + ": image chunks are not supported; this model reads encoded_text only");
  }
  const ImageGrid grid = read_image_chunk(image, path, arch.max_context);
  sequence.tokens.insert(sequence.tokens.end(), static_cast<std::size_t>(grid.tokens()), kImagePosition);
  sequence.image_features.insert(sequence.image_features.end(), grid.features.begin(), grid.features.end());
}

}  // namespace

InputSequence read_model_input(const ModelInput& input, const std::string& path, const Architecture& arch) {
  InputSequence sequence;
  for (std::size_t j = 0; j < input.chunks.size(); ++j) {
    const std::string where = chunk_path(path, j);
    const ModelInputChunk& chunk = input.chunks[j];
    if (const auto* text = std::get_if<EncodedTextChunk>(&chunk)) {
      append_text(*text, where, arch.vocab_size, sequence);
    } else if (const auto* image = std::get_if<ImageChunk>(&chunk)) {
      append_image(*image, where, arch, sequence);
    } else if (std::holds_alternative<ImageAssetPointerChunk>(chunk)) {
      throw UserError(
          where + ": image_asset_pointer chunks are not supported (tinker-local has no asset store); " +
          (arch.vision ? "send the image's bytes in an image chunk" : "this model reads encoded_text only"));
    } else {
      throw UserError(where + ": dmel chunks are not supported; this model reads " +
                      (arch.vision ? "encoded_text and image" : "encoded_text only"));
    }
  }
  return sequence;
}

}  // namespace tinker::local::model
