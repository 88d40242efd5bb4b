#include <tinker/error.hpp>
#include <tinker/types/model_input.hpp>

#include <string>

namespace tinker {
namespace {

// Reads one unsigned LEB128 varint; false if truncated or longer than 64 bits.
bool read_varint(const std::vector<std::uint8_t>& bytes, std::size_t& pos, std::uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && pos < bytes.size(); shift += 7) {
    const std::uint8_t byte = bytes[pos++];
    value |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

}  // namespace

std::int64_t DmelChunk::length() const {
  // TensorContainer header: [0xFE constant marker] dtype(0..7) ndim shape[0..ndim); length = shape[0].
  std::size_t pos = 0;
  if (pos < dmel.size() && dmel[pos] == 0xFE) ++pos;
  if (pos >= dmel.size() || dmel[pos] > 7) throw error(errc::invalid_argument, "dmel: invalid TensorContainer dtype");
  ++pos;
  std::uint64_t ndim = 0;
  std::uint64_t dim0 = 0;
  if (!read_varint(dmel, pos, ndim) || ndim == 0 || !read_varint(dmel, pos, dim0) ||
      dim0 > static_cast<std::uint64_t>(INT64_MAX)) {
    throw error(errc::invalid_argument, "dmel: invalid TensorContainer shape");
  }
  return static_cast<std::int64_t>(dim0);
}

std::int64_t chunk_length(const ModelInputChunk& chunk) {
  struct Visitor {
    std::int64_t operator()(const EncodedTextChunk& c) const { return c.length(); }
    std::int64_t operator()(const DmelChunk& c) const { return c.length(); }
    std::int64_t operator()(const ImageChunk& c) const { return image(c.expected_tokens); }
    std::int64_t operator()(const ImageAssetPointerChunk& c) const { return image(c.expected_tokens); }
    static std::int64_t image(const std::optional<std::int64_t>& expected_tokens) {
      if (!expected_tokens)
        throw error(errc::invalid_argument, "image chunk: expected_tokens is needed for its length");
      return *expected_tokens;
    }
  };
  return std::visit(Visitor{}, chunk);
}

ModelInput ModelInput::from_ints(std::vector<TokenId> tokens) {
  ModelInput input;
  input.chunks.emplace_back(EncodedTextChunk(std::move(tokens)));
  return input;
}

ModelInput ModelInput::from_ints(std::span<const TokenId> tokens) {
  return from_ints(std::vector<TokenId>(tokens.begin(), tokens.end()));
}

std::vector<TokenId> ModelInput::to_ints() const {
  std::vector<TokenId> tokens;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const auto* text = std::get_if<EncodedTextChunk>(&chunks[i]);
    if (text == nullptr) {
      throw error(errc::invalid_argument, "chunks[" + std::to_string(i) + "]: to_ints() needs text chunks only");
    }
    tokens.insert(tokens.end(), text->tokens.begin(), text->tokens.end());
  }
  return tokens;
}

std::int64_t ModelInput::length() const {
  std::int64_t total = 0;
  for (const auto& chunk : chunks) total += chunk_length(chunk);
  return total;
}

ModelInput& ModelInput::append(ModelInputChunk chunk) {
  chunks.push_back(std::move(chunk));
  return *this;
}

ModelInput& ModelInput::append_int(TokenId token) {
  chunks.emplace_back(EncodedTextChunk(std::vector<TokenId>{token}));
  return *this;
}

}  // namespace tinker
