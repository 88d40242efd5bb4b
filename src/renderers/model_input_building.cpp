// Building ModelInputs message by message (renderers/model_input_building.hpp).
#include "renderers/model_input_building.hpp"

#include <algorithm>
#include <variant>

namespace tinker::renderers::detail {

void append_tokens(ModelInput& input, std::span<const TokenId> tokens) {
  if (tokens.empty()) return;
  if (!input.chunks.empty()) {
    if (auto* text = std::get_if<EncodedTextChunk>(&input.chunks.back())) {
      text->tokens.insert(text->tokens.end(), tokens.begin(), tokens.end());
      return;
    }
  }
  input.chunks.emplace_back(EncodedTextChunk(std::vector<TokenId>(tokens.begin(), tokens.end())));
}

void append_chunk(ModelInput& input, const ModelInputChunk& chunk) {
  if (const auto* text = std::get_if<EncodedTextChunk>(&chunk)) {
    append_tokens(input, text->tokens);
  } else {
    input.chunks.push_back(chunk);
  }
}

std::optional<std::size_t> prefix_positions(const ModelInput& prefix, const ModelInput& full) {
  if (prefix.chunks.size() > full.chunks.size()) return std::nullopt;
  std::size_t positions = 0;
  for (std::size_t i = 0; i < prefix.chunks.size(); ++i) {
    const auto* prefix_text = std::get_if<EncodedTextChunk>(&prefix.chunks[i]);
    const auto* full_text = std::get_if<EncodedTextChunk>(&full.chunks[i]);
    const bool last = i + 1 == prefix.chunks.size();
    if (last && prefix_text != nullptr && full_text != nullptr) {
      const auto& head = prefix_text->tokens;
      if (head.size() > full_text->tokens.size() || !std::equal(head.begin(), head.end(), full_text->tokens.begin())) {
        return std::nullopt;
      }
    } else if (prefix.chunks[i] != full.chunks[i]) {
      return std::nullopt;
    }
    positions += static_cast<std::size_t>(chunk_length(prefix.chunks[i]));
  }
  return positions;
}

}  // namespace tinker::renderers::detail
