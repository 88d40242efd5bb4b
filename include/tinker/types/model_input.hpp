/// \file
/// ModelInput and its chunk kinds: text tokens, images, image references and audio
/// (`doc/protocol.md#core-types`).
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
enum class ImageFormat {
  png,   ///< PNG (`"png"`)
  jpeg,  ///< JPEG (`"jpeg"`)
};
/// The wire name: "png" or "jpeg".
const char* to_string(ImageFormat format) noexcept;

/// A run of token ids (`"type": "encoded_text"`).
class EncodedTextChunk {
 public:
  /// An empty run.
  EncodedTextChunk() = default;
  /// A run holding `tokens_`.
  explicit EncodedTextChunk(std::vector<TokenId> tokens_) : tokens(std::move(tokens_)) {}

  /// The token ids, in order.
  std::vector<TokenId> tokens;

  /// Length in tokens: the number of ids.
  std::int64_t length() const noexcept { return static_cast<std::int64_t>(tokens.size()); }
  /// Equal when every field is equal.
  friend bool operator==(const EncodedTextChunk&, const EncodedTextChunk&) = default;
};

/// Raw image bytes sent inline (`"type": "image"`, base64 on the JSON wire).
class ImageChunk {
 public:
  /// An empty PNG image.
  ImageChunk() = default;
  /// An image of `format_` holding the encoded bytes `data_`.
  ImageChunk(std::vector<std::uint8_t> data_, ImageFormat format_,
             std::optional<std::int64_t> expected_tokens_ = std::nullopt)
      : data(std::move(data_)), format(format_), expected_tokens(expected_tokens_) {}

  /// The encoded image file's bytes (not base64: the JSON codec encodes them).
  std::vector<std::uint8_t> data;
  /// How `data` is encoded.
  ImageFormat format = ImageFormat::png;
  /// Number of tokens the image occupies; required to compute the chunk's length. The server
  /// computes the true count and may refuse a request where they differ.
  std::optional<std::int64_t> expected_tokens;

  /// Equal when every field is equal.
  friend bool operator==(const ImageChunk&, const ImageChunk&) = default;
};

/// An image referenced by location (`"type": "image_asset_pointer"`). JSON only: the protobuf
/// form cannot carry it, so a forward_backward holding one fails before anything is sent.
class ImageAssetPointerChunk {
 public:
  /// A PNG at an empty location.
  ImageAssetPointerChunk() = default;
  /// The image of `format_` at `location_`.
  ImageAssetPointerChunk(std::string location_, ImageFormat format_,
                         std::optional<std::int64_t> expected_tokens_ = std::nullopt)
      : format(format_), location(std::move(location_)), expected_tokens(expected_tokens_) {}

  /// How the image is encoded.
  ImageFormat format = ImageFormat::png;
  /// Path or URL of the image asset, as the server understands it.
  std::string location;
  /// Number of tokens the image occupies; required to compute the chunk's length.
  std::optional<std::int64_t> expected_tokens;

  /// Equal when every field is equal.
  friend bool operator==(const ImageAssetPointerChunk&, const ImageAssetPointerChunk&) = default;
};

/// Serialized "TensorContainer" bytes of audio (DMel) tokens (`"type": "dmel"`).
class DmelChunk {
 public:
  /// An empty chunk (its length() throws: there is no header).
  DmelChunk() = default;
  /// A chunk holding the serialized TensorContainer `dmel_`.
  explicit DmelChunk(std::vector<std::uint8_t> dmel_) : dmel(std::move(dmel_)) {}

  /// The serialized TensorContainer bytes (not base64: the JSON codec encodes them).
  std::vector<std::uint8_t> dmel;

  /// Dimension 0 of the embedded tensor, read from the TensorContainer header.
  /// Throws `tinker::error` (invalid_argument) if the header is malformed.
  std::int64_t length() const;
  /// Equal when every field is equal.
  friend bool operator==(const DmelChunk&, const DmelChunk&) = default;
};

/// One chunk of a ModelInput: the tagged union of the four kinds (`type` on the wire).
using ModelInputChunk = std::variant<EncodedTextChunk, ImageChunk, ImageAssetPointerChunk, DmelChunk>;

/// Length in tokens of one chunk. Throws `tinker::error` (invalid_argument) for an image chunk
/// without `expected_tokens` or a malformed dmel header.
std::int64_t chunk_length(const ModelInputChunk& chunk);

/// An ordered concatenation of chunks: the input of one sequence.
class ModelInput {
 public:
  /// An empty input (no chunks).
  ModelInput() = default;
  /// The concatenation of `chunks_`.
  explicit ModelInput(std::vector<ModelInputChunk> chunks_) : chunks(std::move(chunks_)) {}

  /// One encoded_text chunk holding `tokens`.
  static ModelInput from_ints(std::vector<TokenId> tokens);
  /// One encoded_text chunk holding a copy of `tokens`.
  static ModelInput from_ints(std::span<const TokenId> tokens);

  /// All tokens, in order. Throws `tinker::error` (invalid_argument) if a chunk is not text.
  std::vector<TokenId> to_ints() const;
  /// Sum of the chunk lengths, in tokens. Throws `tinker::error` (invalid_argument) as
  /// chunk_length() does.
  std::int64_t length() const;
  /// True when there are no chunks.
  bool empty() const noexcept { return chunks.empty(); }

  /// Appends `chunk`; returns `*this` for chaining.
  ModelInput& append(ModelInputChunk chunk);
  /// Appends a new single-token text chunk (as the Python SDK does); returns `*this`.
  ModelInput& append_int(TokenId token);

  /// The chunks, in order.
  std::vector<ModelInputChunk> chunks;

  /// Equal when every field is equal.
  friend bool operator==(const ModelInput&, const ModelInput&) = default;
};

TINKER_DECLARE_PRINTABLE(ModelInput);

}  // namespace tinker
