// Images as the vision model reads them. An image chunk is checked as the service checks it (the
// bytes a readable PNG or JPEG of the format the chunk names, `expected_tokens` equal to the
// count of Qwen-VL's image processor for the image's size), then average-pooled to one cell per
// token: a grid of rows x cols cells shaped like the image. Each cell's features (inputs.hpp) are
// what the model projects into its embedding space, so a deterministic function of the pixels
// that training can learn to read.
#pragma once

#include "programs/local/model/inputs.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tinker::image {
struct RgbImage;
}

namespace tinker::local::model {

/// One image pooled to its token grid.
struct ImageGrid {
  std::uint32_t width = 0;   ///< of the image, in pixels
  std::uint32_t height = 0;  ///< of the image, in pixels
  int rows = 0;              ///< rows * cols = the image's token count
  int cols = 0;
  std::vector<double> features;  ///< rows * cols * kImageFeatures, cells row-major

  std::int64_t tokens() const noexcept { return static_cast<std::int64_t>(rows) * cols; }
};

/// Checks `chunk`, named `path` in errors ("data[0].model_input.chunks[3]"), and pools it. Throws
/// UserError when the bytes are not a readable PNG or JPEG image, are not of `chunk.format`, when
/// `expected_tokens` is missing or differs from the image's count ("Expected 64 tokens, got 70 from
/// image", the service's words), or when the image takes more than `max_tokens` tokens (checked
/// before any pixel is decoded).
ImageGrid read_image_chunk(const ImageChunk& chunk, const std::string& path, std::int64_t max_tokens);

/// The grid of `tokens` cells for an image of `width` x `height`: rows * cols = tokens, with
/// cols / rows as close as any factorisation gets to width / height (fewer rows on a tie).
/// Qwen's count is the product of its resized sides over 32, so this finds its grid unless another
/// factorisation lies closer to the image's own shape than the rounded one does.
void token_grid(std::int64_t tokens, std::uint32_t width, std::uint32_t height, int& rows, int& cols);

/// Average-pools `image` to `rows` x `cols` cells (a cell smaller than a pixel takes the pixel it
/// falls on) and writes their features.
ImageGrid pool_image(const image::RgbImage& image, int rows, int cols);

}  // namespace tinker::local::model
