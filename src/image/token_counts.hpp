// How many tokens an image of a given size takes in each vision family: the rules of the
// models' own image processors, computed from the size alone.
#pragma once

#include <cstdint>

namespace tinker::image {

/// Qwen3-VL, Qwen3.5, 3.6, 3.8: smart_resize (factor 32, 65,536 to 16,777,216 pixels), 16-pixel
/// patches, 2x2 merge. Throws tinker::error (invalid_argument) for a zero side or an aspect ratio
/// over 200.
std::int64_t qwen_vl_tokens(std::uint32_t width, std::uint32_t height);

/// Kimi K2.5 and K2.6 (their image processor's get_resize_config). Throws tinker::error
/// (invalid_argument) for a zero side.
std::int64_t kimi_k25_tokens(std::uint32_t width, std::uint32_t height);

}  // namespace tinker::image
