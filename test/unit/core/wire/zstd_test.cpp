// zstd framing of protobuf bodies: round trips, frames without a content size (streaming
// writers), several frames, the decompression-bomb limit and corrupt input.
#include <tinker/codec.hpp>

#include "unit/core/wire/proto_test_util.hpp"

#include <gtest/gtest.h>
#include <zstd.h>

#include <cstdint>
#include <random>
#include <string>

namespace tinker {
namespace {

using test::expect_error;

std::string random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(rng() & 0xFF);
  return out;
}

std::string compressible_bytes(std::size_t n) {
  std::string out;
  out.reserve(n);
  for (std::size_t i = 0; out.size() < n; ++i) out += "token " + std::to_string(i % 977) + " ";
  out.resize(n);
  return out;
}

// A frame as a streaming compressor writes it: no content size in the header.
std::string streaming_frame(std::string_view data) {
  ZSTD_CCtx* ctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_contentSizeFlag, 0);
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_checksumFlag, 1);
  std::string out(ZSTD_compressBound(data.size()) + 64, '\0');
  ZSTD_outBuffer output{out.data(), out.size(), 0};
  ZSTD_inBuffer input{data.data(), data.size(), 0};
  std::size_t remaining = 0;
  do {
    remaining = ZSTD_compressStream2(ctx, &output, &input, ZSTD_e_end);
  } while (!ZSTD_isError(remaining) && remaining != 0);
  ZSTD_freeCCtx(ctx);
  EXPECT_FALSE(ZSTD_isError(remaining));
  out.resize(output.pos);
  EXPECT_EQ(ZSTD_getFrameContentSize(out.data(), out.size()), ZSTD_CONTENTSIZE_UNKNOWN);
  return out;
}

TEST(Zstd, RoundTrips) {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{3} << 20}) {
    for (const std::string& data : {random_bytes(n, 7), compressible_bytes(n)}) {
      for (int level : {1, 3, 19}) {
        if (level == 19 && n > 10000) continue;  // slow, and says nothing new
        const std::string frame = zstd_compress(data, level);
        EXPECT_EQ(zstd_decompress(frame, data.size()), data) << "n=" << n << " level=" << level;
      }
    }
  }
}

TEST(Zstd, CompressesRealisticPayloads) {
  const std::string data = compressible_bytes(1 << 20);
  EXPECT_LT(zstd_compress(data).size(), data.size() / 4);
}

TEST(Zstd, FramesWithoutContentSize) {
  for (std::size_t n : {std::size_t{0}, std::size_t{5}, std::size_t{200000}, std::size_t{5} << 20}) {
    const std::string data = compressible_bytes(n);
    EXPECT_EQ(zstd_decompress(streaming_frame(data), n), data) << n;
  }
  const std::string random = random_bytes(300000, 3);
  EXPECT_EQ(zstd_decompress(streaming_frame(random), random.size()), random);
}

TEST(Zstd, SeveralFramesAreConcatenated) {
  const std::string a = compressible_bytes(70000);
  const std::string b = random_bytes(1234, 9);
  EXPECT_EQ(zstd_decompress(zstd_compress(a) + zstd_compress(b), 1 << 20), a + b);
  EXPECT_EQ(zstd_decompress(streaming_frame(a) + zstd_compress(b), 1 << 20), a + b);
  expect_error(errc::decode_error, "limit",
               [&] { (void)zstd_decompress(zstd_compress(a) + zstd_compress(b), a.size()); });
}

TEST(Zstd, LimitIsInclusive) {
  const std::string data = compressible_bytes(100000);
  for (const std::string& frame : {zstd_compress(data), streaming_frame(data)}) {
    EXPECT_EQ(zstd_decompress(frame, data.size()), data);
    expect_error(errc::decode_error, "limit of 99999 bytes", [&] { (void)zstd_decompress(frame, data.size() - 1); });
  }
  EXPECT_EQ(zstd_decompress(zstd_compress(""), 0), "");
}

TEST(Zstd, DecompressionBombsAreRefusedEarly) {
  const std::string zeros(std::size_t{64} << 20, '\0');  // 64 MiB -> about 2 KiB
  const std::string declared = zstd_compress(zeros, 1);
  const std::string undeclared = streaming_frame(zeros);
  ASSERT_LT(declared.size(), 64U << 10);
  ASSERT_LT(undeclared.size(), 64U << 10);
  expect_error(errc::decode_error, "limit of 1048576 bytes", [&] { (void)zstd_decompress(declared, 1 << 20); });
  expect_error(errc::decode_error, "limit of 1048576 bytes", [&] { (void)zstd_decompress(undeclared, 1 << 20); });
}

TEST(Zstd, HighlyCompressibleFramesStillDecode) {
  // 32 MiB of zeros compress to a few KiB: the declared size is then not trusted for the
  // up-front allocation, and the streaming path still gives the right result.
  const std::string zeros(std::size_t{32} << 20, '\0');
  const std::string frame = zstd_compress(zeros, 1);
  EXPECT_EQ(zstd_decompress(frame, zeros.size()), zeros);
  expect_error(errc::decode_error, "limit", [&] { (void)zstd_decompress(frame, zeros.size() - 1); });
}

TEST(Zstd, CorruptInputIsADecodeError) {
  const std::string data = compressible_bytes(50000);
  const std::string frame = zstd_compress(data);
  expect_error(errc::decode_error, "zstd frame: empty input", [&] { (void)zstd_decompress("", 100); });
  expect_error(errc::decode_error, "not a zstd frame", [&] { (void)zstd_decompress("not zstd at all", 100); });
  expect_error(errc::decode_error, "zstd frame", [&] { (void)zstd_decompress(frame.substr(0, 3), 1 << 20); });
  for (const std::string& f : {frame, streaming_frame(data)}) {
    for (std::size_t cut : {std::size_t{6}, f.size() / 2, f.size() - 1}) {
      expect_error(errc::decode_error, "zstd frame", [&] { (void)zstd_decompress(f.substr(0, cut), 1 << 20); });
    }
  }
  std::string trailing_garbage = frame + "garbage!";
  expect_error(errc::decode_error, "zstd frame", [&] { (void)zstd_decompress(trailing_garbage, 1 << 20); });
}

TEST(Zstd, RandomCorruptionNeverCrashes) {
  const std::string data = compressible_bytes(20000) + random_bytes(2000, 5);
  std::mt19937 rng(42);
  for (const std::string& frame : {zstd_compress(data), streaming_frame(data)}) {
    for (int round = 0; round < 500; ++round) {
      std::string bytes = frame;
      bytes[rng() % bytes.size()] = static_cast<char>(rng() & 0xFF);
      try {
        const std::string out = zstd_decompress(bytes, data.size() + 100);
        EXPECT_LE(out.size(), data.size() + 100);
      } catch (const error& e) {
        EXPECT_EQ(e.code(), make_error_code(errc::decode_error)) << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace tinker
