// What the tiny model reads at each position of a model input: a token id, or one cell of an
// image (vision models only). Text and images become one sequence of positions, in chunk order.
#pragma once

#include "programs/local/model/tiny_lm.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace tinker::local::model {

/// Features of one image cell: mean red, green and blue in [-1, 1], the cell's row and column
/// centre in [-1, 1], and a constant 1 (what tells an image position from a text one).
inline constexpr int kImageFeatures = 6;

/// The token id standing at an image position of an InputSequence (never a real id).
inline constexpr TokenId kImagePosition = -1;

/// A model input resolved position by position.
struct InputSequence {
  std::vector<TokenId> tokens;         ///< N entries: the id, or kImagePosition
  std::vector<double> image_features;  ///< N * kImageFeatures, zero at text positions

  std::size_t size() const noexcept { return tokens.size(); }
  bool is_image(std::size_t position) const noexcept { return tokens[position] == kImagePosition; }
  const double* features(std::size_t position) const noexcept {
    return image_features.data() + position * kImageFeatures;
  }
};

/// Reads `input`, named `path` in errors ("data[3].model_input", "prompt"), for a model of
/// `arch`: encoded_text ids must lie in [0, vocab); image chunks are read by read_image_chunk
/// (images.hpp) when `arch.vision`, else refused; image_asset_pointer and dmel chunks are
/// refused. Throws UserError naming the chunk ("prompt.chunks[2]: ...").
InputSequence read_model_input(const ModelInput& input, const std::string& path, const Architecture& arch);

}  // namespace tinker::local::model
