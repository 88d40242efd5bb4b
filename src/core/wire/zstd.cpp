// zstd framing of protobuf request bodies (`Content-Encoding: zstd`, doc/protocol.md#protobuf).
#include <tinker/codec.hpp>
#include <tinker/error.hpp>

#include <zstd.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <string>

namespace tinker {
namespace {

// Declared sizes up to this are allocated up front whatever the compression ratio.
constexpr unsigned long long kAlwaysPreallocate = 8ULL << 20;

struct DCtxDeleter {
  void operator()(ZSTD_DCtx* ctx) const noexcept { ZSTD_freeDCtx(ctx); }
};
using DCtxPtr = std::unique_ptr<ZSTD_DCtx, DCtxDeleter>;

[[noreturn]] void corrupt(std::string_view what) {
  throw error(errc::decode_error, "zstd frame: " + std::string(what));
}

[[noreturn]] void too_large(std::size_t max_size) {
  throw error(errc::decode_error,
              "zstd frame: decompresses to more than the limit of " + std::to_string(max_size) + " bytes");
}

DCtxPtr make_dctx() {
  DCtxPtr ctx(ZSTD_createDCtx());
  if (!ctx) throw std::bad_alloc();
  return ctx;
}

// The common case: one frame whose header states its size (what ZSTD_compress and the Python
// zstandard package write). Decompress straight into a buffer of exactly that size.
std::string decompress_known_size(std::string_view frame, std::size_t size) {
  std::string out(size, '\0');
  const DCtxPtr ctx = make_dctx();
  const std::size_t n = ZSTD_decompressDCtx(ctx.get(), out.data(), out.size(), frame.data(), frame.size());
  if (ZSTD_isError(n)) corrupt(ZSTD_getErrorName(n));
  if (n != size) corrupt("content size " + std::to_string(n) + " differs from the header's " + std::to_string(size));
  return out;
}

// Frames written by a streaming compressor have no content size (and a body may hold several
// frames): grow the output as needed, never beyond max_size. The buffer may reach max_size + 1
// so that "exactly max_size" and "more than max_size" are told apart without a second probe.
std::string decompress_streaming(std::string_view frame, std::size_t max_size) {
  const std::size_t limit = max_size == std::numeric_limits<std::size_t>::max() ? max_size : max_size + 1;
  const DCtxPtr ctx = make_dctx();
  std::string out(std::min(limit, std::max<std::size_t>(ZSTD_DStreamOutSize(), frame.size() * 4)), '\0');
  ZSTD_inBuffer in{frame.data(), frame.size(), 0};
  std::size_t produced = 0;
  for (;;) {
    if (produced == out.size()) {
      if (out.size() >= limit) too_large(max_size);
      out.resize(out.size() > limit / 2 ? limit : out.size() * 2);
    }
    ZSTD_outBuffer buffer{out.data(), out.size(), produced};
    const std::size_t hint = ZSTD_decompressStream(ctx.get(), &buffer, &in);
    if (ZSTD_isError(hint)) corrupt(ZSTD_getErrorName(hint));
    produced = buffer.pos;
    if (produced > max_size) too_large(max_size);
    const bool input_done = in.pos == in.size;
    if (hint == 0 && input_done) break;  // the last frame is complete
    // Room left for output, yet the frame wants more input than there is: cut short.
    if (input_done && produced < out.size()) corrupt("truncated (the frame is incomplete)");
  }
  out.resize(produced);
  return out;
}

}  // namespace

std::string zstd_compress(std::string_view data, int level) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  const std::size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), level);
  if (ZSTD_isError(n)) throw error(errc::invalid_argument, std::string("zstd_compress: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

std::string zstd_decompress(std::string_view frame, std::size_t max_size) {
  if (frame.empty()) corrupt("empty input");
  const unsigned long long declared = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR) corrupt("not a zstd frame (bad magic number or header)");
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared > max_size) {
    corrupt("the header declares " + std::to_string(declared) + " bytes, more than the limit of " +
            std::to_string(max_size) + " bytes");
  }
  const std::size_t frame_size = ZSTD_findFrameCompressedSize(frame.data(), frame.size());
  if (ZSTD_isError(frame_size)) corrupt(std::string("corrupt or truncated: ") + ZSTD_getErrorName(frame_size));
  // Trust the declared size for the up-front allocation only when it is plausible for this many
  // compressed bytes; a tiny frame claiming max_size bytes goes the streaming way, which grows
  // with what actually comes out.
  const bool plausible = declared <= std::max<unsigned long long>(kAlwaysPreallocate, frame.size() * 64ULL);
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN && frame_size == frame.size() && plausible) {
    return decompress_known_size(frame, static_cast<std::size_t>(declared));
  }
  return decompress_streaming(frame, max_size);
}

}  // namespace tinker
