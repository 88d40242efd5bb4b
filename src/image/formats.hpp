// What image_file.cpp dispatches to: one reader per encoding (png.cpp, jpeg.cpp, webp.cpp), and
// the byte-reading and limit helpers they share. Internal to the image layer.
#pragma once

#include "image/image_file.hpp"

#include <tinker/error.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace tinker::image::detail {

/// Throws tinker::error (invalid_argument) with `message`.
[[noreturn]] inline void fail(std::string message) {
  throw error(errc::invalid_argument, std::move(message));
}

/// The big-endian 16/32-bit integer at `data[pos]`; the caller has checked the bounds.
inline std::uint32_t read_be16(std::span<const std::uint8_t> data, std::size_t pos) {
  return static_cast<std::uint32_t>(data[pos]) << 8 | data[pos + 1];
}
inline std::uint32_t read_be32(std::span<const std::uint8_t> data, std::size_t pos) {
  return read_be16(data, pos) << 16 | read_be16(data, pos + 2);
}
/// The little-endian 16/24/32-bit integer at `data[pos]`; the caller has checked the bounds.
inline std::uint32_t read_le16(std::span<const std::uint8_t> data, std::size_t pos) {
  return static_cast<std::uint32_t>(data[pos + 1]) << 8 | data[pos];
}
inline std::uint32_t read_le24(std::span<const std::uint8_t> data, std::size_t pos) {
  return static_cast<std::uint32_t>(data[pos + 2]) << 16 | read_le16(data, pos);
}
inline std::uint32_t read_le32(std::span<const std::uint8_t> data, std::size_t pos) {
  return static_cast<std::uint32_t>(data[pos + 3]) << 24 | read_le24(data, pos);
}

/// An RGB image of `info`'s size with its pixel buffer allocated, after checking the size against
/// `max_pixels`: the one place the readers allocate pixels, so no header can make them allocate
/// more than the caller allows.
RgbImage allocate_rgb(const FileInfo& info, std::uint64_t max_pixels);

/// Each reader's `inspect_*` walks the whole container (chunks, markers) checking every length
/// against the buffer, and throws for anything malformed or truncated; `decode_*` is given bytes
/// its `inspect_*` accepted.
FileInfo inspect_png(std::span<const std::uint8_t> data);
FileInfo inspect_jpeg(std::span<const std::uint8_t> data);
FileInfo inspect_webp(std::span<const std::uint8_t> data);
RgbImage decode_png(std::span<const std::uint8_t> data, const FileInfo& info, std::uint64_t max_pixels);
RgbImage decode_jpeg(std::span<const std::uint8_t> data, const FileInfo& info, std::uint64_t max_pixels);
RgbImage decode_webp(std::span<const std::uint8_t> data, const FileInfo& info, std::uint64_t max_pixels);

}  // namespace tinker::image::detail
