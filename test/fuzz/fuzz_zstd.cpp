// zstd request and response bodies (tinker::zstd_decompress) with the size limit: the first byte
// chooses the limit (up to 64 KiB, so the fuzzer can reach it), the rest is the frame. Besides the
// sanitizers: the output never exceeds the limit, failures are decode_error, and what decompresses
// compresses and decompresses back to itself.
#include "fuzz_support.hpp"

#include <tinker/codec.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tinker;
  if (size == 0) return 0;
  const std::size_t limit = std::size_t{data[0]} << 8;  // 0, 256, ..., 65280 bytes
  const std::string_view frame = fuzz::as_text(data + 1, size - 1);
  std::string plain;
  try {
    plain = zstd_decompress(frame, limit);
  } catch (const error& e) {
    if (e.code() != errc::decode_error) fuzz::property_failed("zstd_decompress threw a code other than decode_error");
    return 0;
  }
  if (plain.size() > limit) fuzz::property_failed("zstd_decompress returned more than the limit");
  if (zstd_decompress(zstd_compress(plain, 1), limit) != plain) fuzz::property_failed("zstd round trip differs");
  return 0;
}
