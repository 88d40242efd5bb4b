#include <tinker/error.hpp>
#include <tinker/types/datum.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace tinker {
namespace {

TEST(ModelInput, HelpersMirrorThePythonSdk) {
  ModelInput input = ModelInput::from_ints({1, 2, 3});
  EXPECT_FALSE(input.empty());
  EXPECT_EQ(input.length(), 3);
  input.append_int(4);
  EXPECT_EQ(input.chunks.size(), 2u);  // append_int adds a new chunk
  EXPECT_EQ(input.to_ints(), (std::vector<TokenId>{1, 2, 3, 4}));
  input.append(ImageChunk({1, 2}, ImageFormat::jpeg, 10));
  EXPECT_EQ(input.length(), 14);
  EXPECT_THROW((void)input.to_ints(), error);
  EXPECT_TRUE(ModelInput().empty());
}

TEST(ModelInput, ImageWithoutExpectedTokensHasNoLength) {
  ModelInput input;
  input.append(ImageAssetPointerChunk("s3://x", ImageFormat::png));
  EXPECT_THROW((void)input.length(), error);
}

TEST(DmelChunk, LengthComesFromTheTensorContainerHeader) {
  EXPECT_EQ(DmelChunk({0x01, 0x02, 0x05, 0x03}).length(), 5);
  EXPECT_EQ(DmelChunk({0xFE, 0x01, 0x01, 0x96, 0x01}).length(), 150);  // constant marker, varint 150
  EXPECT_THROW((void)DmelChunk(std::vector<std::uint8_t>{}).length(), error);
  EXPECT_THROW((void)DmelChunk({0x09, 0x01, 0x01}).length(), error);  // dtype > 7
  EXPECT_THROW((void)DmelChunk({0x01, 0x01, 0x80}).length(), error);  // truncated varint
}

TEST(TensorData, ConstructorsAndAccessors) {
  const TensorData floats = TensorData::from_floats(std::vector<float>{1, 2});
  EXPECT_EQ(floats.dtype(), DType::float32);
  EXPECT_EQ(floats.effective_shape(), (std::vector<std::int64_t>{2}));
  EXPECT_THROW((void)floats.ints(), error);
  const std::vector<TokenId> tokens{5, 6};
  const TensorData targets = TensorData::from_tokens(tokens);
  EXPECT_EQ(targets.dtype(), DType::int64);
  EXPECT_EQ(targets.ints()[1], 6);
  EXPECT_STREQ(to_string(targets.dtype()), "int64");
}

TEST(TensorData, SparseCsrExpandsToDense) {
  const TensorData sparse = TensorData::sparse_csr(std::vector<float>{1.5f, -2.0f, 3.0f}, 2, 3, {0, 2, 3}, {0, 2, 1});
  EXPECT_TRUE(sparse.is_sparse());
  EXPECT_EQ(sparse.stored_size(), 3u);
  EXPECT_EQ(sparse.to_dense_floats(), (std::vector<float>{1.5f, 0, -2.0f, 0, 3.0f, 0}));
  EXPECT_EQ(sparse.to_dense_ints(), (std::vector<std::int64_t>{1, 0, -2, 0, 3, 0}));
  EXPECT_THROW((void)TensorData::sparse_csr(std::vector<float>{1}, 2, 3, {0, 1}, {0}), error);  // crow too short
}

TEST(TensorData, ValidateNamesTheFieldAndTheProblem) {
  TensorData bad(std::vector<float>{1, NAN});
  try {
    bad.validate("data[2].loss_fn_inputs.weights");
    FAIL();
  } catch (const error& e) {
    EXPECT_EQ(e.diag().message, "data[2].loss_fn_inputs.weights: data[1] is NaN (JSON cannot carry NaN or infinity)");
  }
  EXPECT_THROW(TensorData(std::vector<float>{1, 2}, std::vector<std::int64_t>{3}).validate("t"), error);
  EXPECT_THROW(TensorData(std::vector<float>{1}, std::vector<std::int64_t>{-1}).validate("t"), error);
  EXPECT_NO_THROW(TensorData(std::vector<float>{1, 2, 3, 4, 5, 6}, std::vector<std::int64_t>{2, 3}).validate("t"));
}

}  // namespace
}  // namespace tinker
