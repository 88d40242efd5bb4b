// A forward_backward body as a spine plus runs borrowed from the batch: flattened, it is the
// ordinary protobuf encoding byte for byte, and every run is one of the batch's own arrays.
#include "core/wire/borrowed_runs.hpp"

#include <tinker/codec.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace tinker::wire {
namespace {

TEST(BorrowedRuns, FlattenPutsEachRunBeforeItsSpineOffset) {
  const std::string spine = "abcdef";
  const std::vector<BorrowedRun> runs{{0, "<0>"}, {2, "<2>"}, {2, "<2'>"}, {6, "<6>"}};
  EXPECT_EQ(flatten(spine, runs), "<0>ab<2><2'>cdef<6>");
  EXPECT_EQ(gathered_size(spine, runs), 19u);
  EXPECT_EQ(flatten(spine, {}), spine);
  EXPECT_EQ(flatten("", std::vector<BorrowedRun>{{0, "x"}}), "x");
}

// Arrays on both sides of min_borrowed_run (in bytes) in every place the encoder copies arrays
// from: text tokens, image bytes, dmel bytes, dense int64 and float32 tensors, CSR values and
// indices. Empty arrays and small ones stay in the spine.
ForwardBackwardRequest request_near_the_threshold(std::mt19937& rng) {
  const auto around = [&](std::size_t bytes_per_value) {
    const std::size_t limit = min_borrowed_run / bytes_per_value;
    return limit - 2 + rng() % 5;  // limit-2 .. limit+2 values
  };
  std::vector<Datum> data;
  for (int d = 0; d < 6; ++d) {
    Datum datum;
    std::vector<TokenId> tokens(around(sizeof(TokenId)));
    for (auto& t : tokens) t = static_cast<TokenId>(rng());
    datum.model_input.chunks.push_back(EncodedTextChunk(tokens));
    std::vector<std::uint8_t> bytes(around(1));
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
    datum.model_input.chunks.push_back(ImageChunk(bytes, ImageFormat::png, 4));
    datum.model_input.chunks.push_back(DmelChunk(bytes));
    datum.model_input.chunks.push_back(EncodedTextChunk(std::vector<TokenId>{}));
    std::vector<std::int64_t> targets(around(8));
    for (auto& t : targets) t = static_cast<std::int64_t>(rng());
    std::vector<float> weights(around(4), 0.5F);
    datum.loss_fn_inputs.insert_or_assign("target_tokens", TensorData(targets));
    datum.loss_fn_inputs.insert_or_assign("weights", TensorData(weights));
    TensorData sparse = TensorData(std::vector<float>(around(4), 1.0F));
    const auto rows = static_cast<std::int64_t>(std::get<std::vector<float>>(sparse.values).size());
    sparse.shape = std::vector<std::int64_t>{rows, 2};
    sparse.sparse_crow_indices = std::vector<std::int64_t>(static_cast<std::size_t>(rows) + 1);
    for (std::int64_t r = 0; r <= rows; ++r) (*sparse.sparse_crow_indices)[static_cast<std::size_t>(r)] = r;
    sparse.sparse_col_indices = std::vector<std::int64_t>(static_cast<std::size_t>(rows), 1);
    datum.loss_fn_inputs.insert_or_assign("advantages", sparse);
    data.push_back(std::move(datum));
  }
  return ForwardBackwardRequest("model-1", 7, ForwardBackwardInput(std::move(data), "cross_entropy"));
}

// The start of every array of `request` the encoder may borrow.
std::set<const char*> array_starts(const ForwardBackwardRequest& request) {
  std::set<const char*> starts;
  const auto add = [&](const auto& array) { starts.insert(reinterpret_cast<const char*>(array.data())); };
  for (const Datum& datum : request.forward_backward_input.data) {
    for (const ModelInputChunk& chunk : datum.model_input.chunks) {
      if (const auto* text = std::get_if<EncodedTextChunk>(&chunk)) add(text->tokens);
      if (const auto* image = std::get_if<ImageChunk>(&chunk)) add(image->data);
      if (const auto* dmel = std::get_if<DmelChunk>(&chunk)) add(dmel->dmel);
    }
    for (const auto& [name, tensor] : datum.loss_fn_inputs) {
      std::visit(add, tensor.values);
      if (tensor.sparse_crow_indices) add(*tensor.sparse_crow_indices);
      if (tensor.sparse_col_indices) add(*tensor.sparse_col_indices);
    }
  }
  return starts;
}

TEST(BorrowedRuns, ProtobufRequestFlattensToTheOrdinaryEncoding) {
  std::mt19937 rng(15);  // fixed seed: reproducible
  for (int i = 0; i < 40; ++i) {
    const ForwardBackwardRequest request = request_near_the_threshold(rng);
    std::vector<BorrowedRun> runs{{1, "left over from an earlier call"}};
    const std::string spine = to_protobuf_borrowing(request, runs);
    ASSERT_EQ(flatten(spine, runs), to_protobuf(request)) << "request " << i;
    ASSERT_FALSE(runs.empty());
    const std::set<const char*> starts = array_starts(request);
    std::size_t previous_at = 0;
    for (const BorrowedRun& run : runs) {
      EXPECT_GE(run.bytes.size(), min_borrowed_run);
      EXPECT_TRUE(starts.contains(run.bytes.data())) << "a run that is not one of the batch's arrays";
      EXPECT_GE(run.at, previous_at);
      EXPECT_LE(run.at, spine.size());
      previous_at = run.at;
    }
  }
}

TEST(BorrowedRuns, ASmallBatchIsAllSpine) {
  const ForwardBackwardRequest request(
      "m", 1,
      ForwardBackwardInput({Datum(ModelInput::from_ints({1, 2, 3}), {{"weights", TensorData(std::vector<float>{1})}})},
                           "cross_entropy"));
  std::vector<BorrowedRun> runs;
  EXPECT_EQ(to_protobuf_borrowing(request, runs), to_protobuf(request));
  EXPECT_TRUE(runs.empty());
}

}  // namespace
}  // namespace tinker::wire
