// Image files (src/image): tinker::image::inspect and decode_rgb on PNG, JPEG and WebP bytes, which
// reach them from users' files, data: URIs and tinker-local's requests. Besides the sanitizers:
// failures are invalid_argument; what decodes has the size inspect() read, and never more pixels
// than allowed; a small decoded image encodes as PNG and decodes back to the same pixels.
#include "fuzz_support.hpp"

#include "image/image_file.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace {

// Enough for the seeds and what the fuzzer grows from them, small enough that a header announcing
// a huge image is refused rather than allocated (the limit is what is under test there).
constexpr std::uint64_t fuzz_max_pixels = std::uint64_t{1} << 22;
constexpr std::uint64_t fuzz_round_trip_pixels = std::uint64_t{1} << 16;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tinker;
  const std::span<const std::uint8_t> bytes(data, size);
  image::FileInfo info;
  try {
    info = image::inspect(bytes);
  } catch (const error& e) {
    if (e.code() != errc::invalid_argument) fuzz::property_failed("inspect threw a code other than invalid_argument");
    return 0;
  }
  if (info.width == 0 || info.height == 0) fuzz::property_failed("inspect accepted a zero side");
  image::RgbImage decoded;
  try {
    decoded = image::decode_rgb(bytes, fuzz_max_pixels);
  } catch (const error& e) {
    if (e.code() != errc::invalid_argument)
      fuzz::property_failed("decode_rgb threw a code other than invalid_argument");
    return 0;
  }
  if (decoded.width != info.width || decoded.height != info.height) {
    fuzz::property_failed("decode_rgb gave another size than inspect");
  }
  const std::uint64_t pixels = std::uint64_t{decoded.width} * decoded.height;
  if (pixels > fuzz_max_pixels) fuzz::property_failed("decode_rgb decoded more pixels than allowed");
  if (decoded.rgb.size() != pixels * 3) fuzz::property_failed("decode_rgb's buffer does not match its size");
  if (pixels <= fuzz_round_trip_pixels && image::decode_rgb(image::encode_png(decoded)).rgb != decoded.rgb) {
    fuzz::property_failed("encode_png + decode_rgb changed the pixels");
  }
  return 0;
}
