// Splitting a forward_backward batch into chunks (doc/training.md#chunking) by the 0.25.0 byte estimate (7.3).
#include "client/training/chunking.hpp"
#include "support/expect_error.hpp"

#include <tinker/error.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <type_traits>
#include <utility>
#include <vector>

namespace tinker::client::training {
namespace {

using ::testing::HasSubstr;

// A text datum of `tokens` tokens with int64 target_tokens and float32 weights of the same
// length: 4 + 8 + 4 = 16 estimated bytes per token.
Datum text_datum(int tokens, std::int32_t first_token = 1) {
  std::vector<TokenId> ids;
  std::vector<std::int64_t> targets;
  for (int i = 0; i < tokens; ++i) {
    ids.push_back(first_token + i);
    targets.push_back(first_token + i + 1);
  }
  LossFnInputs inputs;
  inputs["target_tokens"] = TensorData(targets);
  inputs["weights"] = TensorData(std::vector<float>(static_cast<std::size_t>(tokens), 1.0F));
  return Datum(ModelInput::from_ints(ids), inputs);
}

std::vector<Datum> batch_of(const std::vector<int>& token_counts) {
  std::vector<Datum> data;
  for (const int count : token_counts) data.push_back(text_datum(count, static_cast<std::int32_t>(data.size()) * 100));
  return data;
}

std::vector<DatumRange> ranges(std::initializer_list<std::pair<std::size_t, std::size_t>> bounds) {
  std::vector<DatumRange> out;
  for (const auto& [begin, end] : bounds) out.emplace_back(begin, end);
  return out;
}

TEST(ChunkLimits, DefaultsAreTheServiceFlags) {
  static_assert(!std::is_aggregate_v<ChunkLimits>);
  static_assert(!std::is_aggregate_v<DatumRange>);
  const ChunkLimits limits;
  EXPECT_EQ(limits.max_datums, 1024);
  EXPECT_EQ(limits.max_bytes, 5'000'000);
}

TEST(EstimateDatumBytes, TextTokensAndDenseTensors) {
  EXPECT_EQ(estimate_datum_bytes(text_datum(1)), 16);
  EXPECT_EQ(estimate_datum_bytes(text_datum(10)), 160);
  EXPECT_EQ(estimate_datum_bytes(Datum()), 0);
}

TEST(EstimateDatumBytes, NonTextChunksCountTheirRawBytes) {
  ModelInput input;
  input.append(EncodedTextChunk(std::vector<TokenId>{1, 2, 3}));                           // 12
  input.append(ImageChunk(std::vector<std::uint8_t>(100, 7), ImageFormat::png, 16));       // 100
  input.append(ImageAssetPointerChunk("s3://bucket/cat.png", ImageFormat::png, 16));       // 19
  input.append(DmelChunk(std::vector<std::uint8_t>{0x01, 0x02, 0x05, 0x03, 0, 0, 0, 0}));  // 8
  EXPECT_EQ(estimate_datum_bytes(Datum(input, {})), 12 + 100 + 19 + 8);
}

TEST(EstimateDatumBytes, SparseTensorsCountNonZerosAndIndices) {
  // 3x4 CSR with 2 non-zeros: 2 float values * 4 + 8 * (4 crow + 2 col) = 56.
  LossFnInputs inputs;
  inputs["weights"] = TensorData::sparse_csr(std::vector<float>{0.5F, 1.5F}, 3, 4, {0, 1, 1, 2}, {2, 3});
  EXPECT_EQ(estimate_datum_bytes(Datum(ModelInput(), inputs)), 56);
  // The same values as int64: 2 * 8 + 48 = 64.
  inputs["weights"] = TensorData::sparse_csr(std::vector<std::int64_t>{5, 6}, 3, 4, {0, 1, 1, 2}, {2, 3});
  EXPECT_EQ(estimate_datum_bytes(Datum(ModelInput(), inputs)), 64);
}

TEST(SplitIntoChunks, ByCountAtAndPastTheBoundary) {
  const auto four = batch_of({1, 1, 1, 1});
  EXPECT_EQ(split_into_chunks(four, ChunkLimits(2, 1'000'000)), ranges({{0, 2}, {2, 4}}));  // exact: no empty tail
  const auto five = batch_of({1, 1, 1, 1, 1});
  EXPECT_EQ(split_into_chunks(five, ChunkLimits(2, 1'000'000)), ranges({{0, 2}, {2, 4}, {4, 5}}));
  EXPECT_EQ(split_into_chunks(five, ChunkLimits(5, 1'000'000)), ranges({{0, 5}}));
  EXPECT_EQ(split_into_chunks(five, ChunkLimits(1, 1'000'000)), ranges({{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}}));
}

TEST(SplitIntoChunks, ByBytesAtAndPastTheBoundary) {
  const auto data = batch_of({1, 1, 1, 1});  // 16 bytes each
  // 16 + 16 == 32 fits exactly; the third datum would exceed it.
  EXPECT_EQ(split_into_chunks(data, ChunkLimits(1024, 32)), ranges({{0, 2}, {2, 4}}));
  EXPECT_EQ(split_into_chunks(data, ChunkLimits(1024, 31)), ranges({{0, 1}, {1, 2}, {2, 3}, {3, 4}}));
  EXPECT_EQ(split_into_chunks(data, ChunkLimits(1024, 48)), ranges({{0, 3}, {3, 4}}));
  EXPECT_EQ(split_into_chunks(data, ChunkLimits(1024, 64)), ranges({{0, 4}}));
}

TEST(SplitIntoChunks, MixedSizesCloseWhicheverLimitComesFirst) {
  const auto data = batch_of({2, 1, 1, 4, 1});  // 32, 16, 16, 64, 16 bytes
  // [0, 2) closes by count (48 bytes), [2, 3) and [3, 4) close by bytes (16 + 64, 64 + 16 > 64).
  EXPECT_EQ(split_into_chunks(data, ChunkLimits(2, 64)), ranges({{0, 2}, {2, 3}, {3, 4}, {4, 5}}));
}

TEST(SplitIntoChunks, OversizeDatumFormsItsOwnChunk) {
  EXPECT_EQ(split_into_chunks(batch_of({1, 10, 1}), ChunkLimits(1024, 32)), ranges({{0, 1}, {1, 2}, {2, 3}}));
  EXPECT_EQ(split_into_chunks(batch_of({10, 1, 1}), ChunkLimits(1024, 32)), ranges({{0, 1}, {1, 3}}));
  EXPECT_EQ(split_into_chunks(batch_of({10}), ChunkLimits(1024, 32)), ranges({{0, 1}}));
  EXPECT_EQ(split_into_chunks(batch_of({10, 10}), ChunkLimits(1024, 32)), ranges({{0, 1}, {1, 2}}));
}

TEST(SplitIntoChunks, RefusesEmptyDataAndBadLimits) {
  const std::vector<Datum> empty;
  test::expect_tinker_error(errc::invalid_argument, "No data provided",
                            [&] { split_into_chunks(empty, ChunkLimits()); });
  const auto data = batch_of({1});
  test::expect_tinker_error(errc::invalid_configuration, "fwdbwd_max_chunk_len",
                            [&] { split_into_chunks(data, ChunkLimits(0, 100)); });
  test::expect_tinker_error(errc::invalid_configuration, "fwdbwd_max_chunk_bytes_count",
                            [&] { split_into_chunks(data, ChunkLimits(10, 0)); });
}

TEST(TakeChunkInputs, MovesDatumsAndCopiesTheLoss) {
  const auto original = batch_of({1, 2, 3, 4, 5});
  LossFnConfig config;
  config["clip_low_threshold"] = 0.7;
  ForwardBackwardInput input(original, loss_fn::ppo, config);
  const auto bounds = ranges({{0, 2}, {2, 3}, {3, 5}});
  const auto chunks = take_chunk_inputs(std::move(input), bounds);
  ASSERT_EQ(chunks.size(), 3U);
  EXPECT_EQ(chunks[0].data, std::vector<Datum>(original.begin(), original.begin() + 2));
  EXPECT_EQ(chunks[1].data, std::vector<Datum>(original.begin() + 2, original.begin() + 3));
  EXPECT_EQ(chunks[2].data, std::vector<Datum>(original.begin() + 3, original.end()));
  for (const auto& chunk : chunks) {
    EXPECT_EQ(chunk.loss_fn, loss_fn::ppo);
    EXPECT_EQ(chunk.loss_fn_config, config);
  }
}

TEST(TakeChunkInputs, BadRangesLoseNothing) {
  const auto original = batch_of({1, 2, 3});
  ForwardBackwardInput input(original, loss_fn::cross_entropy);
  const auto outside = ranges({{0, 2}, {2, 4}});
  test::expect_tinker_error(errc::invalid_argument, "[2, 4)", [&] { take_chunk_inputs(std::move(input), outside); });
  EXPECT_EQ(input.data, original);  // validated before anything was moved
  const auto overlapping = ranges({{0, 2}, {1, 3}});
  test::expect_tinker_error(errc::invalid_argument, "out of order",
                            [&] { take_chunk_inputs(std::move(input), overlapping); });
  EXPECT_EQ(input.data, original);
}

TEST(ChunkSubmissionOrder, FirstChunkGoesLast) {
  EXPECT_EQ(chunk_submission_order(1), std::vector<std::size_t>({0}));
  EXPECT_EQ(chunk_submission_order(2), std::vector<std::size_t>({1, 0}));
  EXPECT_EQ(chunk_submission_order(4), std::vector<std::size_t>({1, 2, 3, 0}));
  EXPECT_TRUE(chunk_submission_order(0).empty());
  // Chunk i keeps seq_id base + i whatever its submission position: chunk 0 has the lowest id,
  // so the server (which holds later ids until every earlier one arrived) runs it first.
  const std::int64_t base = 7;
  std::vector<std::int64_t> seq_ids_in_submission_order;
  for (const std::size_t index : chunk_submission_order(3))
    seq_ids_in_submission_order.push_back(chunk_seq_id(base, index));
  EXPECT_EQ(seq_ids_in_submission_order, std::vector<std::int64_t>({8, 9, 7}));
}

}  // namespace
}  // namespace tinker::client::training
