// The LoRA deltas of one base tensor, checked and prepared once, then added to any range of its
// rows. A target of shape [..., L] is seen as rows of length L (a 3-D expert tensor [E, X, L] as
// E * X rows), so the merge engine can convert, merge and write a tensor a few megabytes at a
// time, and apply_merge_ops (lora_plan.hpp) is this over the whole tensor.
#pragma once

#include "weights/lora_plan.hpp"

#include <tinker/error.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tinker::weights::detail {

/// Working memory of TargetMerge::add_to_rows; one per thread, reused across calls.
struct MergeScratch {
  std::vector<float> coefficients;
  std::vector<float> delta;
};

class TargetMerge {
 public:
  /// Checks every op against the target `name` of shape `shape` (2-D, or 3-D for experts) as the
  /// cookbook does (apply_merge_op and validate_merge_op_shapes of tinker_cookbook/weights/_merge.py)
  /// and prepares it. Throws errc::invalid_argument naming the target and the adapter tensor when
  /// a shape does not fit.
  TargetMerge(std::string name, std::span<const std::int64_t> shape, const std::vector<MergeOp>& ops);

  const std::string& name() const noexcept { return name_; }
  /// Row length: the last dimension.
  std::int64_t row_length() const noexcept { return row_length_; }
  /// Number of rows: the product of the other dimensions.
  std::int64_t rows() const noexcept { return rows_; }

  /// Adds every op's delta to rows [first_row, first_row + values.size() / row_length()) of the
  /// target, given as f32 in `values`. Each op's delta is summed in f32 and then added, op by op in
  /// plan order, so the result of a row does not depend on how the rows are split into calls.
  void add_to_rows(std::span<float> values, std::int64_t first_row, MergeScratch& scratch) const;

 private:
  // One op as a low-rank product over target rows: row i of expert block e gets
  //   sum over k of coefficient(e, i, k) * vector(e, k)[0 .. delta_length)
  // added at columns column_offset + j * column_stride. The coefficients and vectors come from A
  // or from the op's own copy of scale * B (Factor::a / Factor::scaled_b); either side may have
  // one block that every expert shares.
  enum class Factor { a, scaled_b };
  struct FactorView {
    Factor factor = Factor::a;
    std::int64_t offset = 0;        // elements before block 0
    std::int64_t blocks = 1;        // 1: shared by every expert
    std::int64_t block_stride = 0;  // elements between blocks
    std::int64_t row_stride = 0;    // coefficients: between target rows (unused for vectors)
    std::int64_t rank_stride = 0;   // between ranks
  };
  struct PreparedOp {
    std::int64_t experts = 1;          // blocks of rows_per_expert rows (1 for a 2-D target)
    std::int64_t rows_per_expert = 0;  // target rows per block
    std::int64_t first_row = 0;        // rows [first_row, first_row + row_count) of each block
    std::int64_t row_count = 0;
    std::int64_t rank = 0;
    std::int64_t delta_length = 0;
    std::int64_t column_offset = 0;
    std::int64_t column_stride = 1;
    FactorView coefficients;
    FactorView vectors;
    std::shared_ptr<const FloatTensor> a;
    std::vector<float> scaled_b;  // scale * B as [E, out, r], or transposed to [E, r, out]
  };

  // The factors' sizes: A [a_experts, rank, in], B [b_experts, out, rank] (2-D: one expert).
  struct Dims {
    std::int64_t a_experts = 1;
    std::int64_t rank = 0;
    std::int64_t in = 0;
    std::int64_t b_experts = 1;
    std::int64_t out = 0;
  };

  PreparedOp prepare(const MergeOp& op) const;
  void prepare_matrix_op(const MergeOp& op, const Dims& dims, PreparedOp& prepared) const;
  void prepare_expert_op(const MergeOp& op, const Dims& dims, PreparedOp& prepared) const;
  static void use_rows_of_a(const MergeOp& op, const Dims& dims, std::int64_t b_first, std::int64_t b_blocks,
                            std::int64_t a_first, std::int64_t a_blocks, PreparedOp& prepared);
  static void use_rows_of_bt(const MergeOp& op, const Dims& dims, PreparedOp& prepared);
  error misfit(const MergeOp& op, const std::string& why) const;
  void add_op_to_rows(const PreparedOp& op, std::span<float> values, std::int64_t first_row,
                      MergeScratch& scratch) const;

  std::string name_;
  std::vector<std::int64_t> shape_;
  std::int64_t row_length_ = 0;
  std::int64_t rows_ = 0;
  std::vector<PreparedOp> ops_;
};

}  // namespace tinker::weights::detail
