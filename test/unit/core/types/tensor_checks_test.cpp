// The checks every forward_backward batch passes before it is encoded: the block-wise finiteness
// scan and the path-free problem text the training client turns into a field-path error.
#include "core/types/tensor_checks.hpp"

#include <tinker/error.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace tinker::detail {
namespace {

TEST(FirstNonFinite, FindsTheFirstBadValueWhereverItIs) {
  // Positions in the first block, on both sides of a block boundary (blocks of 64), in the tail.
  for (const std::size_t size : {std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{65}, std::size_t{200}}) {
    for (std::size_t at = 0; at < size; ++at) {
      for (const float bad : {NAN, -NAN, INFINITY, -INFINITY}) {
        std::vector<float> values(size, 1.0f);
        values[at] = bad;
        if (at + 1 < size) values[size - 1] = NAN;  // a later bad value must not hide the first
        ASSERT_EQ(first_non_finite(values), static_cast<std::ptrdiff_t>(at)) << "size " << size << " at " << at;
      }
    }
  }
}

TEST(FirstNonFinite, AcceptsEveryFiniteExtreme) {
  const std::vector<float> values{0.0f,
                                  -0.0f,
                                  std::numeric_limits<float>::max(),
                                  std::numeric_limits<float>::lowest(),
                                  std::numeric_limits<float>::min(),
                                  std::numeric_limits<float>::denorm_min(),
                                  -std::numeric_limits<float>::denorm_min()};
  std::vector<float> many;
  for (int i = 0; i < 40; ++i) many.insert(many.end(), values.begin(), values.end());
  EXPECT_EQ(first_non_finite(many), -1);
  EXPECT_EQ(first_non_finite({}), -1);
}

TEST(TensorProblem, IsValidateMessageWithoutThePath) {
  const TensorData bad(std::vector<float>{1, 2, INFINITY});
  EXPECT_EQ(tensor_problem(bad), "data[2] is infinite (JSON cannot carry NaN or infinity)");
  try {
    bad.validate("data[0].loss_fn_inputs.weights");
    FAIL();
  } catch (const error& e) {
    EXPECT_EQ(e.diag().message, "data[0].loss_fn_inputs.weights: " + tensor_problem(bad));
  }
  EXPECT_EQ(tensor_problem(TensorData(std::vector<float>{1, 2}, std::vector<std::int64_t>{3})),
            "shape [3] has 3 elements but data has 2 values");
  EXPECT_EQ(tensor_problem(TensorData(std::vector<std::int64_t>{1, 2, 3})), "");
}

}  // namespace
}  // namespace tinker::detail
