// Image chunks: the checks the service makes, and pooling to the token grid (images.hpp).
#include "programs/local/model/images.hpp"

#include "image/image_file.hpp"
#include "image/token_counts.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

namespace tinker::local::model {
namespace {

std::string error_text(const tinker::error& e) {
  return e.diag().message.empty() ? std::string(e.what()) : e.diag().message;
}

const char* format_name(image::FileFormat format) {
  switch (format) {
    case image::FileFormat::png: return "PNG";
    case image::FileFormat::jpeg: return "JPEG";
    case image::FileFormat::webp: break;
  }
  return "WebP";
}

std::string size_text(const image::FileInfo& info) {
  return std::to_string(info.width) + "x" + std::to_string(info.height);
}

// The header of `chunk`, checked to be a PNG or JPEG file of the format the chunk names.
image::FileInfo checked_header(const ImageChunk& chunk, const std::string& path) {
  image::FileInfo info;
  try {
    info = image::inspect(std::span<const std::uint8_t>(chunk.data));
  } catch (const tinker::error& e) {
    throw UserError(path + ": not a readable PNG or JPEG image: " + error_text(e));
  }
  if (info.format == image::FileFormat::webp) {
    throw UserError(path + ": the bytes are a WebP image; image chunks take PNG or JPEG (re-encode it)");
  }
  const bool png = info.format == image::FileFormat::png;
  if (png != (chunk.format == ImageFormat::png)) {
    throw UserError(path + ": format is \"" + to_string(chunk.format) + "\" but the bytes are a " +
                    format_name(info.format) + " image");
  }
  return info;
}

// The image's token count, checked against expected_tokens and the model's context.
std::int64_t checked_token_count(const ImageChunk& chunk, const image::FileInfo& info, const std::string& path,
                                 std::int64_t max_tokens) {
  std::int64_t tokens = 0;
  try {
    tokens = image::qwen_vl_tokens(info.width, info.height);
  } catch (const tinker::error& e) {
    throw UserError(path + ": " + error_text(e));
  }
  const std::string image = "the image (" + size_text(info) + ")";
  if (!chunk.expected_tokens) {
    throw UserError(path + ": expected_tokens is missing; " + image + " takes " + std::to_string(tokens) +
                    " tokens by Qwen-VL's rule");
  }
  if (*chunk.expected_tokens != tokens) {
    // The service's own words first ("Expected N tokens, got M from image"), then what to do.
    throw UserError(path + ": Expected " + std::to_string(*chunk.expected_tokens) + " tokens, got " +
                    std::to_string(tokens) + " from image: expected_tokens is " +
                    std::to_string(*chunk.expected_tokens) + " but " + image + " takes " + std::to_string(tokens) +
                    " tokens by Qwen-VL's rule");
  }
  if (tokens > max_tokens) {
    throw UserError(path + ": " + image + " takes " + std::to_string(tokens) +
                    " tokens, more than the model's context of " + std::to_string(max_tokens));
  }
  return tokens;
}

// [begin, end) of cell `index` of `cells` over `extent` pixels; never empty.
std::pair<std::uint32_t, std::uint32_t> cell_span(int index, int cells, std::uint32_t extent) {
  const auto begin = static_cast<std::uint32_t>(static_cast<std::uint64_t>(index) * extent / cells);
  auto end = static_cast<std::uint32_t>(static_cast<std::uint64_t>(index + 1) * extent / cells);
  end = std::max(end, begin + 1);
  return {std::min(begin, extent - 1), std::min(end, extent)};
}

// Where a cell's centre lies along an axis of `cells` cells, in [-1, 1].
double centre(int index, int cells) {
  return 2.0 * (index + 0.5) / cells - 1.0;
}

}  // namespace

void token_grid(std::int64_t tokens, std::uint32_t width, std::uint32_t height, int& rows, int& cols) {
  if (tokens < 1 || tokens > std::numeric_limits<int>::max() || width == 0 || height == 0) {
    throw std::invalid_argument("token_grid: a positive token count and image size are required");
  }
  const double aspect = std::log(static_cast<double>(width) / height);
  double best = std::numeric_limits<double>::infinity();
  for (std::int64_t r = 1; r <= tokens; ++r) {
    if (tokens % r != 0) continue;
    const std::int64_t c = tokens / r;
    const double mismatch = std::abs(std::log(static_cast<double>(c) / static_cast<double>(r)) - aspect);
    if (mismatch < best) {
      best = mismatch;
      rows = static_cast<int>(r);
      cols = static_cast<int>(c);
    }
  }
}

ImageGrid pool_image(const image::RgbImage& image, int rows, int cols) {
  if (image.width == 0 || image.height == 0 || rows < 1 || cols < 1 ||
      image.rgb.size() != static_cast<std::size_t>(image.width) * image.height * 3) {
    throw std::invalid_argument("pool_image: an image with pixels and a grid of at least one cell are required");
  }
  ImageGrid grid;
  grid.width = image.width;
  grid.height = image.height;
  grid.rows = rows;
  grid.cols = cols;
  grid.features.reserve(static_cast<std::size_t>(rows) * cols * kImageFeatures);
  for (int r = 0; r < rows; ++r) {
    const auto [y0, y1] = cell_span(r, rows, image.height);
    for (int c = 0; c < cols; ++c) {
      const auto [x0, x1] = cell_span(c, cols, image.width);
      double sum[3] = {0.0, 0.0, 0.0};
      for (std::uint32_t y = y0; y < y1; ++y) {
        const std::uint8_t* pixel = image.rgb.data() + (static_cast<std::size_t>(y) * image.width + x0) * 3;
        for (std::uint32_t x = x0; x < x1; ++x, pixel += 3) {
          for (int channel = 0; channel < 3; ++channel) sum[channel] += pixel[channel];
        }
      }
      const double count = static_cast<double>(y1 - y0) * static_cast<double>(x1 - x0);
      for (const double channel : sum) grid.features.push_back(2.0 * channel / (255.0 * count) - 1.0);
      grid.features.push_back(centre(r, rows));
      grid.features.push_back(centre(c, cols));
      grid.features.push_back(1.0);
    }
  }
  return grid;
}

ImageGrid read_image_chunk(const ImageChunk& chunk, const std::string& path, std::int64_t max_tokens) {
  const image::FileInfo info = checked_header(chunk, path);
  const std::int64_t tokens = checked_token_count(chunk, info, path, max_tokens);
  image::RgbImage pixels;
  try {
    pixels = image::decode_rgb(std::span<const std::uint8_t>(chunk.data));
  } catch (const tinker::error& e) {
    throw UserError(path + ": not a readable " + std::string(format_name(info.format)) + " image: " + error_text(e));
  }
  int rows = 0;
  int cols = 0;
  token_grid(tokens, pixels.width, pixels.height, rows, cols);
  return pool_image(pixels, rows, cols);
}

}  // namespace tinker::local::model
