// ModelInput and its chunk kinds (spec 9.1).
#pragma once

#include <tinker/types/common.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace tinker {

/// Image encodings accepted in image chunks.
enum class ImageFormat { png, jpeg };
const char* to_string(ImageFormat format) noexcept;

/// A run of token ids (`"type": "encoded_text"`).
class EncodedTextChunk {
 public:
  EncodedTextChunk() = default;
  explicit EncodedTextChunk(std::vector<TokenId> tokens_) : tokens(std::move(tokens_)) {}

  std::vector<TokenId> tokens;

  std::int64_t length() const noexcept { return static_cast<std::int64_t>(tokens.size()); }
  friend bool operator==(const EncodedTextChunk&, const EncodedTextChunk&) = default;
};

/// Raw image bytes sent inline (`"type": "image"`, base64 on the JSON wire).
class ImageChunk {
 public:
  ImageChunk() = default;
  ImageChunk(std::vector<std::uint8_t> data_, ImageFormat format_,
             std::optional<std::int64_t> expected_tokens_ = std::nullopt)
      : data(std::move(data_)), format(format_), expected_tokens(expected_tokens_) {}

  std::vector<std::uint8_t> data;
  ImageFormat format = ImageFormat::png;
  /// Number of tokens the image occupies; required to compute the chunk's length.
  std::optional<std::int64_t> expected_tokens;

  friend bool operator==(const ImageChunk&, const ImageChunk&) = default;
};

/// An image referenced by location (`"type": "image_asset_pointer"`); JSON only (spec 9.1).
class ImageAssetPointerChunk {
 public:
  ImageAssetPointerChunk() = default;
  ImageAssetPointerChunk(std::string location_, ImageFormat format_,
                         std::optional<std::int64_t> expected_tokens_ = std::nullopt)
      : format(format_), location(std::move(location_)), expected_tokens(expected_tokens_) {}

  ImageFormat format = ImageFormat::png;
  std::string location;
  std::optional<std::int64_t> expected_tokens;

  friend bool operator==(const ImageAssetPointerChunk&, const ImageAssetPointerChunk&) = default;
};

/// Serialized "TensorContainer" bytes of audio (DMel) tokens (`"type": "dmel"`).
class DmelChunk {
 public:
  DmelChunk() = default;
  explicit DmelChunk(std::vector<std::uint8_t> dmel_) : dmel(std::move(dmel_)) {}

  std::vector<std::uint8_t> dmel;

  /// Dimension 0 of the embedded tensor, read from the TensorContainer header.
  /// Throws `tinker::error` (invalid_argument) if the header is malformed.
  std::int64_t length() const;
  friend bool operator==(const DmelChunk&, const DmelChunk&) = default;
};

using ModelInputChunk = std::variant<EncodedTextChunk, ImageChunk, ImageAssetPointerChunk, DmelChunk>;

/// Length in tokens of one chunk. Throws `tinker::error` (invalid_argument) for an image chunk
/// without `expected_tokens` or a malformed dmel header.
std::int64_t chunk_length(const ModelInputChunk& chunk);

/// An ordered concatenation of chunks: the input of one sequence.
class ModelInput {
 public:
  ModelInput() = default;
  explicit ModelInput(std::vector<ModelInputChunk> chunks_) : chunks(std::move(chunks_)) {}

  /// One encoded_text chunk holding `tokens`.
  static ModelInput from_ints(std::vector<TokenId> tokens);
  static ModelInput from_ints(std::span<const TokenId> tokens);

  /// All tokens, in order. Throws `tinker::error` (invalid_argument) if a chunk is not text.
  std::vector<TokenId> to_ints() const;
  /// Sum of the chunk lengths.
  std::int64_t length() const;
  bool empty() const noexcept { return chunks.empty(); }

  ModelInput& append(ModelInputChunk chunk);
  /// Appends a new single-token text chunk (as the Python SDK does).
  ModelInput& append_int(TokenId token);

  std::vector<ModelInputChunk> chunks;

  friend bool operator==(const ModelInput&, const ModelInput&) = default;
};

TINKER_DECLARE_PRINTABLE(ModelInput);

}  // namespace tinker
